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

from matrix.model import Row
from matrix.store.results import ROWS_FILE, load_frame

__all__ = ["Snapshot", "roll"]

STAMP = "stamp.json"


@dataclass(frozen=True)
class Snapshot:
    frame: pd.DataFrame
    generated_at: str


def _copy(text: bytes, dest: Path, generated_at: str) -> None:
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    (tmp / ROWS_FILE).write_bytes(text)
    (tmp / STAMP).write_text(json.dumps({"generated_at": generated_at, "sha256": hashlib.sha256(text).hexdigest()}))
    shutil.rmtree(dest, ignore_errors=True)
    os.replace(tmp, dest)


def _stamp(directory: Path) -> dict[str, str]:
    try:
        data = json.loads((directory / STAMP).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def roll(results: Path, rows: list[Row], generated_at: str) -> Snapshot | None:
    """Record ``rows`` as published (under ``results``); return the previous distinct publish, if any."""
    text = "".join(r.to_json() + "\n"
                   for r in sorted(rows, key=Row.key)).encode()
    published, previous = results / "published", results / "previous"
    if _stamp(published).get("sha256") != hashlib.sha256(text).hexdigest():
        if (published / ROWS_FILE).exists():
            shutil.rmtree(previous, ignore_errors=True)
            os.replace(published, previous)
        _copy(text, published, generated_at)
    if not (previous / ROWS_FILE).exists():
        return None
    frame, _ = load_frame(previous)
    return Snapshot(frame, _stamp(previous).get("generated_at", "?"))
