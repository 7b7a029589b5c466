"""Tolerance checks: classify what one SDK version did with one mutation rule.

Pure function over the agent's observations, the process result and what the shim says it
applied. The outcome vocabulary is the tolerance half of ``Outcome``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from matrix.execute.proc import Result
from matrix.families.copilot.shim import INJECTED_REQUEST_ID
from matrix.model import Outcome
from matrix.probes.report import AgentReport, ErrorInfo
from matrix.probes.verdict import Verdict, unmeasured

__all__ = ["classify_control", "classify_tolerance", "injected_answer", "shim_applied", "transcript_cut"]

# For each known-type event rule: the event type the application should still get.
_TYPED = {"event.extra-field": "session.info", "event.unknown-enum-value": "system.message",
          "field.type-change": "system.message", "history.extra-field": "session.info",
          "history.unknown-enum-value": "system.message"}
METHOD_NOT_FOUND = -32601
# The steps some rule is judged by (a control must pass them): closing and stopping are not.
_JUDGED_STEPS = ("start", "create_session", "ping", "get_status", "get_history")


def _entries(transcript: Path) -> list[dict[str, Any]] | None:
    try:
        lines = transcript.read_text().splitlines()
    except OSError:
        return None
    entries = []
    for line in lines:
        try:
            entries.append(json.loads(line))
        except ValueError:
            continue  # a line cut short by a kill
    return entries


def shim_applied(transcript: Path) -> list[str] | None:
    """Every mutation the shim reports applying (it writes each one as it happens); None
    when there is no transcript at all."""
    entries = _entries(transcript)
    if entries is None:
        return None
    applied: list[str] = []
    for entry in entries:
        if entry.get("dir") == "shim" and isinstance(entry.get("msg"), dict):
            applied.extend(entry["msg"].get("applied") or [])
    return applied


def transcript_cut(transcript: Path) -> bool:
    """A transcript the shim could not finish writing: emptied (the shim does that when its
    disk refuses a write) or ending inside a line. No file at all is no relay, not a cut."""
    try:
        with transcript.open("rb") as f:
            f.seek(0, 2)
            size = f.tell()
            if size == 0:
                return True
            f.seek(size - 1)
            return f.read(1) != b"\n"
    except OSError:
        return False


def injected_answer(transcript: Path) -> dict[str, Any] | None:
    """The SDK's answer to the request the shim sent in the CLI's name, and how many seconds
    after the request it came; None when it never answered (or nothing was sent)."""
    sent = answered = None
    for entry in _entries(transcript) or []:
        msg = entry.get("msg")
        if not isinstance(msg, dict) or msg.get("id") != INJECTED_REQUEST_ID:
            continue
        if entry.get("dir") == "shim->sdk" and "method" in msg and sent is None:
            sent = entry
        elif entry.get("dir") == "sdk->shim" and answered is None:
            answered = entry
    if sent is None or answered is None:
        return None
    msg = answered["msg"]
    return {"after_s": round(float(answered["t"]) - float(sent["t"]), 3), "error": msg.get("error"),
            "has_result": "result" in msg}


def _evidence(report: AgentReport) -> list[str]:
    return [str(e) for e in report.extra.get("loop_errors") or []] + list(report.warnings)


def classify_tolerance(report: AgentReport | None, res: Result, rule: str, applied: list[str] | None,
                       answer: dict[str, Any] | None = None) -> Verdict:
    """``answer``: for ``request.unknown-method``, the SDK's answer to the injected request."""
    early = unmeasured(report, res)
    if early is not None:
        return early
    assert report is not None  # unmeasured() answers for a missing report
    steps = {s.name: s for s in report.steps}
    start = steps.get("start")
    evidence = _evidence(report)
    detail: dict[str, Any] = {"applied": applied, "evidence": evidence[:10]}
    if not applied:
        if start is not None and start.ok:
            return Verdict(Outcome.NOT_APPLICABLE, ErrorInfo(
                "NotApplicable", "the CLI sent nothing this rule mutates"), detail)
        return Verdict(Outcome.HARNESS_ERROR, ErrorInfo(
            "NotMutated", "start failed before the shim applied the rule"), detail)
    for name in ("start", "create_session", "ping"):
        step = steps.get(name)
        if step is not None and not step.ok:
            return Verdict(Outcome.FATAL, step.error, {**detail, "phase": name})
    seen = report.extra.get("observed") or {}
    if rule == "result.extra-field":
        surfaced = seen.get("ping_unknown_field") or seen.get("status_unknown_field")
        return Verdict(Outcome.SURFACED if surfaced else Outcome.IGNORED, None, detail)
    if rule == "result.capabilities":
        return Verdict(Outcome.SURFACED if seen.get("client_has_unknown_capability") else Outcome.IGNORED,
                       None, detail)
    if rule == "result.unknown-enum-value":
        return Verdict(Outcome.SURFACED if seen.get("client_has_unknown_value") else Outcome.IGNORED, None, detail)
    if rule == "notification.unknown-method":
        if evidence:
            return Verdict(Outcome.LOST, ErrorInfo("DecodeError", evidence[0]), detail)
        return Verdict(Outcome.IGNORED, None, detail)
    if rule == "request.unknown-method":
        return _request(answer, detail)
    if rule.startswith("history."):
        history = steps.get("get_history")
        if history is None:
            return Verdict(Outcome.HARNESS_ERROR, ErrorInfo("MissingStep", "the agent never read the history back"),
                           detail)
        if not history.ok:
            # The call the application made raised: it gets an exception and none of its history.
            return Verdict(Outcome.FATAL, history.error, {**detail, "phase": "get_history"})
        if not seen.get("canary"):
            return Verdict(Outcome.LOST, ErrorInfo(
                "EventsCut", "the history came back without the well-formed event stored after the mutated one"),
                detail)
    elif not seen.get("canary"):
        return Verdict(Outcome.FATAL, ErrorInfo(
            "EventsStopped", "the well-formed event sent after the mutated one never reached the application"),
            detail)
    mutated = seen.get("mutated")
    detail["delivered"] = mutated
    if mutated is None:
        if evidence:
            return Verdict(Outcome.LOST, ErrorInfo("DecodeError", evidence[0]), detail)
        if rule.endswith(".unknown-type"):
            return Verdict(Outcome.IGNORED, None, detail)
        return Verdict(Outcome.LOST, ErrorInfo("Dropped", "the event never reached the application"), detail)
    if rule.endswith(".unknown-type"):
        detail["raw_type_kept"] = mutated.get("raw_type") is not None
        return Verdict(Outcome.SURFACED, None, detail)
    if mutated.get("type") != _TYPED[rule]:
        return Verdict(Outcome.DOWNGRADED, ErrorInfo(
            "Downgraded", f"delivered as {mutated.get('type')!r}, not as {_TYPED[rule]!r}"), detail)
    if rule.endswith(".extra-field"):
        return Verdict(Outcome.SURFACED if mutated.get("has_unknown_field") else Outcome.IGNORED, None, detail)
    if rule.endswith(".unknown-enum-value"):
        return Verdict(Outcome.SURFACED if mutated.get("has_unknown_value") else Outcome.IGNORED, None, detail)
    return Verdict(Outcome.SURFACED if mutated.get("name") == 42 else Outcome.IGNORED, None, detail)


def _request(answer: dict[str, Any] | None, detail: dict[str, Any]) -> Verdict:
    """A request for a method the SDK does not know must be answered "method not found":
    silence leaves the CLI waiting for an answer forever."""
    detail["answer"] = answer
    if answer is None:
        return Verdict(Outcome.LOST, ErrorInfo(
            "NoAnswer", "the SDK never answered the CLI's request for a method it does not know: the CLI waits "
                        "for that answer forever"), detail)
    error = answer.get("error")
    code = error.get("code") if isinstance(error, dict) else None
    if code == METHOD_NOT_FOUND:
        return Verdict(Outcome.SURFACED, None, detail)
    if answer.get("has_result"):
        return Verdict(Outcome.DOWNGRADED, ErrorInfo(
            "AnsweredAsKnown", "the SDK answered with a result, as if it knew the method"), detail)
    return Verdict(Outcome.DOWNGRADED, ErrorInfo(
        "WrongError", f"the SDK answered with error code {code!r}, not {METHOD_NOT_FOUND} (method not found)"), detail)


def classify_control(report: AgentReport | None, res: Result, control: str, applied: list[str] | None) -> Verdict:
    """A control passes when every step the rules of its kind judge worked with nothing
    mutated: the calls answered, the well-formed event (or stored event) reached the
    application, and nothing was reported to a loop's exception handler or a logger (the
    evidence a notification rule is judged by)."""
    early = unmeasured(report, res)
    if early is not None:
        return early
    assert report is not None
    detail: dict[str, Any] = {"applied": applied, "evidence": _evidence(report)[:10]}
    for step in report.steps:
        if step.name in _JUDGED_STEPS and not step.ok:
            return Verdict(Outcome.FAILED, step.error, {**detail, "phase": step.name})
    seen = report.extra.get("observed") or {}
    if control != "result.control" and not seen.get("canary"):
        where = "the history read back" if control == "history.control" else "the session's events"
        return Verdict(Outcome.FAILED, ErrorInfo("EventsCut", f"the well-formed event never reached the application "
                                                              f"({where})"), detail)
    if detail["evidence"]:
        return Verdict(Outcome.FAILED, ErrorInfo("Evidence", str(detail["evidence"][0])), detail)
    return Verdict(Outcome.PASSED, None, detail)
