"""com.github:copilot-sdk-java: one agent compiled against each release runs every probe
(``rule`` in its config selects the tolerance probe, ``probe`` the session); a release it does
not compile against is that verdict for every probe."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from matrix.execute import proc
from matrix.families.copilot.agent_run import AgentCommand, AgentRun
from matrix.families.copilot.cli import CliInstall, Runtime
from matrix.families.copilot.compiled import (
    compile_error_row,
    run_compiled_batch,
    run_compiled_handshake,
    run_compiled_probe,
)
from matrix.families.copilot.handshake import HandshakeCell
from matrix.families.copilot.java.environment import JavaAgent
from matrix.families.copilot.payload import SESSION
from matrix.model import Row

__all__ = ["run_java_handshake", "run_java_session", "run_java_tolerance", "run_java_tolerance_batch"]

# What every probe's agent reads besides the probe's own settings: the CLI quiet but for errors.
_AGENT_CFG: dict[str, Any] = {"log_level": "error"}


def _build_error_row(cell: HandshakeCell, probe: str, mutation: str, agent: JavaAgent, cli: CliInstall,
                     runtime: Runtime) -> Row:
    # The class path is resolved before the agent compiles: it is there when javac failed too.
    return compile_error_row(cell, probe, mutation, agent.build_errors or "", agent.classes, cli, runtime)


def run_java_handshake(cell: HandshakeCell, agent: JavaAgent, cli: CliInstall, runtime: Runtime,
                       reaper: proc.Reaper | None = None) -> Row:
    def extra(run: AgentRun) -> dict[str, Any]:
        return {"ping_protocol": run.report.extra.get("ping_protocol")} if run.report else {}

    return run_compiled_handshake(cell, AgentCommand(agent.command()), agent.build_errors, agent.classes, cli,
                                  runtime, reaper, extra)


def run_java_tolerance(cell: HandshakeCell, rule: str, agent: JavaAgent, cli: CliInstall, runtime: Runtime,
                       results: Path, reaper: proc.Reaper | None = None) -> Row:
    if agent.build_errors is not None:
        return _build_error_row(cell, "tolerance", rule, agent, cli, runtime)
    return run_compiled_probe(cell, "tolerance", rule, AgentCommand(agent.command()), _AGENT_CFG, cli, runtime,
                              results, reaper)


def run_java_tolerance_batch(cell: HandshakeCell, rules: Sequence[str], agent: JavaAgent, cli: CliInstall,
                             runtime: Runtime, results: Path, reaper: proc.Reaper | None = None) -> dict[str, Row]:
    if agent.build_errors is not None:
        return {}  # each rule alone then records the compiler's words
    return run_compiled_batch(cell, rules, AgentCommand(agent.command()), _AGENT_CFG, cli, runtime, results, reaper)


def run_java_session(cell: HandshakeCell, agent: JavaAgent, cli: CliInstall, runtime: Runtime, results: Path,
                     reaper: proc.Reaper | None = None) -> Row:
    if agent.build_errors is not None:
        return _build_error_row(cell, SESSION, "", agent, cli, runtime)
    return run_compiled_probe(cell, SESSION, "", AgentCommand(agent.command()), _AGENT_CFG, cli, runtime, results,
                              reaper)
