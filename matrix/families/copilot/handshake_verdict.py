"""A Copilot handshake agent's report and process result -> one outcome, with the error that
decided it. Pure functions, tested from recorded agent outputs. The order of the rules matters
and is the documented meaning of each class (see OUTCOME_INFO)."""

from __future__ import annotations

import re

from matrix.execute.proc import Result
from matrix.execute.redaction import process_label
from matrix.model import Outcome
from matrix.probes.report import AgentReport, ErrorInfo, Step
from matrix.probes.verdict import LEFT_RUNNING, Verdict, after_stop

__all__ = ["CONNECTED", "classify_handshake", "combine_stops", "needs_another", "stop_seconds"]

# The SDK explains a version/protocol mismatch.
_REFUSAL = re.compile(
    r"(protocol version|protocol v?\d|version mismatch|incompatible|not compatible|"
    r"requires? (at least|a newer|an older)|unsupported (cli|protocol|server)|"
    r"does not report a protocol version|minimum (cli|protocol))",
    re.I,
)
# The CLI process did not start with the SDK's arguments or runtime, or died during start.
_LAUNCH = re.compile(
    r"(unknown option|unknown argument|unexpected argument|error: option|"
    r"process (has )?exited|exited with (code|status)|process.*(died|terminated)|"
    r"cli not found|no such file|ENOENT|permission denied|EACCES|not executable|"
    r"failed to start|could not start|requires node|node\.js (version )?v?\d+|"
    r"connection (closed|lost|reset)|connection got disposed|broken pipe|EPIPE|stream (closed|ended)|EOF)",
    re.I,
)
_LAUNCH_TYPES = {"FileNotFoundError", "PermissionError", "BrokenPipeError",
                 "ConnectionResetError", "ConnectionError", "EOFError", "IncompleteReadError"}

def _tail(text: str, n: int = 1500) -> str:
    return text[-n:].strip()


_TIMEOUT = re.compile(r"(timed? ?out|timeout|deadline exceeded)", re.I)


def _failed_start(err: ErrorInfo) -> Outcome:
    text = f"{err.type}: {err.message}"
    if err.timeout or _TIMEOUT.search(text):
        return Outcome.HANG
    if _REFUSAL.search(text):
        return Outcome.REFUSED
    if err.type in _LAUNCH_TYPES or _LAUNCH.search(text):
        return Outcome.LAUNCH_FAILED
    return Outcome.CRASHED



def classify_handshake(
    report: AgentReport | None,
    res: Result,
    intended_cli: str,
    launches: list[list[str]],
) -> Verdict:
    """``launches``: argv of every CLI start the wrapper saw (it logs each one). A cell
    that connected and answered, but whose SDK left a process it started running after
    stop(), is ``degraded``: the design promises that stopping leaves no CLI behind."""
    verdict = _classify(report, res, intended_cli, launches)
    gone = after_stop(report)
    leaked = [str(c) for c in (gone or {}).get("leaked") or []]
    if verdict.outcome != Outcome.COMPATIBLE or not leaked:
        return verdict
    assert gone is not None
    return Verdict(Outcome.DEGRADED, ErrorInfo(LEFT_RUNNING, (
        f"left {process_label(leaked[0])} running after stop() (still alive {float(gone.get('wait') or 0):g} s after "
        "stop() "
        f"returned{f'; {len(leaked)} processes' if len(leaked) > 1 else ''})")), {"phase": "after stop"})


def _classify(report: AgentReport | None, res: Result, intended_cli: str, launches: list[list[str]]) -> Verdict:
    if res.timed_out:
        last = [ln for ln in res.stderr.splitlines() if ln.startswith("[agent] ")]
        where = last[-1][8:] if last else "before the agent reported progress"
        return Verdict(Outcome.HANG, ErrorInfo("HarnessDeadline",
                       f"no result before the harness deadline; last progress: {where}", timeout=True))
    if report is None:
        if res.returncode is not None and res.returncode < 0:
            return Verdict(Outcome.CRASHED, ErrorInfo(
                "ProcessDied", f"agent process killed by signal {-res.returncode}: {_tail(res.stderr)}"))
        return Verdict(Outcome.HARNESS_ERROR, ErrorInfo(
            "MissingReport", f"agent exited {res.returncode} without a report: {_tail(res.stderr)}"))
    if report.harness_error:
        return Verdict(Outcome.HARNESS_ERROR, ErrorInfo("HarnessError", report.harness_error))

    steps = {s.name: s for s in report.steps}
    if report.extra.get("no_code"):
        imp = steps.get("import")
        return Verdict(Outcome.NOT_APPLICABLE, imp.error if imp else None, {"phase": "import"})
    imp = steps.get("import")
    if imp is None or not imp.ok:
        err = imp.error if imp and imp.error else ErrorInfo("ImportError", "the SDK was not imported")
        return Verdict(Outcome.CRASHED, err, {"phase": "import"})
    con = steps.get("construct")
    if con is not None and not con.ok and con.error:
        return Verdict(_failed_start(con.error), con.error, {"phase": "construct"})

    start = steps.get("start")
    if start is None:
        return Verdict(Outcome.HARNESS_ERROR, ErrorInfo("MissingStep", "the agent never ran start()"))

    # Whatever happened, a CLI other than the one we installed is never a verdict on ours.
    if start.ok and not launches:
        detail = "the SDK never launched the CLI we pointed it at (it may run one of its own)"
        return Verdict(Outcome.HARNESS_ERROR, ErrorInfo("WrongCli", detail), wrong_cli=True)
    if report.observed_cli_version and report.observed_cli_version != intended_cli:
        why = (" (the launcher log shows one start of the intended CLI: it may misreport its version)"
               if len(launches) == 1 else "")
        return Verdict(Outcome.HARNESS_ERROR, ErrorInfo(
            "WrongCli", f"intended CLI {intended_cli} but get_status reported {report.observed_cli_version}{why}"),
            wrong_cli=True)

    if not start.ok:
        assert start.error is not None
        return Verdict(_failed_start(start.error), start.error, {"phase": "start"})

    later: list[Step] = [s for s in report.steps if s.name in ("ping", "get_status", "stop") and not s.ok]
    if later:
        first = later[0]
        return Verdict(Outcome.DEGRADED, first.error, {"phase": first.name})
    pinned = [w for w in report.warnings if re.search(r"protocol|version", w, re.I)]
    if pinned:
        return Verdict(Outcome.DEGRADED, ErrorInfo("Warning", pinned[0]), {"phase": "start"})
    uncaught = report.extra.get("uncaught") or []
    if uncaught:  # everything answered, but the SDK threw where the application cannot catch it
        return Verdict(Outcome.DEGRADED, ErrorInfo("UncaughtError", str(uncaught[0])[:1500]), {"phase": "uncaught"})
    return Verdict(Outcome.COMPATIBLE)


# Worst last: a cell measured several times has the verdict of its worst measurement (what a
# user can hit), with how often each was seen.
_SEVERITY = (Outcome.COMPATIBLE, Outcome.DEGRADED, Outcome.REFUSED, Outcome.LAUNCH_FAILED, Outcome.CRASHED,
             Outcome.HANG, Outcome.HARNESS_ERROR)
CONNECTED = (Outcome.COMPATIBLE, Outcome.DEGRADED)


def stop_seconds(report: AgentReport | None) -> tuple[bool, float | None]:
    """(measured, seconds after stop() until everything the SDK started was gone; None: some
    process outlived the wait)."""
    gone = after_stop(report)
    if gone is None:
        return False, None
    if gone.get("leaked"):
        return True, None
    seconds = gone.get("exit_after_stop_seconds")
    return True, float(seconds) if isinstance(seconds, int | float) else 0.0


def needs_another(outcomes: list[Outcome], stops: list[float | None], least: int, most: int) -> bool:
    """Whether a connected cell measures its stop once more: until ``least`` stops, and up to
    ``most`` where they disagree (some left a process running, some did not, or the outcomes
    differ). A harness error ends the series: the cell is measured again next run."""
    if not outcomes or outcomes[0] not in CONNECTED or Outcome.HARNESS_ERROR in outcomes:
        return False
    if len(outcomes) < least:
        return True
    if len(outcomes) >= most:
        return False
    left = stops.count(None)
    return len(set(outcomes)) > 1 or 0 < left < len(stops)


def combine_stops(verdicts: list[Verdict], reports: list[AgentReport | None]) -> tuple[Verdict, int]:
    """One verdict for a cell measured several times, and the index of the measurement whose
    evidence it shows: the worst outcome seen, its error, and how many of the stops left a
    process running ("in 2 of 5 stops"), also where the worst is another failure."""
    assert verdicts and len(verdicts) == len(reports)
    worst = max(range(len(verdicts)), key=lambda i: (_SEVERITY.index(verdicts[i].outcome)
                                                     if verdicts[i].outcome in _SEVERITY else 0, -i))
    verdict = verdicts[worst]
    if len(verdicts) == 1 or verdict.outcome == Outcome.HARNESS_ERROR:
        return verdict, worst
    measured = [stop_seconds(r) for r in reports]
    stops = [s for ok, s in measured if ok]
    left = [i for i, (ok, s) in enumerate(measured) if ok and s is None]
    if not left:
        return verdict, worst
    gone = after_stop(reports[left[0]]) or {}
    what = process_label(str((gone.get("leaked") or ["a process"])[0]))
    rate = f"in {len(left)} of {len(stops)} stops"
    wait = float(gone.get("wait") or 0)
    if verdict.outcome == Outcome.COMPATIBLE or (verdict.error is not None and verdict.error.type == LEFT_RUNNING):
        error = ErrorInfo(LEFT_RUNNING, f"left {what} running after stop() {rate} (still alive {wait:g} s after "
                                        "stop() returned)")
        return Verdict(Outcome.DEGRADED, error, {"phase": "after stop"}, verdict.wrong_cli), left[0]
    assert verdict.error is not None
    error = ErrorInfo(verdict.error.type, f"{verdict.error.message}; and left {what} running after stop() {rate}",
                      verdict.error.module, verdict.error.traceback, verdict.error.timeout)
    return Verdict(verdict.outcome, error, verdict.detail, verdict.wrong_cli), worst
