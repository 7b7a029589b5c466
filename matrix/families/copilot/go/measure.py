"""github.com/github/copilot-sdk/go: one agent binary built against each release runs every
probe (``rule`` in its config selects the tolerance probe, ``probe`` the session)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from matrix.execute import proc
from matrix.families.copilot.agent_run import AgentCommand, AgentRun
from matrix.families.copilot.cli import CliInstall, Runtime
from matrix.families.copilot.compiled import compile_error_row as compiled_error_row
from matrix.families.copilot.compiled import run_compiled_batch, run_compiled_handshake, run_compiled_probe
from matrix.families.copilot.go.environment import GoAgent
from matrix.families.copilot.handshake import HandshakeCell
from matrix.families.copilot.payload import SESSION
from matrix.model import Row

__all__ = ["compile_error_row", "run_go_handshake", "run_go_session", "run_go_tolerance", "run_go_tolerance_batch"]


def compile_error_row(cell: HandshakeCell, probe: str, mutation: str, agent: GoAgent, cli: CliInstall,
                      runtime: Runtime) -> Row:
    return compiled_error_row(cell, probe, mutation, agent.build_errors or "", agent.binary, cli, runtime)


def run_go_handshake(cell: HandshakeCell, agent: GoAgent, cli: CliInstall, runtime: Runtime,
                     reaper: proc.Reaper | None = None) -> Row:
    """The agent binary built against this version; a version it does not compile against is
    ``crashed`` with the compiler's messages (the SDK's API changed under the agent)."""
    variant = agent.location / "variant.txt"

    def extra(run: AgentRun) -> dict[str, Any]:
        out: dict[str, Any] = {"go_variant": variant.read_text() if variant.exists() else None}
        if run.report:
            out.update(spawned=run.report.launched[:5], ping_protocol=run.report.extra.get("ping_protocol"))
        return out

    return run_compiled_handshake(cell, AgentCommand((str(agent.binary),)), agent.build_errors, agent.binary, cli,
                                  runtime, reaper, extra, sdk_dir=agent.module_dir)

def run_go_tolerance(cell: HandshakeCell, rule: str, agent: GoAgent, cli: CliInstall, runtime: Runtime,
                     results: Path, reaper: proc.Reaper | None = None) -> Row:
    if agent.build_errors is not None:
        return compile_error_row(cell, "tolerance", rule, agent, cli, runtime)
    return run_compiled_probe(cell, "tolerance", rule, AgentCommand((str(agent.binary),)),
                              {"sdk_dir": agent.module_dir, "log_level": "error"}, cli, runtime, results, reaper)


def run_go_tolerance_batch(cell: HandshakeCell, rules: Sequence[str], agent: GoAgent, cli: CliInstall,
                           runtime: Runtime, results: Path, reaper: proc.Reaper | None = None) -> dict[str, Row]:
    if agent.build_errors is not None:
        return {}  # each rule alone then records the compiler's words
    return run_compiled_batch(cell, rules, AgentCommand((str(agent.binary),)),
                              {"sdk_dir": agent.module_dir, "log_level": "error"}, cli, runtime, results, reaper)


def run_go_session(cell: HandshakeCell, agent: GoAgent, cli: CliInstall, runtime: Runtime, results: Path,
                   reaper: proc.Reaper | None = None) -> Row:
    if agent.build_errors is not None:
        return compile_error_row(cell, SESSION, "", agent, cli, runtime)
    return run_compiled_probe(cell, SESSION, "", AgentCommand((str(agent.binary),)),
                              {"sdk_dir": agent.module_dir, "log_level": "error"}, cli, runtime, results, reaper)
