"""What a family whose agent is compiled against each release (Go, Rust) records when the
build fails: the compiler's words are the verdict about that release."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from matrix.execute import proc
from matrix.families.copilot.agent_run import AgentCommand, AgentRun
from matrix.families.copilot.cli import CliInstall, Runtime
from matrix.families.copilot.handshake import Attempt, HandshakeCell, build_row, measure_handshake
from matrix.model import Outcome, Row
from matrix.probes.report import ErrorInfo
from matrix.probes.verdict import Verdict

__all__ = ["compile_error_row", "run_compiled_handshake"]


def compile_error_row(cell: HandshakeCell, probe: str, mutation: str, errors: str, binary: Path, cli: CliInstall,
                      runtime: Runtime) -> Row:
    """The agent does not compile against this release (or the release does not compile): the
    compiler's messages are the verdict."""
    run = AgentRun(None, proc.Result((str(binary),), 1, "", errors, 0.0, 0.0, False), [], [])
    verdict = Verdict(Outcome.CRASHED, ErrorInfo("CompileError", errors[-1500:]), {"phase": "build"})
    return build_row(cell, probe, mutation, run, verdict, runtime, cli)


def run_compiled_handshake(cell: HandshakeCell, command: AgentCommand, build_errors: str | None, binary: Path,
                           cli: CliInstall, runtime: Runtime, reaper: proc.Reaper | None,
                           extra: Callable[[AgentRun], dict[str, Any]], **cfg: Any) -> Row:
    """The handshake of a release whose agent was compiled against it (``build_errors``: why it
    was not, the verdict then); ``extra``: what the row adds from each agent run, ``cfg``: what
    the family's agent reads besides the shared settings."""
    if build_errors is not None:
        return compile_error_row(cell, "handshake", "", build_errors, binary, cli, runtime)

    def once() -> Attempt:
        run = cell.run_agent(None, command, cli, runtime, reaper, **cfg)
        return Attempt(run, extra(run))

    return measure_handshake(cell, once, runtime, cli)
