"""A batch: every rule of one kind through one relay, each session its own rule."""

from __future__ import annotations

import pytest

from matrix.families.copilot import shim
from matrix.families.copilot.shim import Batch

EVENT_RULES = ["event.unknown-type", "event.extra-field", "event.unknown-enum-value", "field.type-change"]
CONNECTION_RULES = ["result.extra-field", "result.capabilities", "result.unknown-enum-value",
                    "notification.unknown-method", "request.unknown-method"]


def create(b: Batch, req_id: int, session: str) -> list[dict] | None:
    b.seen_request({"jsonrpc": "2.0", "id": req_id, "method": "session.create", "params": {}})
    return b.to_sdk({"jsonrpc": "2.0", "id": req_id, "result": {"sessionId": session}})


def test_each_session_gets_the_next_rule_and_its_own_event() -> None:
    b = Batch(EVENT_RULES)
    for n in range(len(EVENT_RULES)):
        assert create(b, n + 1, f"s{n}") is None  # the result itself relayed unchanged
    assert b.sessions == {f"s{n}": rule for n, rule in enumerate(EVENT_RULES)}
    sent = [(m["params"]["sessionId"], m["params"]["event"]["type"]) for _delay, m in b.later]
    assert sent[0] == ("s0", shim.UNKNOWN_EVENT_TYPE)
    assert ("s1", "session.info") in sent and ("s2", "system.message") in sent
    assert {rule for rule, _ in b.applied} == set(EVENT_RULES)
    assert b.owner(b.later[0][1]) == "event.unknown-type"
    assert b.owner({"jsonrpc": "2.0", "method": "session.event", "params": {"sessionId": "s3"}}) == "field.type-change"


def test_a_session_beyond_the_rules_is_relayed_unchanged() -> None:
    b = Batch(EVENT_RULES[:1])
    create(b, 1, "s0")
    b.later.clear()
    assert create(b, 2, "s1") is None and not b.later and b.owner({"params": {"sessionId": "s1"}}) is None


def test_history_rules_mutate_the_history_of_their_own_session_only() -> None:
    rules = ["history.unknown-type", "history.extra-field"]
    b = Batch(rules)
    create(b, 1, "a")
    create(b, 2, "b")
    b.seen_request({"jsonrpc": "2.0", "id": 9, "method": shim.HISTORY_METHOD, "params": {"sessionId": "b"}})
    out = b.to_sdk({"jsonrpc": "2.0", "id": 9, "result": {"events": []}})
    assert out is not None
    types = [e["type"] for e in out[0]["result"]["events"]]
    assert types == ["session.info", "session.info"]  # extra-field's event, then the canary
    assert b.applied == [("history.extra-field", f"{shim.HISTORY_METHOD}: +session.info event, +canary")]
    assert b.owner({"id": 9, "result": {}}) == "history.extra-field"


def test_connection_rules_apply_together_to_the_one_connection() -> None:
    b = Batch(CONNECTION_RULES)
    b.seen_request({"jsonrpc": "2.0", "id": 1, "method": "connect", "params": {}})
    out = b.to_sdk({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": 3, "taskKinds": ["a"]}})
    assert out is not None
    result = out[0]["result"]
    assert shim.UNKNOWN_FIELD in result and result["capabilities"] == [shim.UNKNOWN_CAPABILITY]
    assert result["taskKinds"] == ["a", shim.UNKNOWN_ENUM_VALUE]
    methods = [m.get("method") for m in out[1:]]
    assert sorted(methods) == sorted([shim.UNKNOWN_METHOD, shim.UNKNOWN_REQUEST])  # each once, after the answer
    assert {rule for rule, _ in b.applied} == set(CONNECTION_RULES)
    assert b.is_answer_to_injected({"id": shim.INJECTED_REQUEST_ID, "error": {"code": -32601}})


@pytest.mark.parametrize("rules", [["event.unknown-type", "result.extra-field"], ["event.unknown-type"] * 2,
                                   ["no.such-rule"]])
def test_a_batch_is_distinct_rules_of_one_scope(rules: list[str]) -> None:
    with pytest.raises(ValueError, match=r"a batch is|unknown rule"):
        Batch(rules)
