"""A full disk under what a run keeps: one line naming the path, exit 3, and only whole rows.

On a real small filesystem (a tmpfs the test mounts; skipped with the reason where it cannot)."""

from __future__ import annotations

import errno
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from matrix.execute.storage import StorageError, ensure_room, write_atomic
from matrix.model import Row
from matrix.store.results import ROWS_FILE, Store
from tests.conftest import make_row, site_root
from tests.families.copilot.relay import FRAMES, relay


def row(n: int) -> Row:
    return make_row(f"1.0.{n}", "1.0.60", protocol=3, error_message="x" * 300, harness_version="t")


def test_a_full_disk_rolls_the_append_back_to_the_last_whole_row(tmpfs, fill) -> None:  # type: ignore[no-untyped-def]
    results = tmpfs("96k")
    store = Store(results)
    store.append(row(0))
    filler = fill(results, leave=1500)
    appended = 1
    with pytest.raises(StorageError) as exc:
        for n in range(1, 200):
            store.append(row(n))
            appended += 1
    message = str(exc.value)
    assert exc.value.errno == errno.ENOSPC
    assert str(results / ROWS_FILE) in message and "No space left on device" in message
    assert "free space" in message and "every whole row stored so far is kept" in message
    text = (results / ROWS_FILE).read_text()
    assert text.endswith("\n")
    rows, warnings = store.read()
    assert warnings == [] and len(rows) == appended  # every whole row, and nothing of the one that failed
    filler.unlink()
    store.append(row(999))  # space again: the store goes on from where it was
    assert len(store.read()[0]) == appended + 1


def test_a_torn_row_left_by_a_full_disk_is_repaired_by_the_next_writer(tmpfs, fill) -> None:  # type: ignore[no-untyped-def]
    results = tmpfs("96k")
    store = Store(results)
    store.append(row(0))
    with open(results / ROWS_FILE, "ab") as f:
        f.write(b'{"family": "copilot-python", "sdk_ver')  # what a writer without rollback leaves
    assert store.repair() is not None
    assert store.read() == ([row(0)], [])


def test_a_read_only_or_vanished_directory_says_which_and_what_to_do(tmpfs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ro = tmpfs("1m")
    subprocess.run(["mount", "-o", "remount,ro", str(ro)], check=True)
    with pytest.raises(StorageError) as exc:
        Store(ro).append(row(1))
    assert exc.value.errno == errno.EROFS and "read-only" in str(exc.value)
    gone = tmp_path / "gone" / "results"
    gone.mkdir(parents=True)
    store = Store(gone)
    store.append(row(1))
    shutil.rmtree(tmp_path / "gone")
    with pytest.raises(StorageError) as exc:
        store.append(row(2))  # not made anew: the rows that were there are gone, and the user must know
    assert exc.value.errno == errno.ENOENT and str(gone) in str(exc.value) and "vanished" in str(exc.value)
    assert not gone.exists()


def test_write_atomic_and_room_on_a_full_disk_leave_nothing_behind(tmpfs, fill) -> None:  # type: ignore[no-untyped-def]
    where = tmpfs("64k")
    write_atomic(where / "releases.json", "{}")
    fill(where, leave=0)
    with pytest.raises(StorageError):
        write_atomic(where / "releases.json", json.dumps({"x": "y" * 20000}))
    with pytest.raises(StorageError):
        ensure_room(where)
    assert (where / "releases.json").read_text() == "{}"  # the old file, whole
    assert sorted(p.name for p in where.iterdir()) == [".filler", "releases.json"]  # no temporary left


def test_the_shim_relays_unchanged_when_its_transcript_cannot_be_written(tmpfs, fill, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from matrix.families.copilot.tolerance_verdict import transcript_cut

    full = tmpfs("64k")
    fill(full, leave=0)
    transcript = full / "t.jsonl"
    res = relay(tmp_path, transcript)
    assert res.returncode == 0, res.stderr
    assert res.stdout == FRAMES  # what the SDK sees does not depend on our disk
    assert transcript_cut(transcript)  # and the harness can tell the record is not whole


def test_a_site_build_onto_a_full_disk_is_one_line_and_exit_3(tmpfs, fill, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    from matrix.commands.cli import main

    repo = site_root(tmp_path / "repo")
    results = tmp_path / "results"
    store = Store(results)
    for n in range(3):
        store.append(row(n))
    site = tmpfs("256k")
    fill(site, leave=8192)
    code = main(["build", "--results", str(results), "--site", str(site), "--root", str(repo)])
    err = capsys.readouterr().err.strip()
    assert code == 3, err
    assert len(err.splitlines()) == 1 and err.startswith("infrastructure error: cannot write ")
    assert str(site) in err and "No space left on device" in err and "Traceback" not in err
