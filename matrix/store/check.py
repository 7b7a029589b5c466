"""Every rule a stored dataset keeps, checked whenever it is read (as browser-compat-data lints
its data): the manifest, each file against it, each row against the schema, the outcome
vocabulary and the file it sits in, one row per cell across all files, the release lists and
the changelog. A violation is one line naming the file, the line and the rule.

Pure over the files' bytes: ``matrix/store/dataset.py`` reads them (holding the dataset so a
writer cannot switch it meanwhile) and raises on the first violation; ``compat-matrix check``
prints them all."""

from __future__ import annotations

import gc
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from pydantic import ValidationError
from pydantic_core import from_json

from matrix.errors import UserError
from matrix.model import SCHEMA as ROW_SCHEMA
from matrix.model import Outcome, Row
from matrix.store import changelog
from matrix.store.layout import row_file
from matrix.store.listed import KINDS, LISTED
from matrix.store.manifest import DATA_SCHEMA, INDEX, Manifest, digest, is_row_file, rows_in
from matrix.store.results import Releases

__all__ = ["RULES", "DatasetError", "Snapshot", "Typing", "Violation", "check", "safe_value", "unsafe_field"]

# What a row's family makes of it: its payload typed and ``per_sdk`` as the family says (the
# row itself when it already is); an error (``ValueError``, ``UserError``) says why it cannot be.
Typing = Callable[[Row], Row]

# Rule -> what it asks, for `compat-matrix check --rules` and the Reliability page.
RULES: dict[str, str] = {
    "index": f"{INDEX} exists and is the dataset's manifest (JSON of its schema)",
    "schema": f"{INDEX} names dataset schema {DATA_SCHEMA}, the one this compat-matrix reads",
    "listed": f"every file of the dataset is listed in {INDEX}",
    "present": f"every file {INDEX} lists is there",
    "checksum": f"every file has the checksum {INDEX} gives it",
    "row-count": f"every row file has the number of rows {INDEX} gives it",
    "row": f"every line of a row file is one whole row of the row schema (format {ROW_SCHEMA})",
    "outcome": "every row's outcome is one of the outcome vocabulary",
    "payload": "every row's payload is the one its family declares for its probe, as the family writes it",
    "name": "every family, probe, version and check name is a plain name (no path, no '..')",
    "placement": "every row sits in the file of its family, probe and release",
    "duplicate": "one row per cell across all files",
    "releases": "every family's releases.json maps sdk/cli to release dates",
    "changelog": "every line of changelog.jsonl is a changelog entry",
}
_OUTCOMES = {o.value for o in Outcome}
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+@-]*$")
_FIX = ("The dataset is damaged, or was changed by hand: restore it (`git checkout -- {root}`, or `git diff {root}` "
        "to see what changed), then `compat-matrix check --data {root}` lists every problem")


@dataclass(frozen=True, order=True)
class Violation:
    path: str  # shown as given: the dataset's root joined with the file
    line: int  # 0: the file as a whole
    rule: str
    detail: str

    def __str__(self) -> str:
        return f"{self.path}{f':{self.line}' if self.line else ''}: {self.detail} [rule: {self.rule}]"


class DatasetError(UserError):
    """The dataset breaks a rule: nothing is read from it, and nothing written to it."""

    def __init__(self, root: str, violations: list[Violation]) -> None:
        self.root = root
        self.violations = violations
        more = f" ({len(violations) - 1} more)" if len(violations) > 1 else ""
        fix = "" if violations[0].rule == "schema" else f". {_FIX.format(root=root)}"
        super().__init__(f"{violations[0]}{more}{fix}")


@dataclass(frozen=True)
class Snapshot:
    """One version of the dataset, verified: its rows, release lists, changelog and manifest."""

    rows: list[Row] = field(default_factory=list)
    releases: Releases = field(default_factory=dict)
    entries: list[changelog.Entry] = field(default_factory=list)
    manifest: Manifest | None = None


def safe_value(value: object) -> bool:
    return isinstance(value, str) and bool(_NAME.match(value)) and ".." not in value


def unsafe_field(row: Row) -> str | None:
    """The first field of ``row`` that names a file or a path part and is not a plain name, and
    the value of a relative path it names outside its directory (a transcript, a log)."""
    for name in ("family", "probe", "sdk_version", "cli_version"):
        if not safe_value(getattr(row, name)):
            return f"{name} {getattr(row, name)!r}"
    if row.mutation and not safe_value(row.mutation):
        return f"mutation {row.mutation!r}"
    for key in ("transcript", "standin_log"):
        rel = row.detail.get(key)
        if rel is not None and not (isinstance(rel, str) and rel and not rel.startswith("/")
                                    and all(safe_value(p) for p in rel.split("/"))):
            return f"detail.{key} {rel!r}"
    return None


def _row_of(line: str) -> tuple[Row | None, str, str]:
    """The row of a stored line, or the rule it breaks and how."""
    try:
        # pydantic's parser: every read verifies the whole dataset, and on data/ this parses its rows in
        # about half the time json.loads takes (14,248 rows: 2.4 s against 4.3 s on a loaded machine).
        data = from_json(line)
    except ValueError:
        try:  # the standard library's reading, and its words for what is wrong, and where
            data = json.loads(line)
        except json.JSONDecodeError as err:
            return None, "row", (f"not a whole JSON object ({err.msg} at column {err.colno}): cut short, or edited "
                                 "by hand")
    if not isinstance(data, dict):
        return None, "row", "not a JSON object"
    if data.get("outcome") not in _OUTCOMES:
        return None, "outcome", (f"outcome {data.get('outcome')!r} is not one of the vocabulary "
                                 f"({', '.join(sorted(_OUTCOMES))})")
    if data.get("schema") != ROW_SCHEMA:
        return None, "row", (f"a row of format {data.get('schema')!r}, not {ROW_SCHEMA}: run `compat-matrix migrate`"
                             if data.get("schema") in range(1, ROW_SCHEMA) else f"row format {data.get('schema')!r} "
                             f"is not {ROW_SCHEMA}, the one this compat-matrix reads")
    try:
        return Row.model_validate(data), "", ""
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return None, "row", f"not a row: {where}: {first['msg']}"


def _typed(row: Row, typing: Typing | None) -> tuple[Row, str]:
    """``row`` as its family types it, or why it does not fit (stored rows are kept typed)."""
    if typing is None:
        return row, ""
    try:
        typed = typing(row)
    except (ValueError, UserError) as err:
        return row, str(getattr(err, "problem", None) or str(err).split("; ")[0])
    if typed != row:
        return typed, (f"not as {row.family} writes a {row.probe} row (its payload or per_sdk differ): written by "
                       "another compat-matrix; run `compat-matrix migrate`")
    return typed, ""


SIDES = ("sdk", "cli", f"sdk{LISTED}", f"cli{LISTED}")


def _releases(path: str, raw: bytes, out: list[Violation]) -> dict[str, dict[str, str | None]]:
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as err:
        out.append(Violation(path, err.lineno, "releases", f"not JSON ({err.msg})"))
        return {}
    ok = isinstance(data, dict) and all(
        side in SIDES and isinstance(versions, dict)
        and all(isinstance(v, str) and (d is None or isinstance(d, str)) for v, d in versions.items())
        for side, versions in data.items())
    if not ok:
        out.append(Violation(path, 0, "releases", 'not {"sdk": {version: date}, "cli": {version: date}} and '
                                                  f'what the registry listed ("sdk{LISTED}": {{version: kind}})'))
        return {}
    for side in (s for s in data if s.endswith(LISTED)):
        wrong = sorted(v for v, kind in data[side].items() if kind not in KINDS)
        if wrong:
            out.append(Violation(path, 0, "releases", f"{side}: {', '.join(wrong[:5])} listed as none of "
                                                      f"{', '.join(KINDS)}"))
    return {str(side): dict(versions) for side, versions in data.items()}


def check(root: str, files: Mapping[str, bytes], index: bytes | None,
          typing: Typing | None = None) -> tuple[Snapshot, list[Violation]]:
    """Check a dataset of ``files`` (path relative to the root -> content, every file there but
    the manifest) against its manifest (``index``: its bytes, None when missing), and each row's
    payload against its family's (``typing``; None: not checked). ``root``: how paths are shown."""
    # A read makes millions of objects and keeps them all: the cycle collector's passes over
    # them while they are made find nothing to free, and took a third of the check's time.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _check(root, files, index, typing)
    finally:
        if collecting:
            gc.enable()


def _check(root: str, files: Mapping[str, bytes], index: bytes | None,
           typing: Typing | None) -> tuple[Snapshot, list[Violation]]:
    out: list[Violation] = []

    def at(rel: str) -> str:
        return f"{root.rstrip('/')}/{rel}"

    manifest: Manifest | None = None
    if index is None:
        out.append(Violation(at(INDEX), 0, "index", "missing: the manifest of every file, its rows and checksum"))
    else:
        try:
            raw = json.loads(index)
            if isinstance(raw, dict) and raw.get("schema") != DATA_SCHEMA:
                out.append(Violation(at(INDEX), 0, "schema", f"dataset schema {raw.get('schema')!r}, not "
                                     f"{DATA_SCHEMA}: run `compat-matrix migrate` (schemas 1 and 2), or a "
                                     "compat-matrix that reads it"))
            else:
                manifest = Manifest.model_validate(raw)
        except ValueError as err:
            detail = err.errors()[0]["msg"] if isinstance(err, ValidationError) else str(err)
            out.append(Violation(at(INDEX), 0, "index", f"not the dataset's manifest ({detail[:200]})"))
    if manifest is not None:
        for rel in sorted(set(files) - set(manifest.files)):
            out.append(Violation(at(rel), 0, "listed", f"not in {INDEX} (left by a killed writer, or added by hand): "
                                                       "delete it, or restore the dataset"))
        for rel, entry in sorted(manifest.files.items()):
            data = files.get(rel)
            if data is None:
                out.append(Violation(at(rel), 0, "present", f"listed in {INDEX} but missing"))
            elif digest(data) != entry.sha256:
                out.append(Violation(at(rel), 0, "checksum", f"changed since {INDEX} was written (sha256 "
                                                             f"{digest(data)[:12]}, {INDEX} says {entry.sha256[:12]})"))
                if rows_in(rel, data) != entry.rows:
                    out.append(Violation(at(rel), 0, "row-count", f"{rows_in(rel, data)} rows, {INDEX} says "
                                                                  f"{entry.rows}"))
    releases: Releases = {}
    for rel in sorted(r for r in files if r.count("/") == 1 and r.endswith("/releases.json")):
        releases[rel.split("/", 1)[0]] = _releases(at(rel), files[rel], out)
    entries: list[changelog.Entry] = []
    if changelog.CHANGELOG in files:
        for n, line in enumerate(files[changelog.CHANGELOG].decode("utf-8", "replace").splitlines(), 1):
            try:
                entries.append(changelog.Entry.model_validate_json(line))
            except ValidationError as err:
                out.append(Violation(at(changelog.CHANGELOG), n, "changelog",
                                     f"not a changelog entry ({err.errors()[0]['msg']})"))
    rows: list[Row] = []
    seen: dict[tuple[str, ...], str] = {}
    for rel in sorted(r for r in files if is_row_file(r)):
        family, probe, _ = rel.split("/")
        text = files[rel].decode("utf-8", "replace")
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        elif lines:
            out.append(Violation(at(rel), len(lines), "row", "the last line is not finished (cut short)"))
        for n, line in enumerate(lines, 1):
            row, rule, why = _row_of(line) if line.strip() else (None, "row", "an empty line")
            if row is None:
                out.append(Violation(at(rel), n, rule, why))
                continue
            row, why = _typed(row, typing)
            if why:
                out.append(Violation(at(rel), n, "payload", why))
            bad = unsafe_field(row)
            if bad is not None:
                out.append(Violation(at(rel), n, "name", f"{bad} is not a plain name"))
                continue
            expected = row_file(row, releases)
            if (row.family, row.probe) != (family, probe) or expected != rel:
                out.append(Violation(at(rel), n, "placement", f"a row of {row.family} {row.probe} sdk "
                                     f"{row.sdk_version} × {row.cli_version} belongs in {at(expected)}"))
            slot = row.slot()
            if slot in seen:
                out.append(Violation(at(rel), n, "duplicate", f"a second row for {row.family} {row.probe} "
                                     f"{row.mutation} sdk {row.sdk_version} × {row.cli_version} (the first is in "
                                     f"{seen[slot]})"))
                continue
            seen[slot] = f"{at(rel)}:{n}"
            rows.append(row)
    # What a line holds says more than that its file's checksum no longer matches: first.
    order = ["index", "schema", "row", "outcome", "payload", "name", "placement", "duplicate", "changelog", "releases",
             "present", "listed", "row-count", "checksum"]
    return Snapshot(rows, releases, entries, manifest), sorted(out, key=lambda v: (order.index(v.rule), v))
