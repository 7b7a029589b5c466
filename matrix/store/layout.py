"""Where a cell lives in the dataset: a cell of a pair of releases in the file of the newer of
the two (by release date), a check (of one SDK release, or a check's control) in its SDK
release's file, so a new release on either side is one new file."""

from __future__ import annotations

from matrix.model import Row
from matrix.store.results import Releases

__all__ = ["row_file"]


def _date(releases: Releases, family: str, side: str, version: str) -> str:
    return str(releases.get(family, {}).get(side, {}).get(version) or "")


def row_file(row: Row, releases: Releases) -> str:
    """The file a cell lives in, relative to ``data/``: its newer release's, for a cell of a
    pair (no check, not ``per_sdk``); its SDK release's, for a check, whose other side the
    harness chose or which is a check's control."""
    side, version = "sdk", row.sdk_version
    if not row.per_sdk and not row.mutation:
        sdk = _date(releases, row.family, "sdk", row.sdk_version)
        cli = _date(releases, row.family, "cli", row.cli_version)
        if not sdk or (cli and cli >= sdk):
            side, version = "cli", row.cli_version
    return f"{row.family}/{row.probe}/{side}-{version}.jsonl"
