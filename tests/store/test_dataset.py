"""The committed history: fold, deterministic files, no machine paths, sources, sampling."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from matrix.answers.verify import Check, agreement, sample
from matrix.execute.lock import Locked, holding, sharing
from matrix.model import Row
from matrix.store.dataset import DATA_SCHEMA, Dataset, Sources, row_file, scrub
from matrix.store.holdback import hold_back
from matrix.store.results import Store, save_releases
from tests.conftest import ROOT, make_row

RELEASES = {"copilot-python": {"sdk": {"1.0.0": "2026-01-01T00:00:00Z", "1.0.1": "2026-03-01T00:00:00Z"},
                               "cli": {"1.0.60": "2026-02-01T00:00:00Z", "1.0.61": "2026-04-01T00:00:00Z"}}}


def row(sdk: str, cli: str, outcome: str = "compatible", at: str = "2026-11-30T10:00:00+00:00", **kw: Any) -> Row:
    return make_row(sdk, cli, outcome, harness_version="4", measured_at=at, host="builder-7", **kw)


def results_with(tmp: Path, rows: list[Row], name: str = "results") -> Path:
    store = Store(tmp / name)
    for r in rows:
        store.append(r)
    save_releases(tmp / name, RELEASES)
    return tmp / name


def test_a_handshake_cell_lives_in_its_newer_releases_file_and_others_in_their_sdks() -> None:
    assert row_file(row("1.0.0", "1.0.60"), RELEASES) == "copilot-python/handshake/cli-1.0.60.jsonl"
    assert row_file(row("1.0.1", "1.0.60"), RELEASES) == "copilot-python/handshake/sdk-1.0.1.jsonl"
    assert row_file(row("1.0.1", "1.0.61"), RELEASES) == "copilot-python/handshake/cli-1.0.61.jsonl"
    tolerance = row("1.0.1", "1.0.61", "surfaced", probe="tolerance", mutation="event.extra-field")
    assert row_file(tolerance, RELEASES) == "copilot-python/tolerance/sdk-1.0.1.jsonl"


def test_stored_rows_hold_no_machine_paths_user_or_host_names() -> None:
    home = str(Path.home())
    dirty = row("1.0.0", "1.0.60", "crashed", error_message=f"File \"{home}/.cache/compat-matrix/envs/sdk/uv-venv/"
                f"github-copilot-sdk-1.0.0/lib/python3.11/site-packages/copilot/client.py\", line 3",
                detail={"launch_argv": ["--log-dir", "/tmp/cm/sandboxes/run-9/cell-x/home/.copilot/logs"],
                        "agent_stderr_tail": "/var/tmp/history/x.py failed",
                        "traceback": 'File "/work/hist/repo/matrix/families/copilot/python/agents/h.py", line 9 '
                                     "in /usr/lib/python3.11/asyncio/tasks.py; see https://example.org/a/b",
                        "node": "at file:///work/hist/repo/matrix/families/copilot/node/agents/c.mjs:87:26"})
    clean = scrub(dirty)
    text = json.dumps(clean.__dict__)
    for leak in (home, "/tmp/", "/var/tmp", "builder-7", "/work/hist"):
        assert leak not in text, leak
    assert '<path>/h.py' in text and "/usr/lib/python3.11/asyncio/tasks.py" in text
    assert "https://example.org/a/b" in text and "file://<path>/c.mjs:87:26" in text
    assert "<sdk env github-copilot-sdk-1.0.0>" in text and "<path>/logs" in text
    assert clean.host == "" and clean.outcome == "crashed"


def test_fold_adds_replaces_newer_leaves_out_infra_errors_and_writes_deterministic_files(tmp_path: Path) -> None:
    transcript = tmp_path / "results" / "transcripts" / "copilot-python" / "t.jsonl"
    first = [row("1.0.0", "1.0.60"), row("1.0.1", "1.0.60", "refused"), row("1.0.1", "1.0.61", "infra-error"),
             row("1.0.0", "1.0.60", "surfaced", probe="tolerance", mutation="event.extra-field",
                 detail={"transcript": "transcripts/copilot-python/t.jsonl"})]
    results = results_with(tmp_path, first)
    transcript.parent.mkdir(parents=True)
    transcript.write_text(f'{{"t": 0, "dir": "shim", "msg": {{"argv": ["{Path.home()}/x"]}}}}\n')
    data = Dataset(tmp_path / "data")
    report = data.fold(results)
    assert (len(report.added), len(report.replaced), len(report.skipped)) == (3, 0, 1)
    files = {p.relative_to(data.root).as_posix(): p.read_text() for p in data.files()}
    assert set(files) == {"copilot-python/handshake/cli-1.0.60.jsonl", "copilot-python/handshake/sdk-1.0.1.jsonl",
                          "copilot-python/tolerance/sdk-1.0.0.jsonl"}
    for text in files.values():
        for line in text.splitlines():
            assert list(json.loads(line)) == sorted(json.loads(line))  # sorted keys, one row per line
    kept = data.evidence("transcripts/copilot-python/t.jsonl")
    assert kept is not None
    assert str(Path.home()) not in gzip.decompress(kept).decode() and "<path>/x" in gzip.decompress(kept).decode()
    index = json.loads((data.root / "index.json").read_text())
    assert index["schema"] == DATA_SCHEMA and index["rows"] == 3
    assert set(index["files"]) == {*files, "copilot-python/releases.json", "changelog.jsonl",
                                   "evidence/transcripts/copilot-python/t.jsonl.gz"}

    def stored() -> dict[Path, bytes]:
        return {p: p.read_bytes() for p in data.root.rglob("*") if p.is_file() and not p.name.endswith(".lock")}

    snapshot = stored()
    # Folding the same results again changes nothing, byte for byte.
    again = data.fold(results)
    assert again.unchanged == 3 and not again.added and not again.replaced
    assert stored() == snapshot
    # A newer measurement of a cell replaces it, and says whether the outcome moved.
    later = results_with(tmp_path, [row("1.0.1", "1.0.60", "compatible", at="2026-12-01T00:00:00+00:00")], "later")
    moved = data.fold(later)
    assert [(a.outcome, b.outcome) for a, b in moved.moved] == [("refused", "compatible")]
    assert moved.files == ["changelog.jsonl", "copilot-python/handshake/sdk-1.0.1.jsonl", "index.json"]


def test_each_fold_that_changes_the_dataset_is_a_changelog_entry_newest_first(tmp_path: Path) -> None:
    data = Dataset(tmp_path / "data")
    data.fold(results_with(tmp_path, [row("1.0.0", "1.0.60", "refused"), row("1.0.1", "1.0.60")], "a"),
              at="2026-11-01T00:00:00+00:00")
    data.fold(results_with(tmp_path, [row("1.0.0", "1.0.60", "refused")], "same"), at="2026-11-02T00:00:00+00:00")
    data.fold(results_with(tmp_path, [row("1.0.0", "1.0.60", "compatible", at="2026-12-01T00:00:00+00:00"),
                                      row("1.0.0", "1.0.61"), row("1.0.1", "1.0.61", "crashed", error_message="boom")],
                           "b"), at="2026-12-01T00:00:00+00:00")
    newest, first = data.changes()  # the fold that changed nothing made no entry
    assert first.at == "2026-11-01T00:00:00+00:00" and first.cells_added == 2 and not first.moved
    assert first.added == {"copilot-python": {"cli": ["1.0.60"], "sdk": ["1.0.0", "1.0.1"]}}
    assert newest.added == {"copilot-python": {"cli": ["1.0.61"]}}  # 1.0.0 and 1.0.1 were already there
    assert (newest.cells_added, newest.cells_measured_again) == (2, 1)
    assert [(m.sdk_version, m.cli_version, m.old, m.new) for m in newest.moved] == [
        ("1.0.0", "1.0.60", "refused", "compatible")]


def test_a_damaged_changelog_is_named_with_its_line(tmp_path: Path) -> None:
    from matrix.errors import UserError

    data = Dataset(tmp_path / "data")
    data.fold(results_with(tmp_path, [row("1.0.0", "1.0.60")], "a"))
    with (data.root / "changelog.jsonl").open("a") as f:
        f.write("{not json\n")
    with pytest.raises(UserError, match=r"changelog.jsonl:2: not a changelog entry"):
        data.changes()


def test_sources_read_the_history_and_newer_local_rows_win(tmp_path: Path) -> None:
    data = Dataset(tmp_path / "data")
    data.fold(results_with(tmp_path, [row("1.0.0", "1.0.60", "refused"), row("1.0.1", "1.0.60")], "old"))
    local = results_with(tmp_path, [row("1.0.0", "1.0.60", "compatible", at="2026-12-24T00:00:00+00:00"),
                                    row("1.0.0", "1.0.61")])
    rows, warnings = Sources(local, data.root).rows()
    got = {(r.sdk_version, r.cli_version): r.outcome for r in rows}
    assert warnings == [] and got == {("1.0.0", "1.0.60"): "compatible", ("1.0.1", "1.0.60"): "compatible",
                                      ("1.0.0", "1.0.61"): "compatible"}
    assert Sources(local, data.root).releases()["copilot-python"]["cli"]["1.0.61"] == "2026-04-01T00:00:00Z"


def test_the_sample_is_stratified_by_family_and_outcome_and_reproducible() -> None:
    rows = [row(f"1.0.{i}", "1.0.60", "compatible") for i in range(50)]
    rows += [row(f"0.1.{i}", "1.0.60", "refused") for i in range(10)]
    rows += [row("0.0.1", "1.0.60", "hang"), row("0.0.2", "1.0.60", "infra-error")]
    picked = sample(rows, 12, seed=3)
    outcomes = [r.outcome for r in picked]
    assert len(picked) == 12 and "infra-error" not in outcomes
    assert outcomes.count("hang") == 1 and outcomes.count("refused") == 2 and outcomes.count("compatible") == 9
    assert sample(rows, 12, seed=3) == picked and sample(rows, 12, seed=4) != picked
    checks = [Check(picked[0], picked[0]), Check(picked[1], None),
              Check(picked[2], row(picked[2].sdk_version, "1.0.60", "crashed"))]
    assert agreement(checks) == (1, 1 if picked[2].outcome != "crashed" else 0, 1)


def test_a_second_writer_is_told_who_holds_the_directory(tmp_path: Path) -> None:
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from pathlib import Path; from matrix.execute.lock import holding\n"
        f"with holding(Path({str(tmp_path)!r})):\n    print('held', flush=True); time.sleep(30)")],
        stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(Locked) as exc, holding(tmp_path):
            pass
        assert f"pid {holder.pid}" in str(exc.value) and "--wait" in str(exc.value)
    finally:
        holder.kill()
        holder.communicate()
    with holding(tmp_path):  # the kernel let go with the process
        assert (tmp_path / ".compat-matrix.execute.lock").exists() and os.getpid() > 0


def test_a_check_measured_against_another_choice_of_cli_replaces_the_one_before(tmp_path: Path) -> None:
    """A tolerance or contract cell is one per SDK release and check: its CLI is the harness's
    choice, and when that choice moves (a control failed there), the new row replaces the old."""
    data = Dataset(tmp_path / "data")

    def check(cli: str, outcome: str, at: str) -> Row:
        return row("1.0.0", cli, outcome, at=at, probe="tolerance", mutation="history.unknown-type")

    data.fold(results_with(tmp_path, [check("1.0.60", "lost", "2026-11-01T00:00:00+00:00")], "old"))
    local = results_with(tmp_path, [check("1.0.61", "surfaced", "2026-12-01T00:00:00+00:00")])
    rows, _ = Sources(local, data.root).rows()
    assert [(r.cli_version, r.outcome) for r in rows] == [("1.0.61", "surfaced")]
    report = data.fold(local)
    assert [(a.cli_version, b.cli_version) for a, b in report.replaced] == [("1.0.60", "1.0.61")]
    assert [(r.cli_version, r.outcome) for r in data.read()[0]] == [("1.0.61", "surfaced")]


def test_a_writer_kept_out_by_readers_is_told_so_not_the_name_of_a_writer_long_gone(tmp_path: Path) -> None:
    with holding(tmp_path):
        pass  # a fold that finished
    (tmp_path / ".compat-matrix.execute.lock").write_text('{"pid": 999999999, "command": "compat-matrix fold"}')
    with sharing(tmp_path), pytest.raises(Locked) as exc, holding(tmp_path):  # a run reads the dataset
        pass
    said = str(exc.value)
    assert "reading it" in said and "fold" not in said and "999999999" not in said


def test_held_back_the_newest_cli_release_is_gone_but_what_stands_is_kept(tmp_path: Path) -> None:
    """The dataset as it stood before a family's newest CLI release: that release's rows and its
    place in the release list are gone, but for the rows ``stood`` keeps; other releases stay."""
    data = Dataset(tmp_path / "data")
    check = row("1.0.0", "1.0.61", "surfaced", probe="tolerance", mutation="history.unknown-type")
    data.fold(results_with(tmp_path, [row("1.0.0", "1.0.60"), row("1.0.0", "1.0.61"), row("1.0.1", "1.0.61"),
                                      check]))
    held = Dataset(tmp_path / "held")
    assert hold_back(data.root, held.root, "copilot-python", tmp_path / "work",
                     stood=lambda r: r.probe == "tolerance") == "1.0.61"
    assert sorted((r.sdk_version, r.cli_version, r.probe) for r in held.read()[0]) == [
        ("1.0.0", "1.0.60", "handshake"), ("1.0.0", "1.0.61", "tolerance")]
    assert list(held.releases()["copilot-python"]["cli"]) == ["1.0.60"]
    assert held.verify()[1] == []
    bare = hold_back(data.root, tmp_path / "bare", "copilot-python", tmp_path / "work-bare")
    assert bare == "1.0.61" and [r.cli_version for r in Dataset(tmp_path / "bare").read()[0]] == ["1.0.60"]


@pytest.mark.parametrize("collecting", [True, False])
def test_a_read_leaves_the_cycle_collector_as_it_found_it(tmp_path: Path, collecting: bool) -> None:
    import gc

    data = Dataset(tmp_path / "data")
    data.fold(results_with(tmp_path, [row("1.0.0", "1.0.60")]))
    was = gc.isenabled()
    try:
        (gc.enable if collecting else gc.disable)()
        rows = Dataset(data.root).read()[0]
        assert gc.isenabled() is collecting
    finally:
        (gc.enable if was else gc.disable)()
    assert [r.cli_version for r in rows] == ["1.0.60"]
