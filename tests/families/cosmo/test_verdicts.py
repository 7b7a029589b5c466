"""Cosmo verdicts from fake agent reports and stand-in logs (our own logic only)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from matrix.execute.proc import Result
from matrix.families.cosmo.checks import CHECKS
from matrix.families.cosmo.probe import SCENARIOS, scenario_for
from matrix.families.cosmo.standin import API
from matrix.families.cosmo.verdicts import UNKNOWN, judge
from matrix.model import Outcome
from matrix.probes.report import AGENT_REPORT_PREFIX, parse_report

CANARY = {"class": "ModelTextEvent", "type": "model-text", "text": "canary"}
INSTALLED = {"name": "cosmo-ai-sdk", "version": "9.9.9"}


def verdict(check: str, observed: dict[str, Any] | None = None, log: list[dict[str, Any]] | None = None,
            timed_out: bool = False, **report: Any) -> tuple[Outcome, str]:
    doc = {"schema": 1, "steps": report.pop("steps", []), "observed": observed or {}, "installed": INSTALLED,
           **report}
    stdout = AGENT_REPORT_PREFIX + json.dumps(doc)
    res = Result(("python",), None if timed_out else 0, stdout, "", 0.0, 1.0, timed_out)
    v = judge(check, parse_report(stdout), res, log or [], scenario_for(check))
    return v.outcome, v.error.message if v.error else ""


def enum_value(value: str, kind: str = "enum", in_list: bool = False) -> dict[str, Any]:
    return {"kind": kind, "value": value, "in_list": in_list}


def test_every_check_has_a_scenario_and_every_scenario_a_check() -> None:
    assert {c.name for c in CHECKS} == {k for k in SCENARIOS if not k.startswith("_")}


@pytest.mark.parametrize(("events", "expected"), [
    ([{"class": "UnknownEvent", "raw_type": "compat-matrix.new-frame"}, CANARY], Outcome.SURFACED),
    ([CANARY], Outcome.IGNORED),
    ([{"class": "UnknownEvent", "raw_type": "compat-matrix.new-frame"}], Outcome.FATAL),  # no canary: it died
])
def test_unknown_frame_type(events: list[dict[str, Any]], expected: Outcome) -> None:
    assert verdict("frame.unknown-type", {"events": events})[0] == expected


@pytest.mark.parametrize(("delivered", "expected"), [
    ({"class": "ModelTextEvent", "text": "mutated", "new_field": None}, Outcome.IGNORED),
    ({"class": "ModelTextEvent", "text": "mutated", "new_field": "x"}, Outcome.SURFACED),
    ({"class": "UnknownEvent", "raw_type": "model-text", "payload": {"text": "mutated"}}, Outcome.DOWNGRADED),
    (None, Outcome.LOST),
])
def test_known_frame_with_an_extra_field(delivered: dict[str, Any] | None, expected: Outcome) -> None:
    events = [delivered, CANARY] if delivered else [CANARY]
    assert verdict("frame.extra-field", {"events": events})[0] == expected


def test_a_session_that_never_started_is_our_problem_not_a_tolerance_verdict() -> None:
    steps = [{"name": "session", "ok": False, "error": {"type": "SessionStartError", "message": "no"}}]
    assert verdict("frame.malformed", {"events": []}, steps=steps)[0] == Outcome.HARNESS_ERROR


def error_events(code: dict[str, Any] | None, raw: bool = False) -> list[dict[str, Any]]:
    if raw:
        return [{"class": "UnknownEvent", "raw_type": "error", "payload": {"type": "error"}}, CANARY]
    return [{"class": "ErrorEvent", "code": code}, CANARY]


@pytest.mark.parametrize(("unknown", "expected"), [
    (error_events(enum_value(UNKNOWN)), Outcome.SURFACED),
    (error_events(enum_value(UNKNOWN, kind="str")), Outcome.DOWNGRADED),
    (error_events(None, raw=True), Outcome.DOWNGRADED),  # the whole event lost its type
    ([CANARY], Outcome.LOST),
    (error_events(enum_value(UNKNOWN))[:1], Outcome.FATAL),
])
def test_unknown_error_code(unknown: list[dict[str, Any]], expected: Outcome) -> None:
    known = error_events(enum_value("internal_error", in_list=True))
    assert verdict("enum.error-code", {"known": known, "unknown": unknown})[0] == expected


def test_an_open_enum_must_still_give_the_member_for_a_known_value() -> None:
    known = error_events(enum_value("internal_error", in_list=False))  # a pseudo-member for a named value
    outcome, message = verdict("enum.error-code", {"known": known, "unknown": error_events(enum_value(UNKNOWN))})
    assert outcome == Outcome.DOWNGRADED and "internal_error" in message


@pytest.mark.parametrize(("unknown", "expected"), [
    ({"ok": True, "value": enum_value(UNKNOWN)}, Outcome.SURFACED),
    ({"ok": True, "value": enum_value(UNKNOWN, kind="str")}, Outcome.DOWNGRADED),
    ({"ok": True, "value": {"kind": "NoneType", "value": None}}, Outcome.LOST),
    ({"ok": False, "error": {"type": "VerifyError", "message": "invalid_response"}}, Outcome.FATAL),
])
def test_rest_enums(unknown: dict[str, Any], expected: Outcome) -> None:
    known = {"ok": True, "value": enum_value("api_key", in_list=True)}
    assert verdict("enum.credential-kind", {"known": known, "unknown": unknown})[0] == expected


def test_a_release_without_the_call_is_not_applicable_and_a_hang_is_a_hang() -> None:
    assert verdict("enum.usage-status", not_applicable="no usage call")[0] == Outcome.NOT_APPLICABLE
    assert verdict("enum.usage-status", timed_out=True)[0] == Outcome.HANG


def start(body: dict[str, Any], header: str | None) -> dict[str, Any]:
    return {"kind": "request", "method": "POST", "path": f"{API}/realtime/session/ws-start", "body": body,
            "sdk_header": header}


def test_identity_block_and_header_are_compared_with_what_is_installed() -> None:
    good = start({"type": "session-config", "sdk": INSTALLED}, "cosmo-ai-sdk/9.9.9")
    assert verdict("identity.sdk-block", log=[good])[0] == Outcome.KEPT
    assert verdict("identity.rest-header", log=[good])[0] == Outcome.KEPT
    stale = start({"type": "session-config", "sdk": {"name": "cosmo-ai-sdk", "version": "0.0.0"}}, "cosmo-ai-sdk/0.0.0")
    outcome, message = verdict("identity.sdk-block", log=[stale])
    assert outcome == Outcome.BROKEN and "9.9.9" in message
    verify = {"kind": "request", "method": "GET", "path": f"{API}/realtime/verify", "sdk_header": None}
    outcome, message = verdict("identity.rest-header", log=[good, verify])
    assert outcome == Outcome.BROKEN and "1 of 2" in message and "verify" in message
    assert verdict("identity.sdk-block", log=[])[0] == Outcome.HARNESS_ERROR


def test_exports_and_version_mismatch() -> None:
    ok = {"exports": {"ok": True, "SDK_NAME": "cosmo-ai-sdk", "SDK_VERSION": "9.9.9"}}
    assert verdict("identity.exports", ok)[0] == Outcome.KEPT
    missing = {"exports": {"ok": False, "error": {"type": "ImportError", "message": "cannot import name 'SDK_NAME' "
                                                  "from 'cosmo_ai' (/home/x/site-packages/cosmo_ai/__init__.py)"},
                           "internal": {"SDK_NAME": "cosmo-ai-sdk", "SDK_VERSION": "9.9.9"}}}
    outcome, message = verdict("identity.exports", missing)
    assert outcome == Outcome.BROKEN and "/home/x" not in message and "not exported" in message
    typed = {"raised": {"type": "VersionMismatchError", "mro": ["VersionMismatchError", "SessionStartError"]}}
    assert verdict("identity.version-mismatch", typed)[0] == Outcome.KEPT
    assert verdict("identity.version-mismatch", {"raised": {"type": "RuntimeError", "mro": ["RuntimeError"]}})[0] \
        == Outcome.BROKEN
    assert verdict("identity.version-mismatch", {"raised": None})[0] == Outcome.BROKEN


def test_strictness_lists_the_keys_and_what_the_application_was_told() -> None:
    config = start({"type": "session-config", "version": "1.0"}, None)
    refused = {"kind": "rejected", "where": "session-start", "unknown": ["version"]}
    told = {"type": "SessionStartError", "message": "unknown field: version"}
    steps = [{"name": "session", "ok": False, "error": told}]
    outcome, message = verdict("strict.session-start", log=[config, refused], steps=steps)
    assert outcome == Outcome.BROKEN and "version" in message and "SessionStartError" in message
    dropped = {"kind": "rejected", "where": "data-channel", "unknown": ["options"], "frame": {"type": "send-text"}}
    frame = {"kind": "frame", "frame": {"type": "send-text"}}
    outcome, message = verdict("strict.data-channel", log=[config, frame, dropped])
    assert outcome == Outcome.BROKEN and "send-text: options" in message
    assert verdict("strict.session-start", log=[config, dropped])[0] == Outcome.KEPT  # another place's finding
    assert verdict("strict.data-channel", log=[config, frame])[0] == Outcome.KEPT


def test_sdk_raised_error_codes() -> None:
    closed = {"sdk_raised": {"cosmo_ai.errors.SessionStartErrorCode": {"closed": True}}}
    assert verdict("enum.sdk-raised-closed", closed)[0] == Outcome.KEPT
    opened = {"sdk_raised": {"cosmo_ai.errors.DialErrorCode": {"closed": False}}}
    outcome, message = verdict("enum.sdk-raised-closed", opened)
    assert outcome == Outcome.BROKEN and "DialErrorCode" in message


def test_a_release_that_cannot_be_imported_crashed() -> None:
    outcome, message = verdict("identity.exports", import_error={"type": "SyntaxError", "message": "bad"})
    assert outcome == Outcome.CRASHED and message == "bad"


@pytest.mark.parametrize("check", ["identity.version-mismatch", "identity.version-mismatch-frame"])
def test_version_mismatch_must_be_a_start_error_that_still_says_so(check: str) -> None:
    g4 = {"raised": {"type": "SessionStartError", "mro": ["SessionStartError", "RealtimeError"],
                     "code": "handshake_failed", "server_code": "version_mismatch"}}
    assert verdict(check, g4)[0] == Outcome.KEPT
    silent = {"raised": {"type": "SessionStartError", "mro": ["SessionStartError"], "code": "ready_timeout",
                         "server_code": None}}
    outcome, message = verdict(check, silent)
    assert outcome == Outcome.BROKEN and "nothing in it says version_mismatch" in message
    # 0.1-0.5 return from start() and hand the refusal over as an event.
    handed = {"raised": None, "events": [{"class": "ErrorEvent", "raw_type": None,
                                          "code": enum_value("version_mismatch", in_list=True)}]}
    outcome, message = verdict(check, handed)
    assert outcome == Outcome.BROKEN and "handed ErrorEvent (code 'version_mismatch')" in message


def _typed(value: str, kind: str = "enum", in_list: bool = False) -> dict[str, Any]:
    return {"class": "TranscriptDeltaEvent", "type": "transcript", "at_path": enum_value(value, kind, in_list)}


KNOWN_ROLE = [_typed("assistant", in_list=True), CANARY]


@pytest.mark.parametrize(("unknown", "expected", "words"), [
    ([_typed(UNKNOWN), CANARY], Outcome.SURFACED, ""),
    ([_typed(UNKNOWN, kind="str"), CANARY], Outcome.SURFACED, ""),  # a Literal's raw value, handed through
    ([{"class": "UnknownEvent", "raw_type": "transcript"}, CANARY], Outcome.DOWNGRADED, "became an UnknownEvent"),
    ([_typed("assistant", in_list=True), CANARY], Outcome.DOWNGRADED, "arrived as"),
    ([CANARY], Outcome.LOST, "never reached"),
    ([{"class": "UnknownEvent", "raw_type": "transcript"}], Outcome.FATAL, "stopped delivering"),
])
def test_a_closed_set_read_from_the_release(unknown: list[dict[str, Any]], expected: Outcome, words: str) -> None:
    outcome, message = verdict("set.transcript.role", {"known": KNOWN_ROLE, "unknown": unknown})
    assert outcome == expected and words in message


def test_a_closed_set_whose_known_control_fails_is_ours_to_fix() -> None:
    outcome, message = verdict("set.transcript.role", {"known": [{"class": "UnknownEvent", "raw_type": "transcript"},
                                                                 CANARY], "unknown": [CANARY]})
    assert outcome == Outcome.HARNESS_ERROR and "does not fit this release" in message


def test_a_closed_set_scenario_sends_the_known_frame_then_the_unknown_one() -> None:
    from matrix.families.cosmo.checks import FRAME_TEMPLATES

    scenario = scenario_for("set.user-speech-timeout.action.type")
    (known, canary1), (unknown, canary2) = scenario.sessions
    assert known == FRAME_TEMPLATES["user-speech-timeout"] and canary1 == canary2
    assert unknown["action"] == {"type": UNKNOWN, "text": "still there?"} and known["action"]["type"] == "say"
