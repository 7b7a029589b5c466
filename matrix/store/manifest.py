"""The dataset's manifest (``data/index.json``): its schema version, its families, and every file
it holds with the file's row count and checksum. Written with the files it describes, in the
same switch (``matrix/store/switch.py``); checked whenever the dataset is read."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["DATA_SCHEMA", "INDEX", "FileEntry", "Manifest", "digest", "manifest_of", "rows_in"]

# 3: rows of format 2 (a core and its payload); 2: every file with its checksum (1 listed the row
# files and their row counts only).
DATA_SCHEMA = 3
INDEX = "index.json"


class FileEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    rows: int = Field(ge=0)  # lines of a row file or the changelog; 0 for any other file
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    schema_: int = Field(alias="schema")
    families: list[str]
    rows: int = Field(ge=0)  # every row of every row file
    files: dict[str, FileEntry]  # path relative to the dataset's root -> its entry

    def to_text(self) -> str:
        return self.model_dump_json(by_alias=True, indent=1) + "\n"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def rows_in(rel: str, data: bytes) -> int:
    """The rows a file holds: its lines, for a row file or the changelog; none for another."""
    return data.count(b"\n") if rel.endswith(".jsonl") else 0


def is_row_file(rel: str) -> bool:
    """``<family>/<probe>/<side>-<version>.jsonl``."""
    parts = rel.split("/")
    return len(parts) == 3 and parts[2].endswith(".jsonl") and parts[0] != "evidence"


def manifest_of(files: Mapping[str, bytes]) -> Manifest:
    """The manifest of a dataset holding ``files`` (path relative to the root -> content)."""
    entries = {rel: FileEntry(rows=rows_in(rel, data), sha256=digest(data)) for rel, data in sorted(files.items())}
    row_files = [rel for rel in entries if is_row_file(rel)]
    return Manifest(schema=DATA_SCHEMA, families=sorted({rel.split("/", 1)[0] for rel in row_files}),
                    rows=sum(entries[rel].rows for rel in row_files), files=entries)
