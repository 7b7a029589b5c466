"""The crate github-copilot-sdk: one agent binary built against each release runs every probe
(the handshake's stop measured as a rate, as every Copilot family's; ``rule`` in its config
selects the tolerance probe, ``probe`` the session)."""

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
from matrix.families.copilot.handshake import HandshakeCell, build_row
from matrix.families.copilot.payload import SESSION
from matrix.families.copilot.rust.environment import NO_LIBRARY, NO_PROBES, RustAgent
from matrix.model import Outcome, Row
from matrix.probes.report import ErrorInfo
from matrix.probes.verdict import Verdict

__all__ = ["build_error_row", "probes_not_built_row", "run_rust_handshake", "run_rust_session",
           "run_rust_tolerance", "run_rust_tolerance_batch"]


def build_error_row(cell: HandshakeCell, probe: str, mutation: str, agent: RustAgent, cli: CliInstall,
                    runtime: Runtime) -> Row | None:
    """The row of any probe of a release the agent did not build against (None: it did):
    ``crashed`` with the compiler's messages, which say whether the crate itself does not
    compile or the agent does not against it; a release with no library at all (a placeholder)
    is ``not-applicable``, as the compiler said."""
    errors = agent.build_errors
    if errors is None:
        return None
    if errors.endswith(NO_LIBRARY):
        run = AgentRun(None, proc.Result((str(agent.binary),), 1, "", errors, 0.0, 0.0, False), [], [])
        return build_row(cell, probe, mutation, run, Verdict(Outcome.NOT_APPLICABLE, ErrorInfo(
            "NoLibrary", f"{agent.package} {agent.version}: {NO_LIBRARY}")), runtime, cli)
    return compile_error_row(cell, probe, mutation, errors, agent.binary, cli, runtime)


def probes_not_built_row(cell: HandshakeCell, probe: str, mutation: str, agent: RustAgent, cli: CliInstall,
                         runtime: Runtime) -> Row | None:
    """The session or tolerance row of a release whose agent was built for the handshake alone
    (None: it runs every probe): not-applicable with the compiler's words about the session code,
    and no CLI started for it."""
    errors = agent.probes_build_errors
    if errors is None:
        return None
    run = AgentRun(None, proc.Result((str(agent.binary),), 0, "", errors, 0.0, 0.0, False), [], [])
    return build_row(cell, probe, mutation, run, Verdict(Outcome.NOT_APPLICABLE, ErrorInfo(
        "AgentApiDiffers", f"{agent.package} {agent.version}: {NO_PROBES}\n{errors.strip()[-1500:]}")), runtime, cli)


def _not_run_row(cell: HandshakeCell, probe: str, mutation: str, agent: RustAgent, cli: CliInstall,
                 runtime: Runtime) -> Row | None:
    """The session or tolerance row of a release the agent cannot run this probe for: no agent
    at all, or one built for the handshake alone (None: the probe runs)."""
    return (build_error_row(cell, probe, mutation, agent, cli, runtime)
            or probes_not_built_row(cell, probe, mutation, agent, cli, runtime))


def run_rust_handshake(cell: HandshakeCell, agent: RustAgent, cli: CliInstall, runtime: Runtime,
                       reaper: proc.Reaper | None = None) -> Row:
    failed = build_error_row(cell, "handshake", "", agent, cli, runtime)
    if failed is not None:
        return failed
    variant = agent.location / "variant.txt"

    def extra(run: AgentRun) -> dict[str, Any]:
        return {"features": variant.read_text() if variant.exists() else None,
                **({"ping_protocol": run.report.extra.get("ping_protocol")} if run.report else {})}

    return run_compiled_handshake(cell, AgentCommand((str(agent.binary),)), None, agent.binary, cli,
                                  runtime, reaper, extra, sdk_dir=agent.sdk_dir)


def run_rust_tolerance(cell: HandshakeCell, rule: str, agent: RustAgent, cli: CliInstall, runtime: Runtime,
                       results: Path, reaper: proc.Reaper | None = None) -> Row:
    failed = _not_run_row(cell, "tolerance", rule, agent, cli, runtime)
    if failed is not None:
        return failed
    return run_compiled_probe(cell, "tolerance", rule, AgentCommand((str(agent.binary),)), {"sdk_dir": agent.sdk_dir},
                              cli, runtime, results, reaper)


def run_rust_tolerance_batch(cell: HandshakeCell, rules: Sequence[str], agent: RustAgent, cli: CliInstall,
                             runtime: Runtime, results: Path, reaper: proc.Reaper | None = None) -> dict[str, Row]:
    if agent.build_errors is not None or agent.probes_build_errors is not None:
        return {}  # each rule alone then records why it does not run
    return run_compiled_batch(cell, rules, AgentCommand((str(agent.binary),)), {"sdk_dir": agent.sdk_dir}, cli,
                              runtime, results, reaper)


def run_rust_session(cell: HandshakeCell, agent: RustAgent, cli: CliInstall, runtime: Runtime, results: Path,
                     reaper: proc.Reaper | None = None) -> Row:
    failed = _not_run_row(cell, SESSION, "", agent, cli, runtime)
    if failed is not None:
        return failed
    return run_compiled_probe(cell, SESSION, "", AgentCommand((str(agent.binary),)), {"sdk_dir": agent.sdk_dir},
                              cli, runtime, results, reaper)
