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
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import pandas as pd

from matrix import rules_version
from matrix.errors import UserError
from matrix.execute.storage import write_atomic, writing

__all__ = ["RELEASES_FILE", "ROWS_FILE", "Releases", "Row", "Store", "frame_of", "is_stale", "load_frame",
           "load_releases", "parse_row", "save_releases"]

ROWS_FILE = "rows.jsonl"
# Release dates of the versions measured: family -> "sdk"|"cli" -> version -> ISO date.
RELEASES_FILE = "releases.json"
SCHEMA = 1
_CHUNK = 65536
KEPT = "every whole row stored so far is kept"


@dataclass(frozen=True)
class Row:
    family: str
    sdk_version: str
    cli_version: str
    probe: str
    outcome: str
    mutation: str = ""
    protocol: int | None = None
    observed_cli_version: str | None = None
    error_type: str | None = None
    error_message: str | None = None
    message_names_versions: bool | None = None
    message_actionable: bool | None = None
    seconds: float = 0.0
    start_seconds: float | None = None
    calls_seconds: float | None = None
    stop_seconds: float | None = None
    sdk_declared: dict[str, Any] = field(default_factory=dict)
    node_runtime: str | None = None
    leftovers_killed: list[str] = field(default_factory=list)
    # Handshakes: seconds after stop() returned until every process the SDK started was gone
    # (None: not measured, or something outlived the wait), and what outlived it.
    exit_after_stop_seconds: float | None = None
    leaked: list[str] = field(default_factory=list)
    wrong_cli: bool = False
    # Measured more than once (run --repeat N): every outcome seen, and whether they differed.
    repeats: list[str] = field(default_factory=list)
    flaky: bool = False
    detail: dict[str, Any] = field(default_factory=dict)
    harness_version: str = ""
    measured_at: str = ""
    host: str = ""
    schema: int = SCHEMA

    def key(self) -> tuple[str, str, str, str, str]:
        return (self.family, self.sdk_version, self.cli_version, self.probe, self.mutation)


_FIELDS = {f.name for f in fields(Row)}


def parse_row(line: str) -> Row:
    data = json.loads(line)
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    unknown = set(data) - _FIELDS
    if unknown:
        raise ValueError(f"unknown fields {sorted(unknown)}")
    return Row(**data)


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
        line = (json.dumps(asdict(row), sort_keys=True, default=str) + "\n").encode()
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


def is_stale(row: Row) -> bool:
    """Measured by older rules of its probe, or never given a verdict (a harness error)."""
    return row.harness_version != rules_version(row.probe) or row.outcome == "harness-error"


def frame_of(rows: list[Row]) -> pd.DataFrame:
    """Rows as one DataFrame, one row per cell, every column present even when empty."""
    columns = [f.name for f in fields(Row)]
    # A shallow copy per row: asdict's deep copy of every detail dict cost seconds on a whole history.
    return pd.DataFrame([{c: getattr(r, c) for c in columns} for r in rows], columns=columns)


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


def save_releases(directory: Path, update: Releases) -> None:
    """Merge ``update`` into the stored release dates (atomic replace)."""
    data = load_releases(directory)
    for family, sides in update.items():
        for side, versions in sides.items():
            data.setdefault(family, {}).setdefault(side, {}).update(versions)
    write_atomic(directory / RELEASES_FILE, json.dumps(data, indent=1, sort_keys=True))
