"""The only module that knows the results file format.

One JSON object per line in ``rows.jsonl``, appended with O_APPEND and fsync, so a killed
run loses at most the row being written. Reading keeps every valid row, reports a
truncated or corrupt line by file and line number, and keeps the newest row per cell.
Shards merge by concatenating files.
"""

from __future__ import annotations

import errno
import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from matrix.errors import UserError
from matrix.execute.storage import write_atomic, writing
from matrix.model import Row

__all__ = ["RELEASES_FILE", "ROWS_FILE", "Releases", "Store", "frame_of", "load_frame",
           "load_releases", "merge_releases", "parse_row", "save_releases"]

ROWS_FILE = "rows.jsonl"
# Release dates of the versions measured: family -> "sdk"|"cli" -> version -> ISO date.
RELEASES_FILE = "releases.json"
_CHUNK = 65536
KEPT = "every whole row stored so far is kept"


def parse_row(line: str) -> Row:
    """One stored line as a row; ``ValueError`` (pydantic's ``ValidationError``) names what is wrong."""
    return Row.model_validate_json(line)


class Store:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.path = directory / ROWS_FILE
        self._lock = threading.Lock()
        self.notes: list[str] = []  # what a writer repaired, for the run to say
        self._began = False

    def check_writable(self) -> None:
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._began = True
            probe = self.directory / ".write-test"
            probe.write_text("")
            probe.unlink()
        except OSError as err:
            raise UserError(
                f"results directory {self.directory} is not writable ({err.strerror}); "
                "pass --results DIR with a writable directory"
            ) from None

    def append(self, row: Row) -> None:
        """One whole row, or nothing: a write the disk refuses is rolled back to the last
        whole line and ends the run (``StorageError``)."""
        line = (row.to_json() + "\n").encode()
        with self._lock, writing(self.path, KEPT):
            if not self._began:  # later, a directory that vanished is an error, never made anew
                self.directory.mkdir(parents=True, exist_ok=True)
                self._began = True
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                self._cut_partial(fd)
                size = os.fstat(fd).st_size
                try:
                    if os.write(fd, line) != len(line):  # the disk took only part of it
                        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self.path))
                    os.fsync(fd)
                except OSError:
                    os.ftruncate(fd, size)
                    raise
            finally:
                os.close(fd)

    def repair(self) -> str | None:
        """Cut a last line that was never finished (a run killed, or a disk that filled, while
        writing it) back to the last whole row; say so. None when there was nothing to cut."""
        if not self.path.exists():
            return None
        with self._lock, writing(self.path, KEPT):
            fd = os.open(self.path, os.O_RDWR)
            try:
                self._cut_partial(fd)
            finally:
                os.close(fd)
        return self.notes[-1] if self.notes else None

    def _cut_partial(self, fd: int) -> None:
        size = os.fstat(fd).st_size
        if not size or os.pread(fd, 1, size - 1) == b"\n":
            return
        end = size
        while end > 0:
            start = max(0, end - _CHUNK)
            found = os.pread(fd, end - start, start).rfind(b"\n")
            if found >= 0:
                end = start + found + 1
                break
            end = start
        os.ftruncate(fd, end)
        self.notes.append(f"{self.path}: the last line was never finished (a run was killed, or the disk filled, "
                          f"while writing it); removed it ({size - end} bytes), every whole row is kept")

    def read(self) -> tuple[list[Row], list[str]]:
        """All valid rows, newest per cell last-wins, and a warning per bad line."""
        rows: dict[tuple[str, ...], Row] = {}
        warnings: list[str] = []
        if not self.path.exists():
            return [], []
        with open(self.path, encoding="utf-8", errors="replace") as f:
            lines = f.read().split("\n")
        last = len(lines) - 1
        for n, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                row = parse_row(line)
            except (ValueError, TypeError) as err:
                what = "truncated last line (a run was killed while writing)" if n - 1 == last \
                    else f"corrupt line ({err})"
                warnings.append(f"{self.path}:{n}: {what}; skipped, the other rows are kept")
                continue
            rows[row.key()] = row
        return list(rows.values()), warnings


def frame_of(rows: list[Row], payload_columns: Sequence[str] = ()) -> pd.DataFrame:
    """Rows as one DataFrame, one row per cell: every field of the core and of the payload as
    a column, ``payload_columns`` (and the core's) present even when empty."""
    names = {name: f.alias or name for name, f in Row.model_fields.items() if name != "payload"}
    extra = dict.fromkeys(payload_columns)
    for r in rows:
        extra.update(dict.fromkeys(k for k in r.payload if k not in extra))
    columns = [*names.values(), *(k for k in extra if k not in names.values())]
    # A shallow copy per row: a deep copy of every detail dict costs seconds on a whole history.
    return pd.DataFrame([{**r.payload, **{col: getattr(r, name) for name, col in names.items()}} for r in rows],
                        columns=columns)


def load_frame(directory: Path) -> tuple[pd.DataFrame, list[str]]:
    """The results as one DataFrame, one row per cell (the site and reports read only this)."""
    rows, warnings = Store(directory).read()
    return frame_of(rows), warnings


Releases = dict[str, dict[str, dict[str, str | None]]]


def load_releases(directory: Path) -> Releases:
    try:
        data = json.loads((directory / RELEASES_FILE).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def merge_releases(into: Releases, more: Releases) -> Releases:
    """``into`` with ``more``'s releases added (a date in ``more`` wins); ``into`` is changed."""
    for family, sides in more.items():
        for side, versions in sides.items():
            into.setdefault(family, {}).setdefault(side, {}).update(versions)
    return into


def save_releases(directory: Path, update: Releases) -> None:
    """Merge ``update`` into the stored release dates (atomic replace)."""
    data = merge_releases(load_releases(directory), update)
    write_atomic(directory / RELEASES_FILE, json.dumps(data, indent=1, sort_keys=True))
