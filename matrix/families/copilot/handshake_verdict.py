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

__all__ = ["classify_handshake"]

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
