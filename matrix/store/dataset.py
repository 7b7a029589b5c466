"""The measured history kept in the repository (``data/``), as MDN's browser-compat-data keeps
what its collector measures: deterministic files that a maintainer folds local measurements
into and a reviewer reads as a diff.

Layout (``DATA_SCHEMA``)::

    data/index.json                          schema version, families, row counts per file
    data/<family>/releases.json              release dates of every measured version
    data/<family>/<probe>/<side>-<version>.jsonl
    data/evidence/<family>/...jsonl.gz       transcripts and stand-in logs, compressed
    data/changelog.jsonl                     one entry per fold: releases added, verdicts moved

A handshake cell lives in the file of the newer of its two releases (by release date), every
other cell in its SDK release's file: a new release, on either side, is one new file. Rows are
one JSON object per line with sorted keys, files sorted by cell; no machine paths, user or
host names (``scrub``). Local measurements (``results/``) never reach ``data/`` but through
``fold``, which says what it added and changed."""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from matrix.execute.redaction import scrub_paths
from matrix.execute.storage import write_atomic, writing
from matrix.model import Row
from matrix.store import changelog
from matrix.store.results import RELEASES_FILE, ROWS_FILE, Releases, Store, frame_of, load_releases, parse_row
from matrix.versions import sort_key

__all__ = ["DATA_ENV", "DATA_SCHEMA", "RESULTS_ENV", "Dataset", "FoldReport", "Sources", "row_file", "scrub"]

DATA_SCHEMA = 1
RESULTS_ENV = "COMPAT_MATRIX_RESULTS"
DATA_ENV = "COMPAT_MATRIX_DATA"
INDEX = "index.json"
EVIDENCE = "evidence"
# Outcomes that say nothing about the SDK: never folded into the history (re-measured locally).
_NOT_MEASURED = {"infra-error"}


def scrub(row: Row) -> Row:
    """The row as the dataset keeps it: every string with machine paths cut, no host name."""
    def clean(value: Any) -> Any:
        if isinstance(value, str):
            return scrub_paths(value)
        if isinstance(value, list):
            return [clean(v) for v in value]
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        return value

    data = {k: clean(v) for k, v in row.model_dump(by_alias=True).items()}
    data["host"] = ""
    return Row.model_validate(data)


def _date(releases: Releases, family: str, side: str, version: str) -> str:
    return str(releases.get(family, {}).get(side, {}).get(version) or "")


def row_file(row: Row, releases: Releases) -> str:
    """The file a cell lives in, relative to ``data/``: its newer release's, for a handshake;
    its SDK release's, for every other probe (their other side is chosen by the harness)."""
    side, version = "sdk", row.sdk_version
    if row.probe == "handshake":
        sdk = _date(releases, row.family, "sdk", row.sdk_version)
        cli = _date(releases, row.family, "cli", row.cli_version)
        if not sdk or (cli and cli >= sdk):
            side, version = "cli", row.cli_version
    return f"{row.family}/{row.probe}/{side}-{version}.jsonl"


def _line(row: Row) -> str:
    return row.to_json()


def _cell_order(row: Row) -> tuple[Any, ...]:
    return (row.probe, row.mutation, sort_key(row.sdk_version), sort_key(row.cli_version))


@dataclass
class FoldReport:
    added: list[Row] = field(default_factory=list)
    replaced: list[tuple[Row, Row]] = field(default_factory=list)  # (was, now)
    unchanged: int = 0
    skipped: list[Row] = field(default_factory=list)  # infra errors: not measurements
    files: list[str] = field(default_factory=list)  # relative to data/, written
    entry: changelog.Entry | None = None  # what the changelog records of this fold

    @property
    def moved(self) -> list[tuple[Row, Row]]:
        return [(a, b) for a, b in self.replaced if a.outcome != b.outcome]


class Dataset:
    """``data/``: read, and folded into from a local results directory."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def exists(self) -> bool:
        return (self.root / INDEX).exists()

    def files(self) -> list[Path]:
        return sorted(p for p in self.root.glob("*/*/*.jsonl")) if self.root.exists() else []

    def read(self) -> tuple[list[Row], list[str]]:
        rows: list[Row] = []
        warnings: list[str] = []
        for path in self.files():
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                if not line.strip():
                    continue
                try:
                    rows.append(parse_row(line))
                except (ValueError, TypeError) as err:
                    warnings.append(f"{path}:{n}: corrupt row ({err}); skipped, the other rows are kept")
        return rows, warnings

    def releases(self) -> Releases:
        out: Releases = {}
        for path in sorted(self.root.glob(f"*/{RELEASES_FILE}")) if self.root.exists() else []:
            try:
                out[path.parent.name] = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
        return out

    def evidence(self, rel: str) -> Path:
        return self.root / EVIDENCE / (rel + ".gz")

    def fold(self, results: Path, at: str | None = None) -> FoldReport:
        """Fold the rows measured in ``results`` into the dataset: a cell the dataset lacks is
        added, one it has is replaced by a newer measurement; infra errors are left out. Only
        the files of changed cells are rewritten, deterministically."""
        local, _ = Store(results).read()
        mine, _ = self.read()
        releases = self.releases()
        for family, sides in load_releases(results).items():
            for side, versions in sides.items():
                releases.setdefault(family, {}).setdefault(side, {}).update(versions)
        by_key = {r.slot(): r for r in mine}
        report = FoldReport()
        touched: set[str] = set()
        for row in sorted(local, key=lambda r: (r.family, *_cell_order(r))):
            if row.outcome in _NOT_MEASURED:
                report.skipped.append(row)
                continue
            clean = scrub(row)
            old = by_key.get(row.slot())
            if old is not None and old.measured_at >= clean.measured_at:
                report.unchanged += 1
                continue
            if old is None:
                report.added.append(clean)
            else:
                report.replaced.append((old, clean))
                touched.add(row_file(old, releases))
            by_key[row.slot()] = clean
            touched.add(row_file(clean, releases))
            self._fold_evidence(results, clean)
        self._write(by_key.values(), releases, touched)
        report.files = sorted(touched)
        entry = changelog.entry_of(mine, report.added, report.replaced,
                                   at or datetime.now(UTC).isoformat(timespec="seconds"))
        if not entry.empty:
            changelog.append(self.root, entry)
            report.entry = entry
            report.files.append(changelog.CHANGELOG)
        return report

    def changes(self) -> list[changelog.Entry]:
        """What each fold changed, newest first."""
        return changelog.entries(self.root)[::-1]

    def _fold_evidence(self, results: Path, row: Row) -> None:
        for key in ("transcript", "standin_log"):
            rel = row.detail.get(key)
            if not isinstance(rel, str):
                continue
            src = results / rel
            if src.exists():
                raw = scrub_paths(src.read_text(encoding="utf-8", errors="replace")).encode()
                write_atomic(self.evidence(rel), gzip.compress(raw, compresslevel=9, mtime=0))

    def _write(self, rows: Iterable[Row], releases: Releases, touched: set[str]) -> None:
        grouped: dict[str, list[Row]] = {}
        for row in rows:
            grouped.setdefault(row_file(row, releases), []).append(row)
        with writing(self.root):
            for rel in sorted(touched):
                part = sorted(grouped.get(rel, []), key=_cell_order)
                path = self.root / rel
                if part:
                    write_atomic(path, "".join(_line(r) + "\n" for r in part))
                else:
                    path.unlink(missing_ok=True)
            for family in sorted({rel.split("/", 1)[0] for rel in grouped}):
                write_atomic(self.root / family / RELEASES_FILE,
                             json.dumps(releases.get(family, {}), indent=1, sort_keys=True) + "\n")
            counts = {p.relative_to(self.root).as_posix(): p.read_bytes().count(b"\n") for p in self.files()}
            write_atomic(self.root / INDEX, json.dumps(
                {"schema": DATA_SCHEMA, "families": sorted({k.split("/", 1)[0] for k in counts}),
                 "rows": sum(counts.values()), "files": counts}, indent=1, sort_keys=True) + "\n")


@dataclass(frozen=True)
class Sources:
    """Where a build or an answer reads rows and evidence: the committed history, and the local
    results measured since (a newer local row of a cell wins: it is the newest measurement)."""

    results: Path
    data: Path | None = None

    def rows(self) -> tuple[list[Row], list[str]]:
        rows: dict[tuple[str, ...], Row] = {}
        warnings: list[str] = []
        if self.data is not None:
            kept, warnings = Dataset(self.data).read()
            rows = {r.slot(): r for r in kept}
        local, more = Store(self.results).read()
        for r in local:
            old = rows.get(r.slot())
            if old is None or r.measured_at >= old.measured_at:
                rows[r.slot()] = r
        return list(rows.values()), warnings + more

    def releases(self) -> Releases:
        out = Dataset(self.data).releases() if self.data is not None else {}
        for family, sides in load_releases(self.results).items():
            for side, versions in sides.items():
                out.setdefault(family, {}).setdefault(side, {}).update(versions)
        return out

    def evidence(self, rel: str | None) -> str | None:
        """A transcript or stand-in log, local or kept (compressed) in the dataset."""
        if not rel:
            return None
        local = self.results / rel
        if local.exists():
            return local.read_text(encoding="utf-8", errors="replace")
        if self.data is not None:
            kept = Dataset(self.data).evidence(rel)
            if kept.exists():
                return gzip.decompress(kept.read_bytes()).decode("utf-8", errors="replace")
        return None

    def frame(self) -> tuple[pd.DataFrame, list[str]]:
        rows, warnings = self.rows()
        return frame_of(rows), warnings

    def inputs(self) -> list[Path]:
        """The files the rows come from (a build's cache keys on them)."""
        kept = Dataset(self.data).files() if self.data is not None else []
        return [*kept, self.results / ROWS_FILE]

    def env(self) -> dict[str, str]:
        """How a notebook's kernel finds these sources (``from_env``)."""
        env = {RESULTS_ENV: str(self.results.resolve())}
        if self.data is not None:
            env[DATA_ENV] = str(self.data.resolve())
        return env

    @classmethod
    def from_env(cls, default_results: str = "../results", default_data: str = "../data") -> Sources:
        data = Path(os.environ.get(DATA_ENV, default_data))
        return cls(Path(os.environ.get(RESULTS_ENV, default_results)), data if data.exists() else None)

    def with_results(self, results: Path) -> Sources:
        return replace(self, results=results)
