"""Tolerance rules measured in one relay (a batch) give the verdicts they give alone: the
event rules of a current SDK release against a current CLI, both ways, on real versions."""

from __future__ import annotations

from pathlib import Path

import pytest

from matrix.execute import proc
from matrix.execute.cache import cache_root
from matrix.families.copilot.shim import RULES, control_of
from matrix.model import Row
from matrix.pipeline.config import Plan
from matrix.pipeline.runner import Cell, Runner
from matrix.store.results import Store

pytestmark = pytest.mark.integration

SDK, CLI = "1.0.27", "1.0.102"
EVENTS = tuple(r for r in RULES if control_of(r) == "event.control")


def measure(out: Path, together: tuple[str, ...]) -> dict[str, Row]:
    plan = Plan.model_validate({"families": {"copilot-python": {}}})
    runner = Runner(plan, Store(out), cache_root(), proc.Reaper())
    cells = [Cell("copilot-python", SDK, CLI, "tolerance", r, together=together) for r in EVENTS]
    return {r.mutation: r for r in runner.run(cells, jobs=2)}


def test_a_batch_gives_the_verdicts_of_isolated_runs(tmp_path: Path) -> None:
    batched = measure(tmp_path / "batched", EVENTS)
    alone = measure(tmp_path / "alone", ())
    assert {r: row.outcome for r, row in batched.items()} == {r: row.outcome for r, row in alone.items()}
    from_batch = [r for r, row in batched.items() if row.detail.get("batch")]
    # This release surfaces an unknown event type and ignores an unknown field: clean passes stand.
    assert {"event.unknown-type", "event.extra-field"} <= set(from_batch)
    assert not any(alone[r].detail.get("batch") for r in alone)
    for rule in from_batch:  # each keeps a transcript of its own session only, and its share of the time
        assert batched[rule].seconds == round(batched[rule].detail["batch_seconds"] / len(EVENTS), 3)
        text = (tmp_path / "batched" / batched[rule].detail["transcript"]).read_text()
        others = [r for r in EVENTS if r != rule]
        assert f'"rule": "{rule}"' in text and not any(f'"rule": "{o}"' in text for o in others)
