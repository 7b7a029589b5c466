"""What a family whose agent is compiled against each release (Go, Rust) records when the
build fails: the compiler's words are the verdict about that release."""

from __future__ import annotations

from pathlib import Path

from matrix.execute import proc
from matrix.families.copilot.agent_run import AgentRun
from matrix.families.copilot.cli import CliInstall, Runtime
from matrix.families.copilot.handshake import HandshakeCell, build_row
from matrix.model import Outcome, Row
from matrix.probes.report import ErrorInfo
from matrix.probes.verdict import Verdict

__all__ = ["compile_error_row"]


def compile_error_row(cell: HandshakeCell, probe: str, mutation: str, errors: str, binary: Path, cli: CliInstall,
                      runtime: Runtime) -> Row:
    """The agent does not compile against this release (or the release does not compile): the
    compiler's messages are the verdict."""
    run = AgentRun(None, proc.Result((str(binary),), 1, "", errors, 0.0, 0.0, False), [], [])
    verdict = Verdict(Outcome.CRASHED, ErrorInfo("CompileError", errors[-1500:]), {"phase": "build"})
    return build_row(cell, probe, mutation, run, verdict, runtime, cli)
