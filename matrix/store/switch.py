"""Changing the dataset only as a whole: every new file is first written beside the dataset
(``.fold/``), then one small file, written atomically, commits the change (the switch), and
only then are the files moved into place. A writer killed before the commit leaves the old
dataset (what it staged is removed by the next reader or writer); one killed after it leaves a
committed change that the next reader or writer finishes, the same way. Readers hold the
dataset shared and the switch holds it alone (``matrix/execute/lock.py``), so a reader sees
one version from start to end.

``COMPAT_MATRIX_FOLD_TRACE``: a file each phase of a change appends its name to as it starts
(how the fault tests know where they killed it)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path

from matrix.execute.storage import write_atomic, writing

__all__ = ["STAGE", "TRACE_ENV", "recover", "switch", "trace"]

STAGE = ".fold"
_COMMIT = "commit.json"
TRACE_ENV = "COMPAT_MATRIX_FOLD_TRACE"


def trace(phase: str) -> None:
    """Note that a change enters ``phase`` (only where ``COMPAT_MATRIX_FOLD_TRACE`` names a file)."""
    path = os.environ.get(TRACE_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(phase + "\n")
            f.flush()
            os.fsync(f.fileno())


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def switch(root: Path, writes: Mapping[str, bytes], deletes: Iterable[str] = ()) -> None:
    """Replace the files ``writes`` names (paths relative to ``root``) and remove ``deletes``,
    all in one switch. The caller holds ``root`` alone."""
    stage = root / STAGE
    with writing(root, kept="the dataset is as it was before this change"):
        if stage.exists():
            shutil.rmtree(stage)
        trace("stage")
        for rel, data in writes.items():
            target = stage / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
        for directory in {(stage / rel).parent for rel in writes} | {stage}:
            _fsync_dir(directory)
        trace("commit")
        write_atomic(stage / _COMMIT, json.dumps({"writes": sorted(writes), "deletes": sorted(deletes)}))
    _apply(root)


def _apply(root: Path) -> None:
    """Move a committed change into place; what was moved already is not moved again."""
    stage = root / STAGE
    trace("apply")
    with writing(root, kept="the change is committed: the next compat-matrix command that reads the dataset "
                            "finishes it"):
        commit = json.loads((stage / _COMMIT).read_text())
        touched: set[Path] = set()
        for rel in commit["writes"]:
            src, dst = stage / rel, root / rel
            if src.exists():
                dst.parent.mkdir(parents=True, exist_ok=True)
                os.replace(src, dst)
                touched.add(dst.parent)
        for rel in commit["deletes"]:
            (root / rel).unlink(missing_ok=True)
            touched.add((root / rel).parent)
        for directory in touched:
            _fsync_dir(directory)
        trace("clean")
        (stage / _COMMIT).unlink()
        shutil.rmtree(stage)
    trace("done")


def recover(root: Path) -> str | None:
    """Finish a committed change a killed writer left, or remove what an uncommitted one
    staged; what was done (None: nothing to do). The caller holds ``root`` alone."""
    stage = root / STAGE
    if not stage.exists():
        return None
    if (stage / _COMMIT).exists():
        _apply(root)
        return f"{root}: finished a change of the dataset that was interrupted after it was committed"
    with writing(root):
        shutil.rmtree(stage)
    return f"{root}: removed what an interrupted change of the dataset had staged (the dataset is as it was before it)"
