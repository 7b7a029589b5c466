from __future__ import annotations

from pathlib import Path

import pytest

from matrix import HARNESS_VERSION
from matrix.execute import proc
from matrix.families.copilot.rules import COPILOT_RULES
from matrix.model import Row
from matrix.pipeline.config import Plan
from matrix.pipeline.runner import Cell, Runner, order, pending
from matrix.store.results import Store
from tests.conftest import make_row


def row(sdk: str, outcome: str, harness: str = COPILOT_RULES.version("handshake")) -> Row:
    return make_row(sdk, "1.0.0", outcome, family="copilot-python", harness_version=harness)


CELLS = [Cell("copilot-python", s, "1.0.0", "handshake") for s in ("1", "2", "3", "4")]
is_stale = COPILOT_RULES.stale


def test_incremental_skips_measured_cells_only() -> None:
    rows = [row("1", "compatible"), row("2", "infra-error"), row("3", "refused", harness="0")]
    # 2: infra errors are not verdicts, re-measured; 3: stale (older rules), but measured; 4: new.
    assert [c.sdk_version for c in pending(CELLS, rows)] == ["2", "4"]
    # --stale: exactly the stale ones too.
    assert [c.sdk_version for c in pending(CELLS, rows, stale=True)] == ["2", "3", "4"]


def test_the_committed_history_counts_as_measured_and_its_harness_errors_are_stale() -> None:
    kept = [row("1", "compatible"), row("2", "harness-error"), row("3", "refused", harness="0")]
    local = [row("4", "harness-error")]  # a local one is measured again, as before
    assert [c.sdk_version for c in pending(CELLS, local, kept)] == ["4"]
    assert [c.sdk_version for c in pending(CELLS, local, kept, stale=True)] == ["2", "3", "4"]
    assert is_stale(row("2", "harness-error")) and is_stale(row("3", "refused", harness="0"))
    assert not is_stale(row("1", "compatible"))


def test_a_rules_change_makes_stale_only_the_cells_it_can_alter() -> None:
    # Handshake rules 5 measure stop() as a rate: a connected cell of rules 4 is stale, a refusal is not.
    assert is_stale(row("1", "compatible", harness="4")) and is_stale(row("1", "degraded", harness="4"))
    assert not is_stale(row("2", "refused", harness="4"))
    assert is_stale(row("2", "refused", harness="3"))  # older changes touched every cell
    # ... and cells of a CLI no runtime could start (its --version failed on the runtime used).
    dead = make_row("1", "1.0.77", "launch-failed", family="copilot-python", harness_version="4",
                    node_runtime="node24", detail={"runtime_failures": {"node20": "exit 1", "node24": "exit 1"}})
    alive = dead.updated(detail={"runtime_failures": {"node20": "exit 1"}})
    assert is_stale(dead) and not is_stale(alive)


def test_a_release_the_registry_refused_a_week_ago_is_asked_for_again() -> None:
    from datetime import UTC, datetime, timedelta

    def refused(sdk: str, days: float) -> Row:
        at = (datetime.now(UTC) - timedelta(days=days)).isoformat(timespec="seconds")
        return make_row(sdk, "1.0.0", "uninstallable", family="copilot-python", harness_version=HARNESS_VERSION,
                        measured_at=at)

    kept = [refused("1", 8), refused("2", 1)]
    local = [refused("3", 7.5), refused("4", 0.5)]
    assert [c.sdk_version for c in pending(CELLS, local, kept)] == ["1", "3"]


def test_force_remeasures_everything() -> None:
    assert pending(CELLS, [row("1", "compatible")], force=True) == CELLS


def test_order_uses_each_cli_for_every_family_before_the_next() -> None:
    cells = [Cell("b", "1", "1.0.10", "h"), Cell("a", "1", "1.0.10", "h"), Cell("b", "1", "1.0.2", "h")]
    assert [(c.cli_version, c.family) for c in order(cells)] == [("1.0.2", "b"), ("1.0.10", "a"), ("1.0.10", "b")]


def test_order_groups_by_cli_then_sdk_numerically() -> None:
    cells = [Cell("f", "0.1.10", "1.0.2", "h"), Cell("f", "0.1.9", "1.0.10", "h"), Cell("f", "0.1.9", "1.0.2", "h")]
    assert [(c.cli_version, c.sdk_version) for c in order(cells)] == [
        ("1.0.2", "0.1.9"), ("1.0.2", "0.1.10"), ("1.0.10", "0.1.9")]


class _Scripted(Runner):
    """Our repeat logic over a scripted sequence of outcomes (no environments, no probes)."""

    def __init__(self, outcomes: list[str], results: Path) -> None:
        super().__init__(Plan.model_validate({"families": {"copilot-python": {}}}), Store(results),
                         results / "cache", proc.Reaper())
        self.outcomes = list(outcomes)

    def _measure_once(self, cell: Cell) -> Row | None:
        return row(cell.sdk_version, self.outcomes.pop(0))


def test_repeats_that_disagree_are_one_flaky_row_with_every_outcome(tmp_path: Path) -> None:
    runner = _Scripted(["compatible", "hang", "compatible"], tmp_path / "r")
    got = runner.measure(CELLS[0], repeat=3)
    assert got is not None and got.flaky and got.repeats == ["compatible", "hang", "compatible"]
    stored, _ = Store(tmp_path / "r").read()
    assert len(stored) == 1 and stored[0].flaky and stored[0].repeats == got.repeats
    steady = _Scripted(["refused", "refused"], tmp_path / "s").measure(CELLS[1], repeat=2)
    assert steady is not None and not steady.flaky and steady.repeats == ["refused", "refused"]
    once = _Scripted(["refused"], tmp_path / "o").measure(CELLS[2])
    assert once is not None and not once.flaky and once.repeats == []


def test_a_flaky_cell_says_so_on_the_site(tmp_path: Path) -> None:
    from matrix.families.copilot.matrix_pages import cells_page
    from matrix.families.registry import FAMILIES
    from matrix.site.sitedata import site_view
    from matrix.store.results import load_frame

    _Scripted(["compatible", "hang"], tmp_path / "r").measure(CELLS[0], repeat=2)
    frame, _ = load_frame(tmp_path / "r")
    frame["family"] = "copilot-python"  # shown as a family's page shows its cells
    assert "flaky (compatible / hang)" in cells_page(site_view(frame, {}, "now"), FAMILIES["copilot-python"])


class _Failing(_Scripted):
    """One cell hits a bug of ours; nothing is installed."""

    def _prepare(self, cell: Cell, env: object) -> None:
        pass

    def _measure_once(self, cell: Cell) -> Row | None:
        if cell.sdk_version == "2":
            raise RuntimeError("a bug of ours")
        return Row(family=cell.family, sdk_version=cell.sdk_version, cli_version=cell.cli_version,
                   probe=cell.probe, outcome="compatible", harness_version=HARNESS_VERSION)


def test_a_bug_in_one_cell_is_that_cells_harness_error_and_the_run_goes_on(tmp_path: Path) -> None:
    cells = [Cell("copilot-python", s, "1.0.0", "handshake") for s in ("1", "2", "3")]
    rows = _Failing([], tmp_path / "r").run(cells, jobs=2)
    by_sdk = {r.sdk_version: r for r in rows}
    assert sorted(by_sdk) == ["1", "2", "3"]
    assert by_sdk["2"].outcome == "harness-error" and "a bug of ours" in (by_sdk["2"].error_message or "")
    assert "RuntimeError" in by_sdk["2"].detail["traceback"]
    assert by_sdk["1"].outcome == by_sdk["3"].outcome == "compatible"


def test_a_hang_on_a_starved_machine_is_our_failure_and_measured_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import matrix.pipeline.runner as runner

    hung = make_row("1", "1.0.0", "hang", family="f", error_message="start did not settle within 35s")
    run = _Scripted([], tmp_path)
    monkeypatch.setattr(runner, "load_per_core", lambda: 9.2)
    starved = run._unless_overloaded(hung)
    assert starved.outcome == "infra-error" and starved.error_type == "Overloaded"
    assert "overloaded (9.2 runnable processes per core" in (starved.error_message or "")
    assert starved.detail["overloaded"] == {"load_per_core": 9.2, "outcome": "hang",
                                            "error_message": "start did not settle within 35s"}
    assert pending([Cell("f", "1", "1.0.0", "handshake")], [starved])  # measured again next run
    monkeypatch.setattr(runner, "load_per_core", lambda: 2.5)
    assert run._unless_overloaded(hung) == hung  # on a machine that keeps up, a hang is a hang
