"""Faults a damaged checkout of the dataset shows (a bad merge, a hand edit, a killed job), each
injected into a copy of a dataset, with the one line every reading command must answer it with.
Shared by the unit tests (a small dataset of real rows) and the integration tests (a copy of the
whole committed dataset)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from matrix.store.manifest import DATA_SCHEMA

__all__ = ["FAULTS", "Fault", "fingerprint", "row_file_with"]


def row_file_with(data: Path, rows: int = 2) -> Path:
    """A handshake row file of the dataset with at least ``rows`` rows (the first, by name)."""
    return next(p for p in sorted(data.glob("*/handshake/*.jsonl")) if len(p.read_text().splitlines()) >= rows)


def fingerprint(data: Path) -> dict[str, str]:
    """Every file of the dataset and its checksum (the lock file aside: it is nobody's data)."""
    return {p.relative_to(data).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(data.rglob("*")) if p.is_file() and not p.name.endswith(".lock")}


@dataclass(frozen=True)
class Fault:
    name: str
    inject: Callable[[Path], None]
    # What the one line says: a pattern (the file, the line and the rule), found in stderr.
    says: Callable[[Path], str]


def _truncate(data: Path) -> None:
    path = row_file_with(data)
    text = path.read_text()
    path.write_text(text[:-len(text.splitlines()[-1]) // 2 - 1])  # the last line cut in half, no newline


def _truncated_line(data: Path) -> str:
    path = row_file_with(data)
    return rf"{re.escape(path.name)}:{len(path.read_text().splitlines())}: .*\[rule: row\]"


def _misspell(data: Path) -> None:
    path = row_file_with(data)
    lines = path.read_text().splitlines()
    row = json.loads(lines[1])
    row["outcome"] = {"compatible": "compatibel"}.get(row["outcome"], row["outcome"] + "x")
    lines[1] = json.dumps(row, sort_keys=True)
    path.write_text("\n".join(lines) + "\n")


def _foreign_payload(data: Path) -> None:
    """A payload field of the wrong type (written by another program, or a bad merge)."""
    path = row_file_with(data)
    lines = path.read_text().splitlines()
    row = json.loads(lines[1])
    row["payload"]["protocol"] = "three"
    lines[1] = json.dumps(row, sort_keys=True)
    path.write_text("\n".join(lines) + "\n")


def _duplicate(data: Path) -> None:
    path = row_file_with(data)
    lines = path.read_text().splitlines()
    path.write_text("\n".join([*lines, lines[0]]) + "\n")


def _moved(data: Path) -> None:
    """A row moved into another release's file (a bad merge resolution)."""
    src = row_file_with(data)
    dst = next(p for p in sorted(data.glob("*/handshake/*.jsonl")) if p != src)
    lines = src.read_text().splitlines()
    src.write_text("\n".join(lines[1:]) + "\n")
    dst.write_text(dst.read_text() + lines[0] + "\n")


def _stray(data: Path) -> None:
    path = row_file_with(data)
    (path.parent / f".{path.name}.a1b2c3.tmp").write_text(path.read_text()[:100])


def _listed_kind(data: Path) -> None:
    path = data / "copilot-python" / "releases.json"
    releases = json.loads(path.read_text())
    path.write_text(json.dumps({**releases, "sdk-listed": {"1.0.27": "release", "9.9.9": "beta"}}))


def _index_gone(data: Path) -> None:
    (data / "index.json").unlink()


def _index_garbage(data: Path) -> None:
    (data / "index.json").write_text("<<<<<<< HEAD\n{not json\n")


def _index_schema(data: Path) -> None:
    index = json.loads((data / "index.json").read_text())
    (data / "index.json").write_text(json.dumps({**index, "schema": 99}))


def _file_gone(data: Path) -> None:
    row_file_with(data).unlink()


FAULTS: list[Fault] = [
    Fault("truncated last line", _truncate, _truncated_line),
    Fault("misspelt outcome", _misspell,
          lambda d: rf"{re.escape(row_file_with(d).name)}:2: outcome '[^']+' is not one of the vocabulary"
                    r".*\[rule: outcome\]"),
    Fault("payload not its family's", _foreign_payload,
          lambda d: rf"{re.escape(row_file_with(d).name)}:2: payload\.protocol: .*\[rule: payload\]"),
    Fault("duplicated row", _duplicate,
          lambda d: rf"{re.escape(row_file_with(d).name)}:\d+: a second row for .*\[rule: duplicate\]"),
    Fault("row in another release's file", _moved, lambda d: r":\d+: a row of .* belongs in .*\[rule: placement\]"),
    Fault("stray temporary file", _stray, lambda d: r"\.a1b2c3\.tmp: not in index\.json .*\[rule: listed\]"),
    Fault("a listed release of no kind", _listed_kind,
          lambda d: r"releases\.json: sdk-listed: 9\.9\.9 listed as none of release, pre-release, yanked "
                    r"\[rule: releases\]"),
    Fault("index.json deleted", _index_gone, lambda d: r"index\.json: missing: .*\[rule: index\]"),
    Fault("index.json garbage", _index_garbage, lambda d: r"index\.json: not the dataset's manifest .*\[rule: index\]"),
    Fault("index.json unknown schema", _index_schema,
          lambda d: rf"index\.json: dataset schema 99, not {DATA_SCHEMA}.*\[rule: schema\]"),
    Fault("a listed file deleted", _file_gone,
          lambda d: r"\.jsonl: listed in index\.json but missing \[rule: present\]"),
]
