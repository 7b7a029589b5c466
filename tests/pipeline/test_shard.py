"""Shards partition a run by whole SDK versions, deterministically; merge joins them; --new
keeps only cells of versions no earlier run selected."""

from __future__ import annotations

from pathlib import Path

import pytest

from matrix.commands.cli import main
from matrix.errors import UserError
from matrix.pipeline.planning import Resolved, only_new
from matrix.pipeline.runner import Cell
from matrix.pipeline.shard import Shard, merge, parse_shard
from matrix.store.results import Store, load_frame, load_releases, save_releases
from tests.conftest import make_row

SDKS = ["0.1.10", "0.1.15", "0.2.3", "1.0.0", "1.0.4", "1.0.27", "0.3.0"]
RESOLVED = Resolved("copilot-python", SDKS, ["1.0.60", "1.0.102"], ["handshake"], [], [])


def test_shards_cover_every_cell_once_and_keep_sdk_versions_whole() -> None:
    cells = RESOLVED.cells("handshake", [])
    parts = [RESOLVED.in_shard(cells, Shard(i, 3)) for i in (1, 2, 3)]
    assert sorted(c.key() for p in parts for c in p) == sorted(c.key() for c in cells)
    owners = {c.sdk_version: i for i, p in enumerate(parts) for c in p}
    assert all(owners[c.sdk_version] == i for i, p in enumerate(parts) for c in p)
    assert max(map(len, parts)) - min(map(len, parts)) <= 2  # one SDK version (2 cells) apart at most
    again = [RESOLVED.in_shard(cells, Shard(i, 3)) for i in (1, 2, 3)]
    assert again == parts


@pytest.mark.parametrize("spec", ["0/2", "3/2", "1-2", "a/b", "", "2/0"])
def test_bad_shard_specs_are_user_errors(spec: str) -> None:
    with pytest.raises(UserError, match="--shard"):
        parse_shard(spec)


def test_bad_shard_spec_touches_no_stored_result(tmp_path: Path) -> None:
    results = tmp_path / "r"
    Store(results).append(make_row("1", "2", "compatible"))
    before = (results / "rows.jsonl").read_bytes()
    assert main(["run", "--shard", "5/4", "--results", str(results)]) == 2
    assert (results / "rows.jsonl").read_bytes() == before and not (results / "releases.json").exists()


def test_merge_joins_rows_release_dates_and_evidence(tmp_path: Path) -> None:
    for i, sdk in ((1, "1.0.0"), (2, "1.0.4")):
        shard = tmp_path / f"s{i}"
        Store(shard).append(make_row(sdk, "1.0.102", "compatible"))
        save_releases(shard, {"copilot-python": {"sdk": {sdk: f"2026-0{i}-01"}}})
        (shard / "transcripts" / f"t{i}").mkdir(parents=True)
        (shard / "transcripts" / f"t{i}" / "x.jsonl").write_text("{}\n")
    count, warnings = merge(tmp_path / "out", [tmp_path / "s1", tmp_path / "s2"])
    frame, _ = load_frame(tmp_path / "out")
    assert count == 2 and not warnings and sorted(frame["sdk_version"]) == ["1.0.0", "1.0.4"]
    assert load_releases(tmp_path / "out")["copilot-python"]["sdk"] == {"1.0.0": "2026-01-01", "1.0.4": "2026-02-01"}
    assert (tmp_path / "out" / "transcripts" / "t2" / "x.jsonl").exists()
    with pytest.raises(UserError, match=r"no rows\.jsonl"):
        merge(tmp_path / "out", [tmp_path / "nothing"])


def test_only_new_keeps_cells_of_versions_never_selected() -> None:
    known = {"copilot-python": {"sdk": {"1.0.0": None}, "cli": {"1.0.60": None}}}
    cells = [Cell("copilot-python", s, c, "handshake") for s in ("1.0.0", "1.0.4") for c in ("1.0.60", "1.0.102")]
    assert [(c.sdk_version, c.cli_version) for c in only_new(cells, known, standin=False)] == [
        ("1.0.0", "1.0.102"), ("1.0.4", "1.0.60"), ("1.0.4", "1.0.102")]
    cosmo = [Cell("cosmo-python", "0.6.1", "stand-in-1", "identity", "identity.exports")]
    assert only_new(cosmo, {"cosmo-python": {"sdk": {"0.6.1": None}}}, standin=True) == []
    # A tolerance cell with no compatible CLI ("none") of a known SDK release is not new.
    none = [Cell("copilot-go", "0.1.14", "none", "tolerance", "event.unknown-type")]
    known_go = {"copilot-go": {"sdk": {"0.1.14": None}, "cli": {"0.0.340": None}}}
    assert only_new(none, known_go, standin=False, clis=["0.0.340"]) == []
    assert only_new(none, known_go, standin=False) == none  # without the selection it cannot tell


def test_new_releases_are_those_neither_the_dataset_nor_a_measured_local_run_has(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A run stores the release lists it selected before it measures: those must stay new to
    it, and to the next --new run when it was stopped before measuring any of their cells."""
    from types import SimpleNamespace

    from matrix.pipeline.workflow import _measured_here
    from matrix.store.dataset import Sources
    from matrix.store.results import Store, save_releases
    from tests.conftest import make_row

    store = Store(tmp_path / "results")
    store.append(make_row("1.0.0", "2.0.0", "compatible"))
    save_releases(store.directory, {"copilot-python": {"sdk": {"1.0.0": None, "1.0.1": None},
                                                       "cli": {"2.0.0": None, "2.1.0": None}}})
    state = SimpleNamespace(sources=Sources(store.directory, None), store=store)
    assert _measured_here(state) == {"copilot-python": {"sdk": {"1.0.0": None}, "cli": {"2.0.0": None}}}
