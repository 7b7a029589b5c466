"""The only module that knows the results file format.

One JSON object per line in ``rows.jsonl``, appended with O_APPEND and fsync, so a killed
run loses at most the row being written. Reading keeps every valid row, reports a
truncated or corrupt line by file and line number, and keeps the newest row per cell.
Shards merge by concatenating files.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import pandas as pd

from .errors import UserError

__all__ = ["RELEASES_FILE", "ROWS_FILE", "Releases", "Row", "Store", "load_frame", "load_releases", "save_releases"]

ROWS_FILE = "rows.jsonl"
# Release dates of the versions measured: family -> "sdk"|"cli" -> version -> ISO date.
RELEASES_FILE = "releases.json"
SCHEMA = 1


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


def _parse(line: str) -> Row:
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

    def check_writable(self) -> None:
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            probe = self.directory / ".write-test"
            probe.write_text("")
            probe.unlink()
        except OSError as err:
            raise UserError(
                f"results directory {self.directory} is not writable ({err.strerror}); "
                "pass --results DIR with a writable directory"
            ) from None

    def append(self, row: Row) -> None:
        line = json.dumps(asdict(row), sort_keys=True, default=str) + "\n"
        with self._lock:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                # A run killed mid-write leaves a line without its newline; start afresh
                # so the new row is not glued onto it.
                size = os.fstat(fd).st_size
                if size:
                    with open(self.path, "rb") as f:
                        f.seek(size - 1)
                        if f.read(1) != b"\n":
                            line = "\n" + line
                os.write(fd, line.encode())
                os.fsync(fd)
            finally:
                os.close(fd)

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
                row = _parse(line)
            except (ValueError, TypeError) as err:
                what = "truncated last line (a run was killed while writing)" if n - 1 == last \
                    else f"corrupt line ({err})"
                warnings.append(f"{self.path}:{n}: {what}; skipped, the other rows are kept")
                continue
            rows[row.key()] = row
        return list(rows.values()), warnings


def load_frame(directory: Path) -> tuple[pd.DataFrame, list[str]]:
    """The results as one DataFrame, one row per cell (the site and reports read only this)."""
    rows, warnings = Store(directory).read()
    columns = [f.name for f in fields(Row)]
    # A shallow copy per row: asdict's deep copy of every detail dict cost seconds on a whole history.
    frame = pd.DataFrame([{c: getattr(r, c) for c in columns} for r in rows], columns=columns)
    return frame, warnings


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
    directory.mkdir(parents=True, exist_ok=True)
    tmp = directory / (RELEASES_FILE + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
    os.replace(tmp, directory / RELEASES_FILE)
