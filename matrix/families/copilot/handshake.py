"""The handshake probe for github-copilot-sdk: start, negotiate, ping, status, stop."""

from __future__ import annotations

import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from matrix.ecosystems.pypi_env import UvVenv
from matrix.execute import proc
from matrix.execute.aheadstart import AheadStarts
from matrix.execute.forkserver import ForkServers
from matrix.execute.redaction import process_label, redact, strip_paths
from matrix.families.copilot.agent_run import AgentCommand, AgentRun, python_agent, run_agent
from matrix.families.copilot.cli import CliInstall, Runtime
from matrix.families.copilot.handshake_verdict import classify_handshake, combine_stops, needs_another, stop_seconds
from matrix.families.copilot.payload import (
    CONNECTED,
    HANDSHAKE,
    SESSION,
    AgentPayload,
    HandshakePayload,
    SessionPayload,
)
from matrix.families.copilot.rules import COPILOT_RULES
from matrix.model import Cell, Outcome, Row
from matrix.probes.report import ErrorInfo
from matrix.probes.verdict import DOES_NOT_START, LEFT_RUNNING, Verdict, after_stop, grade_message

__all__ = ["Attempt", "HandshakeCell", "build_row", "cli_does_not_start_row", "measure_handshake",
           "redact"]

@dataclass(frozen=True)
class HandshakeCell:
    family: str
    sdk_version: str
    cli_version: str
    probe_timeout: float
    call_timeout: float
    grace: float
    scratch: Path
    use_shim: bool = False  # relay through the shim without mutating (it must be invisible)
    transcript: Path | None = None
    warm: ForkServers | None = field(default=None, compare=False)  # warm starts for Python agents
    ahead: AheadStarts | None = field(default=None, compare=False)  # ahead starts for Node agents
    dead_cli: float | None = None  # see Timeouts.dead_cli
    leak: float = 5.0  # see Timeouts.leak
    launcher: bool = True  # False: the SDK gets the CLI's own entry point (see run_agent)
    preload: tuple[str, ...] = ()  # Python SDKs: what a warm server imports once per release
    # What this cell's CLI says its version is when asked with no SDK (asked only if needed).
    cli_says: Callable[[], str | None] | None = field(default=None, compare=False)
    stops: int = 1  # see CellSettings.stops
    stops_max: int = 1
    # Called before each repeated measurement (Context.working: wait for a CPU slot again).
    working: Callable[[], None] = field(default=lambda: None, compare=False)
    # Called when an agent says it only waits from then on (Context.waiting: lend the slot).
    waiting: Callable[[], None] | None = field(default=None, compare=False)

    def python_agent(self, venv: UvVenv) -> AgentCommand:
        return python_agent(venv, self.warm, self.preload)

    def expected_cli(self, run: AgentRun) -> str:
        """The version our CLI reports: the one installed or, when the SDK saw another after
        starting our launcher exactly once, the one the CLI also gives a client with no SDK
        (it misreports its version; the SDK did run ours)."""
        seen = run.report.observed_cli_version if run.report else None
        if (seen and seen != self.cli_version and len(run.launches) == 1 and self.cli_says is not None
                and self.cli_says() == seen):
            return seen
        return self.cli_version

    def run_agent(self, agent: Path | None, command: AgentCommand, cli: CliInstall, runtime: Runtime,
                  reaper: proc.Reaper | None, **cfg: Any) -> AgentRun:
        """One handshake agent run with this cell's deadlines and relay; ``cfg``: what the
        family's agent reads besides the settings every handshake agent shares."""
        shared = {"step_timeout": self.call_timeout, "log_level": "error", "dead_cli": self.dead_cli,
                  "leak": self.leak}
        return run_agent(agent, {**shared, **cfg}, command, cli, runtime, self.probe_timeout, self.grace,
                         self.scratch, reaper, use_shim=self.use_shim, transcript=self.transcript,
                         launcher=self.launcher, waiting=self.waiting)


def build_row(cell: HandshakeCell, probe: str, mutation: str, run: AgentRun, verdict: Verdict,
              runtime: Runtime, cli: CliInstall, extra: dict[str, Any] | None = None) -> Row:
    report, res, launches = run.report, run.result, run.launches
    expected = cell.expected_cli(run)
    if run.seed_modified:  # another cell's state may have leaked into this one: no verdict
        verdict = Verdict(Outcome.HARNESS_ERROR, ErrorInfo(
            "SharedStateModified", "the CLI wrote into the unpacked package shared between cells; the tree is "
                                   "retired and the cell is re-measured next run"))
    message = redact(verdict.error.message) if verdict.error else None
    # A leak is measured, not said: there is no message of the SDK's to grade.
    graded = verdict.outcome not in (Outcome.COMPATIBLE, Outcome.SURFACED, Outcome.IGNORED) and not (
        verdict.error and verdict.error.type == LEFT_RUNNING)
    names, actionable = grade_message(message) if graded else (None, None)
    seconds = {s.name: s.seconds for s in report.steps} if report else {}
    detail: dict[str, Any] = dict(verdict.detail)
    detail.update(
        launch_argv=launches[0][:40] if launches else None,
        launches=len(launches),
        api=report.api if report else None,
        warnings=[redact(w) for w in report.warnings][:20] if report else [],
        agent_stderr_tail=redact(res.stderr[-2000:]),
        runtime_failures=cli.runtime_failures,
        optional_not_served=list(cli.not_served),
        cli_reports_itself_as=None if expected == cell.cli_version else expected,
        home_files=run.home_files[:50],
        agent_env_names=report.extra.get("env_names") if report else None,
        **(extra or {}),
    )
    gone = after_stop(report)
    if gone is not None:
        detail["after_stop"] = {"wait": gone.get("wait"), "processes": [
            {**p, "command": strip_paths(str(p.get("command", "")))} for p in gone.get("processes") or []]}
    if verdict.error and verdict.error.traceback:
        detail["traceback"] = redact(verdict.error.traceback[-4000:])
    observed = AgentPayload(
        message_names_versions=names,
        message_actionable=actionable,
        start_seconds=seconds.get("start"),
        calls_seconds=round(seconds.get("ping", 0.0) + seconds.get("get_status", 0.0), 4)
        if "ping" in seconds else None,
        stop_seconds=seconds.get("stop"),
        sdk_declared=report.declared if report else {},
        node_runtime=runtime.label,
    )
    stopped: dict[str, Any] = {
        "exit_after_stop_seconds": gone.get("exit_after_stop_seconds") if gone else None,
        "leaked": [process_label(c) for c in gone.get("leaked") or []] if gone else []}
    payload: AgentPayload = observed
    if probe == HANDSHAKE:
        payload = HandshakePayload(
            **observed.model_dump(),
            protocol=report.negotiated_protocol if report and verdict.outcome in CONNECTED else None,
            observed_cli_version=report.observed_cli_version if report else None,
            **stopped,
            wrong_cli=verdict.wrong_cli,
        )
    elif probe == SESSION:  # its own findings are added by the probe (session/probe.py)
        payload = SessionPayload(**observed.model_dump(), **stopped)
    return Row(
        family=cell.family,
        sdk_version=cell.sdk_version,
        cli_version=cell.cli_version,
        probe=probe,
        mutation=mutation,
        outcome=verdict.outcome,
        error_type=verdict.error.type if verdict.error else None,
        error_message=message,
        seconds=round(res.elapsed, 3),
        leftovers_killed=[strip_paths(c) for c in res.leftovers],
        payload=payload.model_dump(mode="json"),
        detail=detail,
        harness_version=COPILOT_RULES.version(probe),
        measured_at=datetime.now(UTC).isoformat(timespec="seconds"),
        host=socket.gethostname(),
    )


@dataclass(frozen=True)
class Attempt:
    """One run of a family's handshake agent, and what the row adds from it."""

    run: AgentRun
    extra: dict[str, Any] = field(default_factory=dict)
    verdict: Verdict | None = None  # set: decided without the agent's report (a build failure)


def measure_handshake(cell: HandshakeCell, once: Callable[[], Attempt], runtime: Runtime, cli: CliInstall) -> Row:
    """The handshake row of ``cell``: the agent run once and, when the SDK connected, again until
    its stop() has been measured ``cell.stops`` times (up to ``cell.stops_max`` where the stops
    disagree). What stop() leaves behind is a race in some releases: the row keeps every stop
    (``stops``) and every outcome (``repeats``), and its verdict is the worst seen."""
    attempts: list[Attempt] = []
    verdicts: list[Verdict] = []
    stops: list[float | None] = []
    while not attempts or needs_another([v.outcome for v in verdicts], stops, cell.stops, cell.stops_max):
        if attempts:
            cell.working()
        attempt = once()
        verdict = attempt.verdict or classify_handshake(attempt.run.report, attempt.run.result,
                                                        cell.expected_cli(attempt.run), attempt.run.launches)
        if attempt.run.seed_modified:
            verdict = Verdict(Outcome.HARNESS_ERROR, ErrorInfo("SharedStateModified", "see build_row"))
        attempts.append(attempt)
        verdicts.append(verdict)
        measured, seconds = stop_seconds(attempt.run.report)
        if measured:
            stops.append(seconds)
    verdict, shown = combine_stops(verdicts, [a.run.report for a in attempts])
    row = build_row(cell, HANDSHAKE, "", attempts[shown].run, verdict, runtime, cli, extra=attempts[shown].extra)
    if len(attempts) == 1:
        return row
    leaking = next((a for a in attempts if stop_seconds(a.run.report) == (True, None)), None)
    gone = after_stop(leaking.run.report) if leaking is not None and not row.get("leaked") else None
    seen = [v.outcome for v in verdicts]
    return row.updated(
        repeats=seen, flaky=len(set(seen)) > 1, stops=stops,
        seconds=round(sum(a.run.result.elapsed for a in attempts), 3),
        **({"leaked": [process_label(c) for c in gone.get("leaked") or []]} if gone else {}))


def cli_does_not_start_row(cell: Cell, cli: CliInstall, why: str) -> Row:
    """A cell of a CLI release that does not start by itself on this machine: not-applicable,
    with the CLI's own failure, and no SDK run (none could use it; it is a fact about the CLI)."""
    return Row(family=cell.family, sdk_version=cell.sdk_version, cli_version=cell.cli_version, probe=cell.probe,
               mutation=cell.mutation, outcome=Outcome.NOT_APPLICABLE, error_type=DOES_NOT_START,
               error_message=redact(why),
               detail={"runtime_failures": {k: redact(v) for k, v in cli.runtime_failures.items()},
                       "optional_not_served": list(cli.not_served)},
               harness_version=COPILOT_RULES.version(cell.probe),
               measured_at=datetime.now(UTC).isoformat(timespec="seconds"), host=socket.gethostname())
