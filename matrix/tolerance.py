"""Tolerance checks: classify what one SDK version did with one mutation rule.

Pure function over the agent's observations, the process result and what the shim says it
applied. The outcome vocabulary is the tolerance half of ``Outcome``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .classify import Verdict, unmeasured
from .outcomes import Outcome
from .proc import Result
from .report_schema import AgentReport, ErrorInfo

__all__ = ["classify_tolerance", "shim_applied"]

# For each known-type event rule: the event type the application should still get.
_TYPED = {"event.extra-field": "session.info", "event.unknown-enum-value": "system.message",
          "field.type-change": "system.message"}


def shim_applied(transcript: Path) -> list[str] | None:
    """Every mutation the shim reports applying (it writes each one as it happens); None
    when there is no transcript at all."""
    try:
        lines = transcript.read_text().splitlines()
    except OSError:
        return None
    applied: list[str] = []
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # a line cut short by a kill
        if entry.get("dir") == "shim" and isinstance(entry.get("msg"), dict):
            applied.extend(entry["msg"].get("applied") or [])
    return applied


def _evidence(report: AgentReport) -> list[str]:
    return [str(e) for e in report.extra.get("loop_errors") or []] + list(report.warnings)


def classify_tolerance(report: AgentReport | None, res: Result, rule: str, applied: list[str] | None) -> Verdict:
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
    if not seen.get("canary"):
        return Verdict(Outcome.FATAL, ErrorInfo(
            "EventsStopped", "the well-formed event sent after the mutated one never reached the application"),
            detail)
    mutated = seen.get("mutated")
    detail["delivered"] = mutated
    if mutated is None:
        if evidence:
            return Verdict(Outcome.LOST, ErrorInfo("DecodeError", evidence[0]), detail)
        if rule == "event.unknown-type":
            return Verdict(Outcome.IGNORED, None, detail)
        return Verdict(Outcome.LOST, ErrorInfo("Dropped", "the event never reached the application"), detail)
    if rule == "event.unknown-type":
        detail["raw_type_kept"] = mutated.get("raw_type") is not None
        return Verdict(Outcome.SURFACED, None, detail)
    if mutated.get("type") != _TYPED[rule]:
        return Verdict(Outcome.DOWNGRADED, ErrorInfo(
            "Downgraded", f"delivered as {mutated.get('type')!r}, not as {_TYPED[rule]!r}"), detail)
    if rule == "event.extra-field":
        return Verdict(Outcome.SURFACED if mutated.get("has_unknown_field") else Outcome.IGNORED, None, detail)
    if rule == "event.unknown-enum-value":
        return Verdict(Outcome.SURFACED if mutated.get("has_unknown_value") else Outcome.IGNORED, None, detail)
    return Verdict(Outcome.SURFACED if mutated.get("name") == 42 else Outcome.IGNORED, None, detail)
