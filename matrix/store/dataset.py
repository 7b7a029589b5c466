"""The measured history kept in the repository (``data/``), as MDN's browser-compat-data keeps
what its collector measures: deterministic files that a maintainer folds local measurements
into and a reviewer reads as a diff.

Layout (``DATA_SCHEMA``)::

    data/index.json                          the manifest: schema, families, every file's rows and checksum
    data/<family>/releases.json              release dates of every measured version, and what the
                                             registries list (``<side>-listed``: see listed.py)
    data/<family>/<probe>/<side>-<version>.jsonl
    data/evidence/<family>/...jsonl.gz       transcripts and stand-in logs, compressed
    data/changelog.jsonl                     one entry per fold: releases added, verdicts moved

A cell of a pair of releases lives in the file of the newer of the two (by release date), a
check in its SDK release's file (``matrix/store/layout.py``): a new release, on either side, is
one new file. Rows are
one JSON object per line with sorted keys, files sorted by cell; no machine paths, user or
host names (``scrub``). Local measurements (``results/``) never reach ``data/`` but through
``fold``, which says what it added and changed.

The dataset is checked whenever it is read (``matrix/store/check.py``: any violation is an
error naming the file, the line and the rule, and nothing is read), and changed only as a
whole (``matrix/store/switch.py``)."""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from matrix.errors import UserError
from matrix.execute.lock import LOCK_FILE, holding, sharing
from matrix.execute.redaction import scrub_paths
from matrix.model import Outcome, Row
from matrix.store import changelog
from matrix.store.check import DatasetError, Snapshot, Typing, Violation, check, unsafe_field
from matrix.store.layout import row_file
from matrix.store.manifest import DATA_SCHEMA, INDEX, digest, manifest_of
from matrix.store.results import (
    RELEASES_FILE,
    ROWS_FILE,
    Releases,
    Store,
    frame_of,
    load_releases,
    merge_releases,
    parse_row,
)
from matrix.store.switch import STAGE, recover, switch, trace
from matrix.versions import sort_key

__all__ = ["DATA_ENV", "DATA_SCHEMA", "RESULTS_ENV", "Dataset", "FoldReport", "Sources", "row_file", "scrub"]

RESULTS_ENV = "COMPAT_MATRIX_RESULTS"
DATA_ENV = "COMPAT_MATRIX_DATA"
EVIDENCE = "evidence"
# Outcomes that say nothing about the SDK: never folded into the history (re-measured locally).
_NOT_MEASURED = {Outcome.INFRA_ERROR}
_OUTCOMES = {o.value for o in Outcome}

# Why a row may not be folded (None: it may): a family or probe this installation does not have,
# a release the results' selection does not name.
Accept = Callable[[Row, Releases], str | None]


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
    notes: list[str] = field(default_factory=list)  # what was repaired or left out on the way

    @property
    def moved(self) -> list[tuple[Row, Row]]:
        return [(a, b) for a, b in self.replaced if a.outcome != b.outcome]


class Dataset:
    """``data/``: read (verified, one version), and folded into from a local results directory
    (as a whole)."""

    def __init__(self, root: Path, typing: Typing | None = None) -> None:
        """``typing``: how each row's family types it (its payload), checked on every read and
        applied to every row folded in (None: payloads are kept as they are)."""
        self.root = root
        self.typing = typing
        self._snapshot: Snapshot | None = None

    def exists(self) -> bool:
        return (self.root / INDEX).exists()

    def present(self) -> bool:
        """Anything of a dataset is there (a manifest, a changelog, a family's files)."""
        return self.exists() or (self.root / changelog.CHANGELOG).exists() or any(self.root.glob("*/*/*.jsonl"))

    def files(self) -> list[Path]:
        return sorted(p for p in self.root.glob("*/*/*.jsonl")) if self.root.exists() else []

    # -- reading --------------------------------------------------------------------------

    def raw(self) -> tuple[dict[str, bytes], bytes | None]:
        """Every file of the dataset but its manifest and lock (and what a change stages)."""
        files: dict[str, bytes] = {}
        for dirpath, dirnames, filenames in os.walk(self.root):
            rel_dir = os.path.relpath(dirpath, self.root)
            if rel_dir == ".":
                dirnames[:] = [d for d in dirnames if d != STAGE]
            for name in filenames:
                rel = name if rel_dir == "." else f"{Path(rel_dir).as_posix()}/{name}"
                if rel in (INDEX, LOCK_FILE):
                    continue
                files[rel] = (self.root / rel).read_bytes()
        index = self.root / INDEX
        return files, (index.read_bytes() if index.exists() else None)

    @contextmanager
    def _reading(self) -> Iterator[None]:
        """Hold the dataset shared, after finishing (or undoing) a change a killed writer left."""
        while True:
            if (self.root / STAGE).exists():
                with holding(self.root, wait=True):
                    recover(self.root)
            with sharing(self.root):
                if (self.root / STAGE).exists():
                    continue  # a change was killed after we looked: finish it first
                yield
                return

    def verify(self, locked: bool = False) -> tuple[Snapshot, list[Violation]]:
        """Every violation of the dataset (``compat-matrix check``), and what it holds."""
        if not self.root.is_dir():
            return Snapshot(), [Violation(str(self.root), 0, "index", "no dataset there (no such directory)")]
        if locked:
            files, index = self.raw()
        else:
            with self._reading():
                files, index = self.raw()
        return check(str(self.root), files, index, self.typing)

    def snapshot(self, locked: bool = False) -> Snapshot:
        """One verified version of the dataset, read once per Dataset: any violation is an error
        naming the first (``DatasetError``) and nothing is read."""
        if self._snapshot is None:
            snap, violations = self.verify(locked)
            if violations:
                raise DatasetError(str(self.root), violations)
            self._snapshot = snap
        return self._snapshot

    def read(self) -> tuple[list[Row], list[str]]:
        return list(self.snapshot().rows), []

    def releases(self) -> Releases:
        return {f: {s: dict(v) for s, v in sides.items()} for f, sides in self.snapshot().releases.items()}

    def changes(self) -> list[changelog.Entry]:
        """What each fold changed, newest first."""
        return self.snapshot().entries[::-1]

    def evidence_path(self, rel: str) -> Path:
        return self.root / EVIDENCE / (rel + ".gz")

    def evidence(self, rel: str) -> bytes | None:
        """A transcript or stand-in log (compressed) of the version this Dataset read; the file
        changed since is an error, not another version's evidence."""
        snap = self.snapshot()
        name = f"{EVIDENCE}/{rel}.gz"
        entry = snap.manifest.files.get(name) if snap.manifest else None
        if entry is None:
            return None
        data = self.evidence_path(rel).read_bytes() if self.evidence_path(rel).exists() else b""
        if digest(data) != entry.sha256:
            raise DatasetError(str(self.root), [Violation(f"{self.root}/{name}", 0, "checksum",
                                                          "changed while it was being read (a fold switched the "
                                                          "dataset): run the command again")])
        return data

    # -- folding --------------------------------------------------------------------------

    def fold(self, results: Path, at: str | None = None, accept: Accept | None = None,
             wait: bool = False) -> FoldReport:
        """Fold the rows measured in ``results`` into the dataset, as a whole: a cell the dataset
        lacks is added, one it has is replaced by a newer measurement; infra errors are left
        out. Every row is checked first (``accept``, the schema, plain names): any one refused
        ends the fold with nothing changed. Only the files of changed cells are rewritten,
        deterministically, with the manifest and the changelog, in one switch."""
        with holding(self.root, wait=wait):
            report = FoldReport()
            note = recover(self.root)
            if note:
                report.notes.append(note)
            trace("read")
            snap = self.snapshot(locked=True) if self.exists() or self.present() else Snapshot()
            local = _checked_input(results, accept, report, self.typing)
            trace("validate")
            writes, deletes = self._fold(snap, results, local, at, report)
            if writes or deletes:
                switch(self.root, writes, deletes)
            self._snapshot = None
            trace("done")
        return report

    def _fold(self, snap: Snapshot, results: Path, local: list[Row], at: str | None,
              report: FoldReport) -> tuple[dict[str, bytes], set[str]]:
        mine = snap.rows
        releases = merge_releases({f: {s: dict(v) for s, v in sides.items()} for f, sides in snap.releases.items()},
                                  load_releases(results))
        by_slot = {r.slot(): r for r in mine}
        touched: set[str] = set()
        evidence: dict[str, bytes] = {}
        for row in sorted(local, key=lambda r: (r.family, *_cell_order(r))):
            if row.outcome in _NOT_MEASURED:
                report.skipped.append(row)
                continue
            clean = scrub(row)
            old = by_slot.get(row.slot())
            if old is not None and old.measured_at >= clean.measured_at:
                report.unchanged += 1
                continue
            if old is None:
                report.added.append(clean)
            else:
                report.replaced.append((old, clean))
                touched.add(row_file(old, releases))
            by_slot[row.slot()] = clean
            touched.add(row_file(clean, releases))
            evidence.update(_evidence_of(results, clean))
        grouped: dict[str, list[Row]] = {}
        for row in by_slot.values():
            grouped.setdefault(row_file(row, releases), []).append(row)
        files, _ = self.raw() if self.root.exists() else ({}, None)
        writes: dict[str, bytes] = {}
        deletes: set[str] = set()
        for rel in sorted(touched):
            part = sorted(grouped.get(rel, []), key=_cell_order)
            if part:
                writes[rel] = "".join(_line(r) + "\n" for r in part).encode()
            elif rel in files:
                deletes.add(rel)
        for family in sorted({rel.split("/", 1)[0] for rel in grouped}):
            writes[f"{family}/{RELEASES_FILE}"] = (json.dumps(releases.get(family, {}), indent=1, sort_keys=True)
                                                   + "\n").encode()
        for rel, data in evidence.items():
            writes[f"{EVIDENCE}/{rel}.gz"] = data
        entry = changelog.entry_of(mine, report.added, report.replaced,
                                   at or datetime.now(UTC).isoformat(timespec="seconds"))
        if not entry.empty:
            old_log = files.get(changelog.CHANGELOG, b"")
            writes[changelog.CHANGELOG] = old_log + (entry.model_dump_json() + "\n").encode()
            report.entry = entry
        writes = {rel: data for rel, data in writes.items() if files.get(rel) != data}
        if not writes and not deletes:
            return {}, set()
        after = {rel: data for rel, data in files.items() if rel not in deletes and not rel.startswith(".")}
        after.update(writes)
        writes[INDEX] = manifest_of(after).to_text().encode()
        report.files = sorted(set(writes) | deletes)
        return writes, deletes


def _checked_input(results: Path, accept: Accept | None, report: FoldReport,
                   typing: Typing | None = None) -> list[Row]:
    """The rows of ``results`` a fold takes: a line that is not a row (but a torn last one, a
    run killed while writing it), a value that is not a plain name (it would name a path outside
    the dataset), an outcome outside the vocabulary or a row ``accept`` refuses ends the fold."""
    path = results / ROWS_FILE
    try:
        lines = path.read_text(encoding="utf-8").split("\n")
    except FileNotFoundError:
        raise UserError(f"no results in {results} to fold; run `compat-matrix run` first or pass --results DIR") \
            from None
    releases = load_releases(results)
    rows: dict[tuple[str, ...], Row] = {}
    last = len(lines) - 1
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = parse_row(line)
        except (ValueError, TypeError) as err:
            if n - 1 == last:
                report.notes.append(f"{path}:{n}: a torn last line (a run was killed while writing it) is not a "
                                    "row; left out")
                continue
            raise UserError(f"{path}:{n}: not a row ({str(err).splitlines()[0][:200]}); nothing was folded. Delete "
                            "that line (or the file) and fold again") from None
        why = unsafe_field(row)
        if why is None and row.outcome not in _OUTCOMES:
            why = f"outcome {row.outcome!r} is not one of the vocabulary"
        if why is None and accept is not None:
            why = accept(row, releases)
        if why is None and typing is not None:
            try:
                row = typing(row)
            except (ValueError, UserError) as err:
                why = str(err).split("; ")[0]
        if why is not None:
            raise UserError(f"{path}:{n}: {why}; nothing was folded. Measure it again with this compat-matrix, or "
                            "delete that line, and fold again")
        rows[row.key()] = row
    return list(rows.values())


def _evidence_of(results: Path, row: Row) -> dict[str, bytes]:
    """The transcripts and logs a row names, compressed as the dataset keeps them."""
    out: dict[str, bytes] = {}
    for key in ("transcript", "standin_log"):
        rel = row.detail.get(key)
        if not isinstance(rel, str):
            continue
        src = results / rel
        if src.exists():
            raw = scrub_paths(src.read_text(encoding="utf-8", errors="replace")).encode()
            out[rel] = gzip.compress(raw, compresslevel=9, mtime=0)
    return out


@dataclass(frozen=True)
class Sources:
    """Where a build or an answer reads rows and evidence: the committed history, and the local
    results measured since (a newer local row of a cell wins: it is the newest measurement).
    The history is read once per Sources: one version of it from start to end."""

    results: Path
    data: Path | None = None
    typing: Typing | None = field(default=None, compare=False)  # see Dataset
    payload_columns: tuple[str, ...] = ()  # a frame's payload columns, present even when empty (frame_of)
    _kept: dict[str, Dataset] = field(default_factory=dict, compare=False, repr=False)

    def dataset(self) -> Dataset | None:
        if self.data is None:
            return None
        if "data" not in self._kept:
            self._kept["data"] = Dataset(self.data, self.typing)
        return self._kept["data"]

    def rows(self) -> tuple[list[Row], list[str]]:
        rows: dict[tuple[str, ...], Row] = {}
        dataset = self.dataset()
        if dataset is not None:
            rows = {r.slot(): r for r in dataset.snapshot().rows}
        local, warnings = self.local_rows()
        for r in local:
            if r.replaces(rows.get(r.slot())):
                rows[r.slot()] = r
        return list(rows.values()), warnings

    def local_rows(self) -> tuple[list[Row], list[str]]:
        """The local results' rows, typed as their families say, and what was skipped."""
        local, warnings = Store(self.results).read()
        if self.typing is None:
            return local, warnings
        typed: list[Row] = []
        for r in local:
            try:
                typed.append(self.typing(r))
            except (ValueError, UserError) as err:
                warnings.append(f"{self.results / ROWS_FILE}: {str(err).split('; ')[0]}; skipped, the other rows "
                                "are kept")
        return typed, warnings

    def releases(self) -> Releases:
        dataset = self.dataset()
        return merge_releases(dataset.releases() if dataset is not None else {}, load_releases(self.results))

    def changes(self) -> list[changelog.Entry]:
        dataset = self.dataset()
        return dataset.changes() if dataset is not None else []

    def evidence(self, rel: str | None) -> str | None:
        """A transcript or stand-in log, local or kept (compressed) in the dataset."""
        if not rel:
            return None
        local = self.results / rel
        if local.exists():
            return local.read_text(encoding="utf-8", errors="replace")
        dataset = self.dataset()
        kept = dataset.evidence(rel) if dataset is not None else None
        return gzip.decompress(kept).decode("utf-8", errors="replace") if kept else None

    def frame(self) -> tuple[pd.DataFrame, list[str]]:
        rows, warnings = self.rows()
        return frame_of(rows, self.payload_columns), warnings

    def kept_frame(self) -> pd.DataFrame | None:
        """The committed history alone, as a frame (None: there is none)."""
        dataset = self.dataset()
        return frame_of(dataset.snapshot().rows, self.payload_columns) if dataset is not None else None

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
        data = Path(os.environ.get(DATA_ENV) or default_data)
        return cls(Path(os.environ.get(RESULTS_ENV, default_results)), data if Dataset(data).present() else None)

    def with_results(self, results: Path) -> Sources:
        return replace(self, results=results, _kept=self._kept)
