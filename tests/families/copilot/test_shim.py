"""The shim's framing, relay and each mutation rule, on our own messages."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from matrix.families.copilot import shim
from matrix.families.copilot.shim import RULES, Mutator, encode, read_frame
from tests.families.copilot.relay import FRAMES, relay


def frames(*msgs: dict) -> io.BytesIO:
    return io.BytesIO(b"".join(encode(m) for m in msgs))


def test_read_frame_roundtrip_and_raw_bytes_kept() -> None:
    raw = b'Content-Length: 17\r\nContent-Type: application/json\r\n\r\n{"jsonrpc":"2.0"}'
    frame = read_frame(io.BytesIO(raw))
    assert frame is not None and frame.raw == raw and frame.message() == {"jsonrpc": "2.0"}
    stream = frames({"id": 1}, {"id": 2})
    assert [read_frame(stream).message()["id"], read_frame(stream).message()["id"]] == [1, 2]  # type: ignore[union-attr]
    assert read_frame(stream) is None


def test_body_with_multibyte_characters_uses_byte_length() -> None:
    msg = {"text": "héllo ✓"}
    frame = read_frame(io.BytesIO(encode(msg)))
    assert frame is not None and frame.message() == msg


def test_no_rule_relays_unchanged() -> None:
    m = Mutator(None)
    m.seen_request({"id": 1, "method": "ping"})
    assert m.to_sdk({"id": 1, "result": {"protocolVersion": 3}}) is None


def handshake(rule: str, method: str = "connect") -> list[dict] | None:
    m = Mutator(rule)
    m.seen_request({"jsonrpc": "2.0", "id": 7, "method": method, "params": {}})
    return m.to_sdk({"jsonrpc": "2.0", "id": 7, "result": {"protocolVersion": 3, "ok": True}})


def test_result_extra_field_on_connect_ping_status() -> None:
    for method in ("connect", "ping", "status.get"):
        out = handshake("result.extra-field", method)
        assert out is not None and shim.UNKNOWN_FIELD in out[0]["result"]
        assert out[0]["result"]["protocolVersion"] == 3
    assert handshake("result.extra-field", "session.create") is None


def test_result_capabilities_added_to_handshake_only() -> None:
    out = handshake("result.capabilities")
    assert out is not None and out[0]["result"]["capabilities"] == [shim.UNKNOWN_CAPABILITY]
    assert handshake("result.capabilities", "status.get") is None


def test_unknown_notification_follows_the_handshake_once() -> None:
    m = Mutator("notification.unknown-method")
    m.seen_request({"id": 1, "method": "connect"})
    out = m.to_sdk({"id": 1, "result": {}})
    assert out is not None and out[1]["method"] == shim.UNKNOWN_METHOD and "id" not in out[1]
    m.seen_request({"id": 2, "method": "ping"})
    assert m.to_sdk({"id": 2, "result": {}}) is None


@pytest.mark.parametrize("rule", [r.id for r in RULES.values() if r.category == "event"])
def test_event_rules_schedule_the_event_then_a_canary_after_session_create(rule: str) -> None:
    m = Mutator(rule)
    m.seen_request({"id": 3, "method": "session.create"})
    assert m.to_sdk({"id": 3, "result": {"sessionId": "s-1"}}) is None  # the result itself is relayed as is
    (d1, first), (d2, second) = m.later
    assert 0 < d1 < d2
    assert first["method"] == second["method"] == "session.event"
    event = first["params"]["event"]
    assert first["params"]["sessionId"] == "s-1" and event["id"] == shim.MUTATED_EVENT_ID
    assert second["params"]["event"]["id"] == shim.CANARY_EVENT_ID
    if rule == "event.unknown-type":
        assert event["type"] == shim.UNKNOWN_EVENT_TYPE
    elif rule == "event.extra-field":
        assert shim.UNKNOWN_FIELD in event["data"] and event["type"] == "session.info"
    elif rule == "event.unknown-enum-value":
        assert event["data"]["role"] == shim.UNKNOWN_ENUM_VALUE
    else:
        assert event["data"]["name"] == 42


@pytest.mark.parametrize(("rule", "check"), [
    ("history.unknown-type", lambda e: e["type"] == shim.UNKNOWN_EVENT_TYPE),
    ("history.unknown-enum-value",
     lambda e: e["type"] == "system.message" and e["data"]["role"] == shim.UNKNOWN_ENUM_VALUE),
    ("history.extra-field", lambda e: e["type"] == "session.info" and shim.UNKNOWN_FIELD in e["data"]),
])
def test_history_rules_add_the_event_and_a_canary_to_the_stored_events(rule: str, check) -> None:  # type: ignore[no-untyped-def]
    m = Mutator(rule)
    m.seen_request({"id": 3, "method": "session.create"})
    assert m.to_sdk({"id": 3, "result": {"sessionId": "s-1"}}) is None and m.later == []  # nothing pushed
    m.seen_request({"id": 4, "method": "session.getMessages"})
    stored = {"id": "e1", "type": "session.start", "data": {}}
    out = m.to_sdk({"id": 4, "result": {"events": [stored]}})
    assert out is not None
    events = out[0]["result"]["events"]
    assert events[0] == stored and check(events[1]) and events[1]["id"] == shim.MUTATED_EVENT_ID
    assert events[2]["id"] == shim.CANARY_EVENT_ID and "sessionId" not in events[1]
    m.seen_request({"id": 5, "method": "ping"})
    assert m.to_sdk({"id": 5, "result": {"events": []}}) is None  # only the history call


def test_request_rule_sends_one_request_with_an_id_and_keeps_the_answer_from_the_cli() -> None:
    m = Mutator("request.unknown-method")
    m.seen_request({"id": "uuid-1", "method": "connect"})
    out = m.to_sdk({"jsonrpc": "2.0", "id": "uuid-1", "result": {}})
    assert out is not None and len(out) == 2
    request = out[1]
    assert request == {"jsonrpc": "2.0", "id": shim.INJECTED_REQUEST_ID, "method": shim.UNKNOWN_REQUEST,
                       "params": {"value": 1}}
    m.seen_request({"id": "uuid-2", "method": "ping"})
    assert m.to_sdk({"id": "uuid-2", "result": {}}) is None  # once
    answer = {"jsonrpc": "2.0", "id": shim.INJECTED_REQUEST_ID, "error": {"code": -32601, "message": "nope"}}
    assert m.is_answer_to_injected(answer)
    assert not m.is_answer_to_injected({"jsonrpc": "2.0", "id": 9, "result": {}})
    assert not Mutator("notification.unknown-method").is_answer_to_injected(answer)


def test_unknown_enum_value_extends_enum_lists_only_when_present() -> None:
    m = Mutator("result.unknown-enum-value")
    m.seen_request({"id": 1, "method": "connect"})
    out = m.to_sdk({"id": 1, "result": {"ok": True, "taskKinds": ["agent", "shell"]}})
    assert out is not None and out[0]["result"]["taskKinds"] == ["agent", "shell", shim.UNKNOWN_ENUM_VALUE]
    m.seen_request({"id": 2, "method": "connect"})
    assert m.to_sdk({"id": 2, "result": {"ok": True}}) is None and len(m.applied) == 1


def test_unknown_rule_is_rejected_with_the_valid_ones() -> None:
    with pytest.raises(ValueError, match=r"result\.extra-field"):
        Mutator("teleport")


def test_relay_process_is_transparent_and_records(tmp_path: Path) -> None:
    """The real shim script between us and an echo 'CLI': bytes come back unchanged and the
    transcript holds both directions."""
    transcript = tmp_path / "t.jsonl"
    res = relay(tmp_path, transcript)
    assert res.returncode == 0, res.stderr
    assert res.stdout == FRAMES
    entries = [json.loads(line) for line in transcript.read_text().splitlines()]
    dirs = [e["dir"] for e in entries if e["dir"] != "shim"]
    assert dirs.count("sdk->cli") == 2 and dirs.count("cli->sdk") == 2


def test_the_event_control_sends_only_the_well_formed_event() -> None:
    m = Mutator("event.control")
    m.seen_request({"id": 3, "method": "session.create"})
    assert m.to_sdk({"id": 3, "result": {"sessionId": "s-1"}}) is None
    [(_, only)] = m.later
    assert only["params"]["event"]["id"] == shim.CANARY_EVENT_ID and m.applied == ["after session.create: canary only"]


def test_the_history_control_appends_only_the_well_formed_event() -> None:
    m = Mutator("history.control")
    m.seen_request({"id": 4, "method": "session.getMessages"})
    stored = {"id": "e1", "type": "session.start", "data": {}}
    out = m.to_sdk({"id": 4, "result": {"events": [stored]}})
    assert out is not None and [e["id"] for e in out[0]["result"]["events"]] == ["e1", shim.CANARY_EVENT_ID]


def test_the_result_control_relays_everything_unchanged() -> None:
    m = Mutator("result.control")
    m.seen_request({"id": 1, "method": "connect"})
    assert m.to_sdk({"id": 1, "result": {"taskKinds": ["agent"]}}) is None and m.applied == [] and m.later == []


def test_every_rule_has_a_control() -> None:
    assert {shim.control_of(r) for r in RULES} == set(shim.CONTROL_DESCRIPTIONS)
