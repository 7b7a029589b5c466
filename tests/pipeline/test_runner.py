from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from matrix import HARNESS_VERSION
from matrix.execute import proc
from matrix.execute.environment import Environment
from matrix.families.base import Context
from matrix.families.copilot.rules import COPILOT_RULES
from matrix.model import Row
from matrix.pipeline.config import Plan
from matrix.pipeline.progression import Progression
from matrix.pipeline.runner import Cell, Runner, order, pending
from matrix.store.results import Store
from tests.conftest import make_row
from tests.pipeline.fake_family import BUG, UNFIT, ScriptedFamily, family


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
    # Session rules 5: the Node agent subscribes with onEvent; Python's sessions stand as measured.
    node = make_row("1", "1.0.102", "crashed", family="copilot-node", probe="session", harness_version="4")
    assert is_stale(node) and not is_stale(node.updated(family="copilot-python"))


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


def test_within_a_cli_release_the_cells_the_history_says_take_longest_start_first() -> None:
    kept = [make_row("0.1.9", "1.0.1", seconds=40.0), make_row("0.1.9", "1.0.2", seconds=2.0),
            make_row("0.1.10", "1.0.2", seconds=9.0)]
    progress = Progression([], ["handshake", "session"], kept, [], lambda r, cells: cells,
                           lambda cells, local, kept: cells)
    cells = [Cell("copilot-python", s, c, "handshake") for s in ("0.1.8", "0.1.9", "0.1.10")
             for c in ("1.0.3", "1.0.4")] + [Cell("copilot-python", "0.1.8", "1.0.3", "session")]
    # A release's later phase first (it finishes what started), then by what each took against
    # the newest CLI it was measured with (never measured: 0), per CLI column.
    assert [(c.cli_version, c.sdk_version, c.probe[0]) for c in order(cells, progress.precedence)] == [
        ("1.0.3", "0.1.8", "s"), ("1.0.3", "0.1.10", "h"), ("1.0.3", "0.1.9", "h"), ("1.0.3", "0.1.8", "h"),
        ("1.0.4", "0.1.10", "h"), ("1.0.4", "0.1.9", "h"), ("1.0.4", "0.1.8", "h")]


def runner_of(fam: ScriptedFamily, results: Path, retries: int = 2) -> Runner:
    """A runner of ``fam`` alone: the seam where a cell becomes a row, at the family boundary."""
    plan = Plan.model_validate({"families": {fam.name: {}}, "run": {"install_retries": retries}})
    return Runner(plan, Store(results), results / "cache", proc.Reaper(), families={fam.name: fam})


PAIR = Cell("scripted", "1", "1.0.0", "pair")


def test_repeats_that_disagree_are_one_flaky_row_with_every_outcome(tmp_path: Path) -> None:
    fam = family({("1", "1.0.0", "pair"): ["compatible", "hang", "compatible"], ("2", "1.0.0", "pair"): ["refused"]})
    got = runner_of(fam, tmp_path / "r").measure(PAIR, repeat=3)
    assert got is not None and got.flaky and got.repeats == ["compatible", "hang", "compatible"]
    stored, _ = Store(tmp_path / "r").read()
    assert len(stored) == 1 and stored[0].flaky and stored[0].repeats == got.repeats
    assert stored[0].payload == {"attempt": 3}  # the last measurement's, as its family declares it
    steady = runner_of(fam, tmp_path / "s").measure(Cell("scripted", "2", "1.0.0", "pair"), repeat=2)
    assert steady is not None and not steady.flaky and steady.repeats == ["refused", "refused"]
    once = runner_of(fam, tmp_path / "o").measure(Cell("scripted", "3", "1.0.0", "pair"))
    assert once is not None and not once.flaky and once.repeats == []


def test_a_flaky_cell_says_so_on_the_site(tmp_path: Path) -> None:
    from matrix.families.copilot.matrix_pages import cells_page
    from matrix.families.registry import FAMILIES
    from matrix.site.sitedata import site_view
    from matrix.store.results import load_frame

    runner_of(family({("1", "1.0.0", "pair"): ["compatible", "hang"]}), tmp_path / "r").measure(PAIR, repeat=2)
    frame, _ = load_frame(tmp_path / "r")
    frame["family"], frame["probe"] = "copilot-python", "handshake"  # shown as a family's page shows its cells
    assert "flaky (compatible / hang)" in cells_page(site_view(frame, {}, "now"), FAMILIES["copilot-python"])


def test_a_bug_in_one_cell_is_that_cells_harness_error_and_the_run_goes_on(tmp_path: Path) -> None:
    fam = family({("2", "1.0.0", "pair"): [BUG]})
    cells = [Cell("scripted", s, "1.0.0", "pair") for s in ("1", "2", "3")]
    rows = runner_of(fam, tmp_path / "r").run(cells, jobs=2)
    by_sdk = {r.sdk_version: r for r in rows}
    assert sorted(by_sdk) == ["1", "2", "3"]
    assert by_sdk["2"].outcome == "harness-error" and "a bug of the family's" in (by_sdk["2"].error_message or "")
    assert "RuntimeError" in by_sdk["2"].detail["traceback"]
    assert by_sdk["1"].outcome == by_sdk["3"].outcome == "compatible"


def test_a_release_that_cannot_be_installed_is_uninstallable_and_a_registry_down_is_our_failure(
        tmp_path: Path) -> None:
    run = runner_of(family(), tmp_path / "r", retries=0)
    gone = run.measure(Cell("scripted", "gone-1", "1.0.0", "pair"))
    down = run.measure(Cell("scripted", "down-1", "1.0.0", "pair"))
    assert gone is not None and gone.outcome == "uninstallable" and gone.detail == {"side": "sdk"}
    assert down is not None and down.outcome == "infra-error" and "did not answer" in (down.error_message or "")
    assert pending([Cell("scripted", "down-1", "1.0.0", "pair")], [down])  # never a verdict: measured again


def test_a_row_its_family_does_not_declare_is_recorded_as_our_error_not_as_its_verdict(tmp_path: Path) -> None:
    row = runner_of(family({("1", "1.0.0", "pair"): [UNFIT]}), tmp_path / "r").measure(PAIR)
    assert row is not None and row.outcome == "harness-error" and row.error_type == "PayloadError"
    assert "payload.attempt" in (row.error_message or "") and row.detail["payload"] == {"attempt": "not a number"}
    assert row.detail["outcome"] == "compatible"  # what it would have said, kept for whoever fixes the family


def test_whether_a_row_stands_for_a_pair_or_an_sdk_release_is_its_familys_word(tmp_path: Path) -> None:
    run = runner_of(family(), tmp_path / "r")
    pair = run.measure(PAIR)
    check = run.measure(Cell("scripted", "1", "1.0.0", "check", "rule"))
    assert pair is not None and not pair.per_sdk and pair.slot() == pair.key()
    assert check is not None and check.per_sdk and check.slot() == ("scripted", "1", "", "check", "rule")


def test_a_hang_on_a_starved_machine_is_our_failure_and_measured_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import matrix.pipeline.runner as runner

    fam = family({("1", "1.0.0", "pair"): ["hang"]})
    monkeypatch.setattr(runner, "load_per_core", lambda: 9.2)
    starved = runner_of(fam, tmp_path / "a").measure(PAIR)
    assert starved is not None and starved.outcome == "infra-error" and starved.error_type == "Overloaded"
    assert "overloaded (9.2 runnable processes per core" in (starved.error_message or "")
    assert starved.detail["overloaded"] == {"load_per_core": 9.2, "outcome": "hang", "error_message": None}
    assert pending([PAIR], [starved])  # measured again next run
    monkeypatch.setattr(runner, "load_per_core", lambda: 2.5)
    hung = runner_of(fam, tmp_path / "b").measure(PAIR)
    assert hung is not None and hung.outcome == "hang"  # on a machine that keeps up, a hang is a hang


def test_shared_work_runs_once_and_a_cell_waiting_for_it_gives_its_slot_back(tmp_path: Path) -> None:
    import threading

    from matrix.execute.schedule import Slots

    runner = runner_of(family(), tmp_path)
    slots = Slots(2, park_after=60)
    started, release, third = threading.Event(), threading.Event(), threading.Event()
    made: list[int] = []
    got: list[int] = []

    def make() -> int:
        made.append(1)
        started.set()
        release.wait(10)
        return 42

    def cell() -> None:
        with slots.hold() as hold:
            runner._held.hold = hold
            got.append(runner.shared("k", make))

    def other() -> None:
        with slots.hold():
            third.set()

    first = threading.Thread(target=cell)
    first.start()
    assert started.wait(10)
    second = threading.Thread(target=cell)
    second.start()
    # Two slots, the first cell's and the second's: a third cell gets one while the first still
    # works only if the second, waiting for the first's work, gave its own back.
    threading.Thread(target=other, daemon=True).start()
    assert third.wait(10)
    release.set()
    first.join(10)
    second.join(10)
    assert got == [42, 42] and made == [1]


@dataclass(frozen=True, kw_only=True)
class Readied(ScriptedFamily):
    """Says what it was asked to prepare."""

    readied: list[str] = field(default_factory=list)

    def prepare(self, cell: Cell, env: Environment, ctx: Context) -> None:
        self.readied.append(f"{env.package} {env.version}")


def test_ready_ahead_prepares_the_first_cells_installed_environments_and_installs_nothing(tmp_path: Path) -> None:
    """While the history is read, the first cells' environments that are installed are readied
    (a warm import, a CLI's runtime); one that is not is left to the run, which may not want it."""
    base = family()
    fam = Readied(name=base.name, description=base.description, sdk_ecosystem="pypi", sdk_package="scripted-sdk",
                  cli_ecosystem="pypi", cli_package="scripted-cli")
    runner = runner_of(fam, tmp_path / "r")
    for cell in (Cell(fam.name, "1", "1.0.0", "pair"), Cell(fam.name, "1", "1.2.0", "pair")):
        for env in runner._environments(cell):
            assert env is not None
            runner.ensure(env)
    cells = [Cell(fam.name, "1", cli, "pair") for cli in ("1.2.0", "1.1.0", "1.0.0")]
    runner.ready_ahead(cells, 2)  # the run's order: 1.0.0, then 1.1.0 (not installed); 1.2.0 is not first
    assert runner._ahead is not None
    runner._ahead.join()
    runner.close()
    assert fam.readied == ["scripted-sdk 1", "scripted-cli 1.0.0"]
    assert not runner._environments(cells[1])[1].is_ready()  # type: ignore[union-attr]
