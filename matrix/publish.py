"""Snapshots of what was published, so the site can say what changed since the last publish.

``<results>/published/`` holds the rows of the newest build, ``<results>/previous/`` those
of the build before it whose rows differed. A rebuild of unchanged results keeps both, so
the "what changed" page is the same on every rebuild of the same data."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .store import ROWS_FILE, load_frame

__all__ = ["Snapshot", "roll"]

STAMP = "stamp.json"


@dataclass(frozen=True)
class Snapshot:
    frame: pd.DataFrame
    generated_at: str


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _copy(src_rows: Path, dest: Path, generated_at: str) -> None:
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    shutil.copyfile(src_rows, tmp / ROWS_FILE)
    (tmp / STAMP).write_text(json.dumps({"generated_at": generated_at, "sha256": _digest(src_rows)}))
    shutil.rmtree(dest, ignore_errors=True)
    os.replace(tmp, dest)


def _stamp(directory: Path) -> dict[str, str]:
    try:
        data = json.loads((directory / STAMP).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def roll(results: Path, generated_at: str) -> Snapshot | None:
    """Record the current rows as published; return the previous distinct publish, if any."""
    rows = results / ROWS_FILE
    published, previous = results / "published", results / "previous"
    if _stamp(published).get("sha256") != _digest(rows):
        if (published / ROWS_FILE).exists():
            shutil.rmtree(previous, ignore_errors=True)
            os.replace(published, previous)
        _copy(rows, published, generated_at)
    if not (previous / ROWS_FILE).exists():
        return None
    frame, _ = load_frame(previous)
    return Snapshot(frame, _stamp(previous).get("generated_at", "?"))
