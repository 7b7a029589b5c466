"""The verdict of a check: an outcome and the error that decided it, and the helpers every
family's classification shares (a check with nothing to judge, a failure message's grade,
what stop() left running). Pure functions, tested from recorded agent outputs."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from matrix.execute.proc import Result
from matrix.model import Outcome
from matrix.probes.report import AgentReport, ErrorInfo

__all__ = ["DOES_NOT_START", "LEFT_RUNNING", "Verdict", "after_stop", "grade_message", "unmeasured"]

LEFT_RUNNING = "LeftRunning"  # the error type of a cell whose SDK left a process running after stop()
# The error type of a not-applicable cell whose other side does not start on this machine at all
# (for any SDK): a fact about that release, shown once on its page.
DOES_NOT_START = "DoesNotStart"
_VERSION_REF = re.compile(r"(\d+\.\d+\.\d+|version \d+|v\d+\b|protocol \d+|versions? \d+)", re.I)
_ACTION = re.compile(r"(upgrade|update|downgrade|install|npm i\b|pip install|use a newer|"
                     r"use an older|please)", re.I)


@dataclass(frozen=True)
class Verdict:
    outcome: Outcome
    error: ErrorInfo | None = None
    detail: dict[str, object] = field(default_factory=dict)
    wrong_cli: bool = False


def unmeasured(report: AgentReport | None, res: Result) -> Verdict | None:
    """The verdict of a check that produced nothing to judge (deadline, no report, our own
    agent failing, an API the version does not have); None when there is something."""
    if res.timed_out:
        return Verdict(Outcome.HANG, ErrorInfo("HarnessDeadline", "no result before the harness deadline",
                                               timeout=True))
    if report is None:
        return Verdict(Outcome.HARNESS_ERROR, ErrorInfo("MissingReport", res.stderr[-1500:].strip()))
    if report.harness_error:
        return Verdict(Outcome.HARNESS_ERROR, ErrorInfo("HarnessError", report.harness_error))
    if report.extra.get("not_applicable"):
        return Verdict(Outcome.NOT_APPLICABLE, ErrorInfo("NotApplicable", str(report.extra["not_applicable"])))
    return None


def grade_message(message: str | None) -> tuple[bool | None, bool | None]:
    """(names the versions involved, tells the user what to do), as the Copilot SDK's version
    negotiation design asks of a failed handshake."""
    if not message:
        return None, None
    return bool(_VERSION_REF.search(message)), bool(_ACTION.search(message))


def after_stop(report: AgentReport | None) -> dict[str, Any] | None:
    """What the agent saw of the SDK's processes after stop() returned (None: not measured)."""
    gone = report.extra.get("after_stop") if report else None
    return gone if isinstance(gone, dict) else None
