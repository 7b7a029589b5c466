"""A run, from request to stored rows, through a scripted family at the family boundary: its
phases in order (the second planned from the first's rows), what it measured stored as its
family declares, and a second run measuring only what is missing or stale."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from matrix.model import NO_CLI, Row
from matrix.pipeline.config import Plan
from matrix.pipeline.planning import Resolved
from matrix.pipeline.workflow import (
    RunRequest,
    RunState,
    execute,
    measure,
    prepare_store,
    read_history,
    ready_ahead,
    summarize,
)
from matrix.store.dataset import Dataset
from matrix.store.results import Store
from tests.pipeline.fake_family import SLOW, ScriptedFamily, family


@dataclass
class Told:
    """A Reporter that keeps what a run said."""

    lines: list[str] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)

    def warn(self, text: str) -> None:
        self.lines.append(f"warning: {text}")

    def info(self, text: str) -> None:
        self.lines.append(text)

    def phase(self, name: str, todo: int) -> None:
        self.lines.append(f"phase {name}: {todo}")

    def row(self, row: Row, phase: str) -> None:
        self.rows.append(row)

    def report(self, rows: list[Row]) -> None:
        self.lines.append(f"report of {len(rows)} cells")


def run(fam: ScriptedFamily, results: Path, **request: object) -> tuple[int, Told]:
    """Measure ``fam``'s SDK releases 1 and 2 against its releases 1.0.0 and 1.1.0 (the
    registries are the family's own business: the releases are given, as resolving would)."""
    def resolved(state: RunState) -> RunState:
        state.resolved = [Resolved(fam.name, ["1", "2"], ["1.0.0", "1.1.0"], ["pair", "check"], [], [],
                                   families={fam.name: fam})]
        return state

    told = Told()
    plan = Plan.model_validate({"families": {fam.name: {}}, "run": {"jobs": 2}})
    data = request.pop("data", None)
    req = RunRequest(plan, results, data, with_families={fam.name: fam}, **request)  # type: ignore[arg-type]
    return execute(req, told, (prepare_store, resolved, ready_ahead, read_history, measure, summarize)), told


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPAT_MATRIX_CACHE", str(tmp_path / "cache"))


def test_a_run_measures_each_phase_planned_from_the_one_before_and_stores_what_its_family_says(
        tmp_path: Path) -> None:
    fam = family({("2", "1.0.0", "pair"): ["refused"], ("2", "1.1.0", "pair"): ["refused"],
                  ("1", "1.1.0", "check"): ["lost"]})
    code, told = run(fam, tmp_path / "r")
    assert code == 0
    rows = {(r.sdk_version, r.cli_version, r.probe): r for r in Store(tmp_path / "r").read()[0]}
    assert len(rows) == 6 and rows[("2", "1.0.0", "pair")].outcome == "refused"
    # The check is planned from the pairs just measured: against the newest release that works.
    assert rows[("1", "1.1.0", "check")].outcome == "lost" and rows[("1", "1.1.0", "check")].per_sdk
    nothing = rows[("2", NO_CLI, "check")]
    assert nothing.outcome == "not-applicable" and nothing.error_message == "no release of the other side works with it"
    # Each release's check is queued when its own pair cells are in.
    assert [line for line in told.lines if line.startswith("phase")] == ["phase pair: 4", "phase check: 1",
                                                                         "phase check: 1"]
    assert {r.payload.get("attempt") for r in rows.values() if r.cli_version != NO_CLI} == {1}


def test_a_second_run_measures_nothing_measured_and_an_infra_error_again(tmp_path: Path) -> None:
    fam = family()
    run(fam, tmp_path / "r")
    first = len(fam.measured)
    code, _ = run(fam, tmp_path / "r")
    assert code == 0 and len(fam.measured) == first  # nothing new to measure
    down = family({("1", "1.0.0", "pair"): ["infra-error", "compatible"]})
    code, _ = run(down, tmp_path / "d")
    assert code == 3  # an infrastructure error: shown as such, exit 3
    code, _ = run(down, tmp_path / "d")
    assert code == 0 and [c.key() for c in down.measured].count(("scripted", "1", "1.0.0", "pair", "")) == 2


def test_stale_measures_again_exactly_the_cells_older_rules_measured(tmp_path: Path) -> None:
    fam = family()
    run(fam, tmp_path / "r")
    store = Store(tmp_path / "r")
    old = next(r for r in store.read()[0] if (r.sdk_version, r.cli_version, r.probe) == ("1", "1.0.0", "pair"))
    store.append(old.updated(harness_version="0", measured_at="2026-12-01T00:00:00.000000+00:00"))
    before = len(fam.measured)
    run(fam, tmp_path / "r")
    assert len(fam.measured) == before  # stale, but measured: a run without --stale keeps it
    run(fam, tmp_path / "r", stale=True)
    assert [c.key() for c in fam.measured[before:]] == [("scripted", "1", "1.0.0", "pair", "")]


def test_a_run_verifies_the_history_once_and_plans_from_that_one_version(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    fam = family()
    run(fam, tmp_path / "r")
    Dataset(tmp_path / "data").fold(tmp_path / "r")
    verified: list[Path] = []
    real = Dataset.verify

    def counted(self: Dataset, locked: bool = False) -> object:
        verified.append(self.root)
        return real(self, locked)

    monkeypatch.setattr(Dataset, "verify", counted)
    before = len(fam.measured)
    code, _ = run(fam, tmp_path / "again", data=tmp_path / "data")
    # Each verification reads and checks every row: a run that read it three times took 14 s
    # with nothing to measure on the whole history, 7 s reading it once.
    assert code == 0 and verified == [tmp_path / "data"]
    assert len(fam.measured) == before  # planned from the history: nothing left to measure


def test_a_release_reaches_its_next_phase_while_another_is_still_in_the_one_before(tmp_path: Path) -> None:
    # Release 2's last pair cell waits; release 1's check needs only release 1's pairs.
    fam = family({("2", "1.1.0", "pair"): [SLOW]})
    code, told = run(fam, tmp_path / "r")
    order = [(r.sdk_version, r.cli_version, r.probe) for r in told.rows]
    assert code == 0 and len(order) == 6
    assert order.index(("1", "1.1.0", "check")) < order.index(("2", "1.1.0", "pair")) < order.index(
        ("2", "1.1.0", "check"))
