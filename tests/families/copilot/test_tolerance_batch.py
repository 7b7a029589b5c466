"""A batch's rows: each rule judged on its own steps and transcript, and only clean passes stand."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from matrix.families.copilot import tolerance
from matrix.model import Cell, Row
from matrix.probes.report import AgentReport, Step
from tests.conftest import make_row

T = TypeVar("T")


def test_a_session_rule_gets_its_own_steps_observations_and_loop_errors() -> None:
    # As an agent reports it: every step in order, and each session rule's own steps again.
    steps = (Step("import", True), Step("start", True), Step("create_session", True), Step("create_session", False),
             Step("stop", True))
    report = AgentReport(steps=steps, extra={
        "loop_errors": ["boom"], "observed": {},
        "batch": {"event.unknown-type": {"steps": [{"name": "create_session", "ok": True, "error": None}],
                                         "observed": {"canary": True}, "loop_errors": []},
                  "event.extra-field": {"steps": [{"name": "create_session", "ok": False}], "observed": {},
                                        "loop_errors": ["boom"]}}})
    own = tolerance._rule_report(report, "event.unknown-type")
    assert own is not None
    assert [s.name for s in own.steps] == ["import", "start", "create_session", "stop"]
    assert own.extra["observed"] == {"canary": True} and own.extra["loop_errors"] == []
    other = tolerance._rule_report(report, "event.extra-field")
    assert other is not None and other.extra["loop_errors"] == ["boom"] and not other.steps[2].ok
    assert tolerance._rule_report(report, "event.unknown-enum-value") is None  # never reached: no verdict
    assert tolerance._rule_report(report, "result.extra-field") is report  # a connection rule: the whole run


def test_a_rules_transcript_drops_only_the_other_rules_entries(tmp_path: Path) -> None:
    batch = tmp_path / "batch.jsonl"
    entries = [{"dir": "shim", "msg": {"argv": []}}, {"dir": "cli->sdk", "rule": "a"}, {"dir": "cli->sdk", "rule": "b"},
               {"dir": "sdk->cli"}]
    batch.write_text("".join(json.dumps(e) + "\n" for e in entries) + '{"cut')
    own = tmp_path / "a.jsonl"
    tolerance._split(batch, own, "a")
    kept = own.read_text().splitlines()
    assert [json.loads(line).get("rule") for line in kept[:-1]] == [None, "a", None]
    assert kept[-1] == '{"cut'  # a line cut short stays, so that the cut shows


class FakeContext:
    def __init__(self) -> None:
        self.done: dict[object, Any] = {}
        self.lock = threading.Lock()

    def shared(self, key: object, make: Callable[[], T]) -> T:
        with self.lock:
            if key not in self.done:
                self.done[key] = make()
            return self.done[key]  # type: ignore[no-any-return]


def test_a_rule_takes_its_batch_row_where_it_stands_and_is_measured_alone_otherwise() -> None:
    together = ("event.unknown-type", "event.extra-field")
    batches: list[Sequence[str]] = []
    alone: list[str] = []

    def batch(rules: Sequence[str]) -> dict[str, Row]:
        batches.append(rules)
        return {"event.unknown-type": make_row("1", "2", "surfaced", probe="tolerance", mutation="event.unknown-type")}

    def one(rule: str) -> Row:
        alone.append(rule)
        return make_row("1", "2", "lost", probe="tolerance", mutation=rule)

    ctx = FakeContext()
    rows = [tolerance.measure_rule(ctx, Cell("f", "1", "2", "tolerance", r, together=together), None,  # type: ignore[arg-type]
                                   one, batch) for r in together]
    assert [r.outcome for r in rows] == ["surfaced", "lost"]
    assert batches == [together] and alone == ["event.extra-field"]  # one batch for both cells
    tolerance.measure_rule(ctx, Cell("f", "1", "2", "tolerance", "event.unknown-enum-value"), None,  # type: ignore[arg-type]
                           one, batch)
    assert alone[-1] == "event.unknown-enum-value" and len(batches) == 1  # planned alone: no batch
