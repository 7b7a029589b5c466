"""Bringing a dataset written for an older dataset schema to the current one, as a whole (one
switch), after checking everything but what the old schema did not have: nothing is
re-measured, and a damaged dataset is refused rather than blessed.

Each step takes the files of one schema to the next: 1 -> 2 gives every file its checksum in
the manifest; 2 -> 3 writes every row in format 2 (its core, and its payload as its family
declares it for its probe, with whether it stands for a pair or an SDK release)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from pydantic import ValidationError

from matrix.errors import UserError
from matrix.execute.lock import holding
from matrix.model import Row
from matrix.store.check import DatasetError, Typing, check
from matrix.store.dataset import Dataset
from matrix.store.manifest import DATA_SCHEMA, INDEX, is_row_file, manifest_of, rows_in
from matrix.store.switch import recover, switch

__all__ = ["migrate"]

Files = dict[str, bytes]


def _checksums(root: Path, files: Files, old: dict[str, object], typing: Typing) -> Files:
    """1 -> 2: the row files must be the ones the schema 1 manifest counted."""
    listed = old.get("files")
    counts = {rel: rows_in(rel, data) for rel, data in files.items() if is_row_file(rel)}
    if counts != listed:
        wrong = sorted(set(counts.items()) ^ set(listed.items() if isinstance(listed, dict) else []))[:3]
        raise UserError(f"{root / INDEX}: the row files do not match their schema 1 manifest ({wrong}); restore "
                        "the dataset from git before migrating it")
    return files


def _core_and_payload(root: Path, files: Files, old: dict[str, object], typing: Typing) -> Files:
    """2 -> 3: every row rewritten in format 2, in the same order and the same file."""
    out = dict(files)
    for rel, data in files.items():
        if not is_row_file(rel):
            continue
        lines = []
        for n, line in enumerate(data.decode("utf-8").splitlines(), 1):
            try:
                row = typing(Row.model_validate_json(line))
            except (ValidationError, ValueError, UserError) as err:
                raise UserError(f"{root / rel}:{n}: not a row this compat-matrix can migrate "
                                f"({str(err).splitlines()[0][:200]}); restore the dataset from git") from None
            lines.append(row.to_json() + "\n")
        out[rel] = "".join(lines).encode()
    return out


# schema -> the step to the next one
_STEPS: dict[int, Callable[[Path, Files, dict[str, object], Typing], Files]] = {
    1: _checksums, 2: _core_and_payload}


def migrate(root: Path, typing: Typing) -> str:
    """What was done: the dataset taken from its schema to ``DATA_SCHEMA``, step by step, then
    checked as a whole (``typing``: how each row's family types it) and switched in at once."""
    dataset = Dataset(root, typing)
    with holding(root):
        recover(root)
        files, index = dataset.raw()
        try:
            old = json.loads(index) if index is not None else None
        except ValueError:
            old = None
        schema = old.get("schema") if isinstance(old, dict) else None
        if schema == DATA_SCHEMA:
            return f"{root}: already dataset schema {DATA_SCHEMA}; nothing to do"
        if not isinstance(old, dict) or schema not in _STEPS or not isinstance(old.get("files"), dict):
            raise UserError(f"{root / INDEX}: not a dataset manifest this compat-matrix migrates (schema {schema!r}; "
                            f"it migrates {', '.join(map(str, _STEPS))}); restore it from git, or fold into a new "
                            "dataset")
        before = dict(files)
        for step in range(schema, DATA_SCHEMA):
            files = _STEPS[step](root, files, old, typing)
        manifest = manifest_of(files)
        _, violations = check(str(root), files, manifest.to_text().encode(), typing)
        if violations:
            raise DatasetError(str(root), violations)
        changed = {rel: data for rel, data in files.items() if before.get(rel) != data}
        switch(root, {**changed, INDEX: manifest.to_text().encode()})
    rewritten = sum(1 for rel in changed if is_row_file(rel))
    return (f"{root}: dataset schema {schema} -> {DATA_SCHEMA}: {rewritten} row files rewritten, {len(manifest.files)} "
            f"files with their checksums in {INDEX} ({manifest.rows} rows, nothing measured again); review with "
            f"`git diff --stat {root}`")
