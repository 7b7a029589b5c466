"""Deterministic partitions of a run, and merging the shards' results.

A shard owns whole SDK versions: every cell of an SDK version (its pair cells, and the checks
a later phase plans from them) lands in the same shard, so each shard plans
from complete data. SDK versions are dealt round-robin in version order, per family, so the
same discovery always gives the same partition and the shards stay balanced."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from matrix.errors import UserError
from matrix.store.results import Store, load_releases, save_releases
from matrix.versions import sort_key

__all__ = ["Shard", "merge", "parse_shard"]

_SPEC = re.compile(r"^(\d+)/(\d+)$")


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based
    count: int

    def owns(self, family: str, sdk_version: str, sdk_versions: Iterable[str]) -> bool:
        ordered = sorted(set(sdk_versions), key=sort_key)
        offset = sum(map(ord, family))  # families do not all start on shard 1
        return (ordered.index(sdk_version) + offset) % self.count == self.index - 1


def parse_shard(text: str) -> Shard:
    m = _SPEC.match(text.strip())
    if not m or not (1 <= int(m.group(1)) <= int(m.group(2))):
        raise UserError(f"--shard {text!r}: expected i/n with 1 <= i <= n, e.g. --shard 2/4")
    return Shard(int(m.group(1)), int(m.group(2)))


def merge(out: Path, shards: list[Path]) -> tuple[int, list[str]]:
    """Append every valid row of ``shards`` to ``out`` (the newest row of a cell wins when
    read), with the release dates and the evidence files (transcripts, stand-in logs)."""
    target = Store(out)
    target.check_writable()
    count, warnings = 0, []
    for shard in shards:
        if not (shard / "rows.jsonl").exists():
            raise UserError(f"{shard}: no rows.jsonl there; pass the results directories of the shards")
        rows, bad = Store(shard).read()
        warnings += bad
        for row in rows:
            target.append(row)
            count += 1
        save_releases(out, load_releases(shard))
        for evidence in ("transcripts", "standin"):
            if (shard / evidence).is_dir():
                shutil.copytree(shard / evidence, out / evidence, dirs_exist_ok=True)
    return count, warnings
