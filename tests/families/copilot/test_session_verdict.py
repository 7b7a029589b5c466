"""The session verdict from recorded reports: what a user meets decides it (a turn that never
settles, an exception, a scripted turn that did not hold, an event lost or delivered as the
SDK's unknown, a process left running), and a CLI with no local route is not-applicable."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from matrix.execute.proc import Result
from matrix.families.copilot.session.model_standin import file_name
from matrix.families.copilot.session.verdict import NO_ROUTE, Evidence, classify_session, cli_events
from matrix.model import Outcome
from matrix.probes.report import AGENT_REPORT_PREFIX, parse_report

NONCES = {"reply": "r1", "tool": "t1", "approved": "a1", "denied": "d1"}
CALLS = [{"path": "/v1/chat/completions", "messages": [{"role": "tool", "text": "T1"}]}]
SENT = ["session.start", "user.message", "assistant.message", "session.idle"]


def live(*types: str, unknown: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    return [{"type": t, "raw_type": t, "unknown": t in unknown} for t in types]


def turns(**override: dict[str, Any]) -> list[dict[str, Any]]:
    base = {"reply": {"reply": "compat-matrix reply r1."},
            "tool": {"tool_ran": ["t1"], "reply": "compat-matrix tool t1. The tool said: T1"},
            "approved": {"asked": [{"kind": "shell", "allowed": True}]},
            "denied": {"asked": [{"kind": "shell", "allowed": False}]}}
    return [{"name": n, "ok": True, "seconds": 0.2, "idle": True, **base[n], **override.get(n, {})} for n in base]


def report(steps: list[dict[str, Any]] | None = None, observed: dict[str, Any] | None = None, **extra: Any) -> Any:
    doc = {"schema": 1, "steps": steps or [{"name": n, "ok": True} for n in ("start", "create_session", "stop")],
           "observed": {"turns": turns(), "live": live(*SENT), **(observed or {})}, **extra}
    return parse_report(AGENT_REPORT_PREFIX + json.dumps(doc))


OK = Result(("agent",), 0, "", "", 1.0, 1.0, False)
NO_IDLE = {"type": "TimeoutError", "message": "no idle", "timeout": True}
WRITTEN = frozenset({file_name("a1")})


def judge(rep: Any, sent: list[str] = SENT, calls: list[dict[str, Any]] = CALLS,
          written: frozenset[str] = WRITTEN) -> Any:
    return classify_session(rep, OK, Evidence(sent, calls, written), NONCES)


def test_every_turn_holding_and_every_event_typed_is_compatible() -> None:
    verdict, facts = judge(report())
    assert verdict.outcome == Outcome.COMPATIBLE
    assert facts.route == "provider" and facts.tool_ran and facts.model_saw_tool
    assert facts.events == dict.fromkeys(SENT, "typed") and facts.asked == ["shell", "shell"]


def test_an_event_delivered_as_the_sdks_unknown_is_surfaced() -> None:
    sent = [*SENT, "model.call_start"]
    rep = report(observed={"live": live(*sent, unknown=("model.call_start",))})
    verdict, facts = judge(rep, sent)
    assert verdict.outcome == Outcome.SURFACED and "model.call_start" in verdict.error.message
    assert facts.events["model.call_start"] == "unknown"


def test_an_event_the_cli_sent_that_never_reached_the_application_is_lost() -> None:
    verdict, facts = judge(report(), [*SENT, "assistant.idle"])
    assert verdict.outcome == Outcome.LOST and facts.events["assistant.idle"] == "missed"
    assert "assistant.idle" in verdict.error.message


def test_an_event_sent_only_after_the_application_closed_the_session_is_said_not_lost() -> None:
    sent = [*SENT, "session.background_tasks_changed"]
    closed = classify_session(report(), OK, Evidence(sent, CALLS, WRITTEN, ["session.background_tasks_changed"]),
                              NONCES)
    assert closed[0].outcome == Outcome.COMPATIBLE
    assert closed[1].events["session.background_tasks_changed"] == "missed after close"
    # A copy sent while the session was open and never handed over is lost, whatever came after.
    twice = [*sent, "session.background_tasks_changed"]
    open_too = classify_session(report(), OK, Evidence(twice, CALLS, WRITTEN, ["session.background_tasks_changed"]),
                                NONCES)
    assert open_too[0].outcome == Outcome.LOST


def test_a_copy_delivered_after_close_lends_nothing_to_an_event_missed_while_open() -> None:
    # Two copies after close, one delivered: no unknown without a type is left over to stand in
    # for the open session's event that never arrived.
    sent = [*SENT, "session.background_tasks_changed", "session.background_tasks_changed", "model.call_start"]
    rep = report(observed={"live": live(*SENT, "session.background_tasks_changed")})
    verdict, facts = classify_session(rep, OK, Evidence(sent, CALLS, WRITTEN, ["session.background_tasks_changed"] * 2),
                                      NONCES)
    assert facts.events["session.background_tasks_changed"] == "missed after close"
    assert facts.events["model.call_start"] == "missed" and verdict.outcome == Outcome.LOST


def test_the_transcript_says_which_events_came_after_the_first_close_request(tmp_path: Path) -> None:
    def event(kind: str) -> dict[str, Any]:
        return {"dir": "cli->sdk", "msg": {"method": "session.event", "params": {"event": {"type": kind}}}}
    lines = [event("session.idle"), {"dir": "sdk->cli", "msg": {"id": 1, "method": "session.destroy"}},
             event("session.shutdown"), {"dir": "sdk->cli", "msg": {"id": 2, "method": "session.destroy"}},
             event("session.background_tasks_changed")]
    transcript = tmp_path / "session.jsonl"
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines) + '{"cut short')
    assert cli_events(transcript) == (["session.idle", "session.shutdown", "session.background_tasks_changed"],
                                      ["session.shutdown", "session.background_tasks_changed"])


@pytest.mark.parametrize(("change", "why"), [
    ({"tool": {"tool_ran": []}}, "tool never ran"),
    ({"reply": {"reply": None}}, "no reply"),
])
def test_a_turn_that_does_not_do_what_its_script_says_degrades_the_cell(change: dict[str, Any], why: str) -> None:
    verdict, facts = judge(report(observed={"turns": turns(**change)}))
    assert verdict.outcome == Outcome.DEGRADED and why in verdict.error.message
    assert any(not t["held"] for t in facts.turns)


def test_an_approval_that_did_not_run_and_a_denial_that_did_both_degrade_it() -> None:
    assert "approved the tool, but it never ran" in judge(report(), written=frozenset())[0].error.message
    denied = judge(report(), written=frozenset({file_name("a1"), file_name("d1")}))[0]
    assert denied.outcome == Outcome.DEGRADED and "denied the tool, and it ran all the same" in denied.error.message


def test_the_tools_result_the_model_never_saw_degrades_it() -> None:
    verdict, facts = judge(report(), calls=[{"path": "/v1/chat/completions", "messages": []}])
    assert verdict.outcome == Outcome.DEGRADED and "model never saw its result" in verdict.error.message
    assert facts.model_saw_tool is False


def test_a_turn_that_never_settles_is_a_hang_and_an_exception_a_crash() -> None:
    steps = [{"name": "start", "ok": True}, {"name": "create_session", "ok": True},
             {"name": "turn:tool", "ok": False, "error": dict(NO_IDLE)}]
    hung = judge(report(steps=steps, observed={"turns": turns()[:2]}))[0]
    assert hung.outcome == Outcome.HANG and hung.error.message.startswith("tool:")
    steps[-1]["error"] = {"type": "ValueError", "message": "'model.call_start' is not a valid SessionEventType"}
    crashed = judge(report(steps=steps, observed={"turns": turns()[:2]}))[0]
    assert crashed.outcome == Outcome.CRASHED and "not a valid SessionEventType" in crashed.error.message


def test_a_cli_whose_model_call_never_reached_the_stand_in_has_no_local_route() -> None:
    steps = [{"name": "start", "ok": True}, {"name": "create_session", "ok": True},
             {"name": "turn:reply", "ok": False, "error": dict(NO_IDLE)}]
    verdict, facts = judge(report(steps=steps, observed={"turns": turns()[:1]}), calls=[])
    assert verdict.outcome == Outcome.NOT_APPLICABLE and verdict.error.type == NO_ROUTE and facts.route is None


def test_what_stop_left_running_degrades_even_a_session_that_worked() -> None:
    rep = report(after_stop={"leaked": ["node copilot"], "exit_after_stop_seconds": None})
    verdict, _ = judge(rep)
    assert verdict.outcome == Outcome.DEGRADED and verdict.error.type == "LeftRunning"


def test_the_worst_of_what_it_saw_decides() -> None:
    rep = report(observed={"turns": turns(tool={"tool_ran": []})})
    assert judge(rep, [*SENT, "assistant.idle"])[0].outcome == Outcome.LOST  # lost beats a turn that did not hold
