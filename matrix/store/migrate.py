"""Bringing a dataset written for an older dataset schema to the current one, as a whole (one
switch), after checking everything but what the old schema did not have: nothing is
re-measured, and a damaged dataset is refused rather than blessed."""

from __future__ import annotations

import json
from pathlib import Path

from matrix.errors import UserError
from matrix.execute.lock import holding
from matrix.store.check import DatasetError, check
from matrix.store.dataset import Dataset
from matrix.store.manifest import DATA_SCHEMA, INDEX, is_row_file, manifest_of, rows_in
from matrix.store.switch import recover, switch

__all__ = ["migrate"]


def migrate(root: Path) -> str:
    """What was done: schema 1 (a manifest of row counts) to 2 (every file with its checksum)."""
    dataset = Dataset(root)
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
        if schema != 1 or not isinstance(old, dict) or not isinstance(old.get("files"), dict):
            raise UserError(f"{root / INDEX}: not a dataset schema 1 manifest (schema {schema!r}); restore it from "
                            "git, or fold into a new dataset")
        counts = {rel: rows_in(rel, data) for rel, data in files.items() if is_row_file(rel)}
        if counts != old["files"]:
            wrong = sorted(set(counts.items()) ^ set(old["files"].items()))[:3]
            raise UserError(f"{root / INDEX}: the row files do not match their schema 1 manifest ({wrong}); restore "
                            "the dataset from git before migrating it")
        manifest = manifest_of(files)
        _, violations = check(str(root), files, manifest.to_text().encode())
        if violations:
            raise DatasetError(str(root), violations)
        switch(root, {INDEX: manifest.to_text().encode()})
    return (f"{root}: dataset schema 1 -> {DATA_SCHEMA}: {len(manifest.files)} files with their checksums in {INDEX} "
            f"({manifest.rows} rows, every rule kept); review with `git diff {root / INDEX}`")
