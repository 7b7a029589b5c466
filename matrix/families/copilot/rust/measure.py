"""The crate github-copilot-sdk: one agent binary built against each release runs the handshake
probe (its stop measured as a rate, as every Copilot family's)."""

from __future__ import annotations

from typing import Any

from matrix.execute import proc
from matrix.families.copilot.agent_run import AgentCommand, AgentRun
from matrix.families.copilot.cli import CliInstall, Runtime
from matrix.families.copilot.compiled import run_compiled_handshake
from matrix.families.copilot.handshake import HandshakeCell, build_row
from matrix.families.copilot.rust.environment import NO_LIBRARY, RustAgent
from matrix.model import Outcome, Row
from matrix.probes.report import ErrorInfo
from matrix.probes.verdict import Verdict

__all__ = ["run_rust_handshake"]


def run_rust_handshake(cell: HandshakeCell, agent: RustAgent, cli: CliInstall, runtime: Runtime,
                       reaper: proc.Reaper | None = None) -> Row:
    """A release the agent did not build against is ``crashed`` with the compiler's messages,
    which say whether the crate itself does not compile or the agent does not against it; a
    release with no library at all (a placeholder) is ``not-applicable``, as the compiler said."""
    if agent.build_errors is not None and agent.build_errors.endswith(NO_LIBRARY):
        run = AgentRun(None, proc.Result((str(agent.binary),), 1, "", agent.build_errors, 0.0, 0.0, False), [], [])
        return build_row(cell, "handshake", "", run, Verdict(Outcome.NOT_APPLICABLE, ErrorInfo(
            "NoLibrary", f"{agent.package} {agent.version}: {NO_LIBRARY}")), runtime, cli)
    variant = agent.location / "variant.txt"

    def extra(run: AgentRun) -> dict[str, Any]:
        return {"features": variant.read_text() if variant.exists() else None,
                **({"ping_protocol": run.report.extra.get("ping_protocol")} if run.report else {})}

    return run_compiled_handshake(cell, AgentCommand((str(agent.binary),)), agent.build_errors, agent.binary, cli,
                                  runtime, reaper, extra, sdk_dir=agent.sdk_dir)
