"""What a family whose agent is compiled against each release (Go, Rust, Java) runs: its
handshake, its other probes with the same binary, and, when the build failed, the compiler's
words as the verdict about that release for every probe."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from matrix.execute import proc
from matrix.families.copilot.agent_run import AgentCommand, AgentRun
from matrix.families.copilot.cli import CliInstall, Runtime
from matrix.families.copilot.handshake import Attempt, HandshakeCell, build_row, measure_handshake
from matrix.families.copilot.payload import SESSION
from matrix.families.copilot.session.probe import run_session
from matrix.families.copilot.tolerance import run_batch, run_tolerance
from matrix.model import Outcome, Row
from matrix.probes.report import ErrorInfo
from matrix.probes.verdict import Verdict

__all__ = ["compile_error_row", "run_compiled_batch", "run_compiled_handshake", "run_compiled_probe"]


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


def run_compiled_probe(cell: HandshakeCell, probe: str, mutation: str, command: AgentCommand, cfg: dict[str, Any],
                       cli: CliInstall, runtime: Runtime, results: Path, reaper: proc.Reaper | None) -> Row:
    """A tolerance rule's row (``mutation``: the rule) or the session's, run by the agent compiled
    against the release (``command``: the whole agent); ``cfg``: what the family's agent reads
    besides the probe's own settings."""
    if probe == SESSION:
        return run_session(None, command, {**cfg, "probe": SESSION}, cell, cli, runtime, results, reaper)
    return run_tolerance(None, command, dict(cfg), cell, mutation, cli, runtime, results, reaper)


def run_compiled_batch(cell: HandshakeCell, rules: Sequence[str], command: AgentCommand, cfg: dict[str, Any],
                       cli: CliInstall, runtime: Runtime, results: Path, reaper: proc.Reaper | None) -> dict[str, Row]:
    """Tolerance rules of one kind in one run of the compiled agent (``tolerance.run_batch``)."""
    return run_batch(None, command, dict(cfg), cell, rules, cli, runtime, results, reaper)
