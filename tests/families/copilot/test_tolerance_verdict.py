"""Tolerance classification from agent observations shaped as the real agent reports them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from matrix.execute.proc import Result
from matrix.families.copilot.tolerance_verdict import (
    classify_control,
    classify_tolerance,
    injected_answer,
    shim_applied,
)
from matrix.model import Outcome
from matrix.probes.report import AGENT_REPORT_PREFIX, parse_report

LOOP_ERROR = ("Exception in callback CopilotClient._connect_via_stdio.<locals>.handle_notification"
              "('session.event', {...}): ValueError(\"'compat_matrix.unknown_event' is not a valid SessionEventType\")")
OK_STEPS = [{"name": "import", "ok": True}, {"name": "construct", "ok": True}, {"name": "start", "ok": True},
            {"name": "create_session", "ok": True}, {"name": "ping", "ok": True}, {"name": "stop", "ok": True}]


def event(type_: str, **kw: object) -> dict:
    return {"type": type_, "raw_type": None, "id": "00000000-0000-4000-8000-00000000c0de", "data_class": "Data",
            "message": None, "role": None, "name": None, "has_unknown_field": False, "has_unknown_value": False,
            **kw}


def outcome(rule: str, observed: dict, loop_errors: list[str] | None = None, steps: list[dict] | None = None,
            applied: list[str] | None = None, timed_out: bool = False) -> Outcome:
    doc = {"schema": 1, "steps": steps or OK_STEPS, "observed": observed, "loop_errors": loop_errors or []}
    stdout = AGENT_REPORT_PREFIX + json.dumps(doc)
    res = Result(("python",), None if timed_out else 0, stdout, "", 0.0, 1.0, timed_out)
    return classify_tolerance(parse_report(stdout), res, rule, ["x"] if applied is None else applied).outcome


def test_unknown_type_surfaced_when_delivered_as_unknown() -> None:
    seen = {"canary": True, "mutated": event("unknown", raw_type="compat_matrix.unknown_event")}
    assert outcome("event.unknown-type", seen) == Outcome.SURFACED


def test_unknown_type_lost_with_decode_error_evidence() -> None:
    assert outcome("event.unknown-type", {"canary": True, "mutated": None}, [LOOP_ERROR]) == Outcome.LOST


def test_unknown_type_ignored_when_dropped_silently() -> None:
    assert outcome("event.unknown-type", {"canary": True, "mutated": None}) == Outcome.IGNORED


def test_events_that_stop_after_the_mutation_are_fatal() -> None:
    assert outcome("event.extra-field", {"canary": False, "mutated": None}) == Outcome.FATAL


@pytest.mark.parametrize(("rule", "delivered", "expected"), [
    ("event.extra-field", event("session.info"), Outcome.IGNORED),
    ("event.extra-field", event("session.info", has_unknown_field=True), Outcome.SURFACED),
    ("event.extra-field", event("unknown"), Outcome.DOWNGRADED),
    ("event.unknown-enum-value", event("system.message", has_unknown_value=True), Outcome.SURFACED),
    ("event.unknown-enum-value", event("system.message"), Outcome.IGNORED),
    ("event.unknown-enum-value", None, Outcome.LOST),
    ("field.type-change", event("system.message", name=42), Outcome.SURFACED),
    ("field.type-change", event("system.message"), Outcome.IGNORED),
])
def test_known_type_rules(rule: str, delivered: dict | None, expected: Outcome) -> None:
    assert outcome(rule, {"canary": True, "mutated": delivered}) == expected


def test_result_rules() -> None:
    assert outcome("result.extra-field", {"ping_unknown_field": True}) == Outcome.SURFACED
    assert outcome("result.extra-field", {"ping_unknown_field": False}) == Outcome.IGNORED
    assert outcome("result.capabilities", {"client_has_unknown_capability": True}) == Outcome.SURFACED


def test_start_failing_on_the_mutation_is_fatal() -> None:
    steps = [*OK_STEPS[:2], {"name": "start", "ok": False, "error": {"type": "AssertionError", "message": ""}}]
    assert outcome("result.unknown-enum-value", {}, steps=steps) == Outcome.FATAL


def test_rule_with_nothing_to_mutate_is_not_applicable() -> None:
    assert outcome("result.unknown-enum-value", {}, applied=[]) == Outcome.NOT_APPLICABLE


def test_deadline_is_a_hang_never_a_pass() -> None:
    assert outcome("event.unknown-type", {}, timed_out=True) == Outcome.HANG


def test_shim_applied_reads_each_line_and_survives_a_torn_last_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"dir": "shim", "msg": {"argv": []}}\n{"dir": "shim", "msg": {"applied": ["a"]}}\n'
                    '{"dir": "cli->sdk", "msg": {}}\n{"dir": "shim", "msg": {"appl')
    assert shim_applied(path) == ["a"]
    assert shim_applied(tmp_path / "missing.jsonl") is None


HISTORY_STEPS = [*OK_STEPS[:4], {"name": "get_history", "ok": True}, {"name": "ping", "ok": True},
                 {"name": "stop", "ok": True}]


@pytest.mark.parametrize(("rule", "observed", "expected"), [
    ("history.unknown-type", {"canary": True, "mutated": event("unknown", raw_type="compat_matrix.unknown_event")},
     Outcome.SURFACED),
    ("history.unknown-type", {"canary": True, "mutated": None}, Outcome.IGNORED),
    ("history.unknown-enum-value", {"canary": True, "mutated": event("system.message", has_unknown_value=True)},
     Outcome.SURFACED),
    ("history.unknown-enum-value", {"canary": True, "mutated": None}, Outcome.LOST),
    ("history.extra-field", {"canary": True, "mutated": event("session.info")}, Outcome.IGNORED),
    ("history.extra-field", {"canary": True, "mutated": event("session.info", has_unknown_field=True)},
     Outcome.SURFACED),
    ("history.extra-field", {"canary": False, "mutated": event("session.info")}, Outcome.LOST),
])
def test_history_is_judged_on_what_the_call_returned(rule: str, observed: dict, expected: Outcome) -> None:
    assert outcome(rule, observed, steps=HISTORY_STEPS) == expected


def test_a_history_call_that_raises_on_one_event_is_fatal_to_the_application() -> None:
    # The application gets an exception and none of its history (github-copilot-sdk 1.0.27).
    failed = [{**s, "ok": False, "error": {"type": "ValueError", "message": "'x' is not a valid SystemMessageRole"}}
              if s["name"] == "get_history" else s for s in HISTORY_STEPS]
    assert outcome("history.unknown-enum-value", {}, steps=failed) == Outcome.FATAL
    dead = [{**s, "ok": False, "error": {"type": "ConnectionError", "message": "gone"}}
            if s["name"] in ("get_history", "ping") else s for s in HISTORY_STEPS]
    assert outcome("history.unknown-enum-value", {}, steps=dead) == Outcome.FATAL


def control(name: str, observed: dict, loop_errors: list[str] | None = None,
            steps: list[dict] | None = None) -> Outcome:
    doc = {"schema": 1, "steps": steps or OK_STEPS, "observed": observed, "loop_errors": loop_errors or []}
    stdout = AGENT_REPORT_PREFIX + json.dumps(doc)
    return classify_control(parse_report(stdout), Result(("python",), 0, stdout, "", 0.0, 1.0, False), name,
                            []).outcome


def test_a_control_passes_when_the_unmutated_steps_work() -> None:
    assert control("result.control", {}) == Outcome.PASSED
    assert control("event.control", {"canary": True}) == Outcome.PASSED
    assert control("history.control", {"canary": True}, steps=HISTORY_STEPS) == Outcome.PASSED


def test_a_control_fails_on_what_a_rule_of_its_kind_would_be_judged_by() -> None:
    # The CLI's own stored session.start cannot be read back (0.1.10-0.1.14 against 0.0.388).
    raising = [{**s, "ok": False, "error": {"type": "AssertionError", "message": ""}}
               if s["name"] == "get_history" else s for s in HISTORY_STEPS]
    assert control("history.control", {}, steps=raising) == Outcome.FAILED
    assert control("event.control", {"canary": False}) == Outcome.FAILED
    # A decode error of the CLI's own event would be read as the mutation's by a notification rule.
    assert control("result.control", {}, [LOOP_ERROR]) == Outcome.FAILED
    # Stopping is judged by the handshake, not by any rule.
    stop_failed = [{**s, "ok": False, "error": {"type": "StopError", "message": "x"}} if s["name"] == "stop" else s
                   for s in OK_STEPS]
    assert control("result.control", {}, steps=stop_failed) == Outcome.PASSED


def _answer(transcript: Path, *entries: dict) -> dict | None:
    transcript.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return injected_answer(transcript)


def test_the_answer_to_the_cli_request_is_read_from_the_transcript(tmp_path: Path) -> None:
    sent = {"t": 1.0, "dir": "shim->sdk",
            "msg": {"jsonrpc": "2.0", "id": 7341, "method": "compatMatrix.unknownRequest"}}
    answered = {"t": 1.25, "dir": "sdk->shim", "msg": {"jsonrpc": "2.0", "id": 7341,
                                                       "error": {"code": -32601, "message": "Method not found"}}}
    answer = _answer(tmp_path / "t.jsonl", sent, answered)
    assert answer == {"after_s": 0.25, "error": {"code": -32601, "message": "Method not found"}, "has_result": False}
    assert _answer(tmp_path / "u.jsonl", sent) is None


@pytest.mark.parametrize(("answer", "expected"), [
    ({"after_s": 0.01, "error": {"code": -32601, "message": "Method not found"}, "has_result": False},
     Outcome.SURFACED),
    ({"after_s": 0.01, "error": {"code": -32603, "message": "internal"}, "has_result": False}, Outcome.DOWNGRADED),
    ({"after_s": 0.01, "error": None, "has_result": True}, Outcome.DOWNGRADED),
    (None, Outcome.LOST),
])
def test_an_unknown_request_must_be_answered_method_not_found(answer: dict | None, expected: Outcome) -> None:
    doc = {"schema": 1, "steps": OK_STEPS, "observed": {}, "loop_errors": []}
    stdout = AGENT_REPORT_PREFIX + json.dumps(doc)
    res = Result(("python",), 0, stdout, "", 0.0, 1.0, False)
    assert classify_tolerance(parse_report(stdout), res, "request.unknown-method", ["x"], answer).outcome == expected
