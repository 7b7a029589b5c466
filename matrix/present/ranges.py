"""Runs of consecutive measured versions that share a property, and what to write down, in an
ecosystem's own syntax, to stay on them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from matrix.ecosystems.base import Ecosystem, Run
from matrix.present.rows import RANGE_COLUMNS, Rows
from matrix.versions import sorted_versions

__all__ = ["Range", "pin_lines", "ranges", "ranges_where"]


@dataclass(frozen=True)
class Range:
    """A run of consecutive measured versions (in the measured list) sharing a property."""

    first: str
    last: str
    versions: tuple[str, ...]


def ranges(axis: list[str], good: set[str]) -> list[Range]:
    """Split ``axis`` (sorted, measured versions) into runs of consecutive good versions."""
    out: list[Range] = []
    run: list[str] = []
    for v in axis:
        if v in good:
            run.append(v)
        elif run:
            out.append(Range(run[0], run[-1], tuple(run)))
            run = []
    if run:
        out.append(Range(run[0], run[-1], tuple(run)))
    return out


def _sides(sdk: str | None) -> tuple[str, str]:
    return ("sdk_version", "cli_version") if sdk is not None else ("cli_version", "sdk_version")


def ranges_where(rows: Rows, family: str, sdk: str | None, cli: str | None,
                 good: Callable[[pd.DataFrame], pd.Series]) -> list[Range]:
    """For an SDK version, the runs of the other side's versions whose cells are ``good``; for a
    version of the other side, the same of SDK versions. ``good`` reads each cell by itself (no
    cell's verdict depends on another's): it is asked once of the family's cells, not of each
    release's. Made once per build for each release and reading (pages, pins, API and answers
    all ask): the list is shared, do not modify it."""
    this, _ = _sides(sdk)
    version = str(sdk if sdk is not None else cli)

    def make() -> list[Range]:
        return ranges(_axis(rows, family, sdk, cli), _good_of(rows, family, good).get((this, version), set()))
    return rows.once(("ranges_where", family, this, version, good), make)  # type: ignore[no-any-return]


def _good_of(rows: Rows, family: str, good: Callable[[pd.DataFrame], pd.Series]) -> dict[tuple[str, str], set[str]]:
    """(side, release) -> the other side's releases whose cells with it are ``good``."""
    def make() -> dict[tuple[str, str], set[str]]:
        cells = rows.pairs(family)[[*RANGE_COLUMNS, *rows.refined_columns]]
        ok = cells[good(cells)]
        out: dict[tuple[str, str], set[str]] = {}
        for s, c in zip(ok["sdk_version"], ok["cli_version"], strict=True):
            out.setdefault(("sdk_version", s), set()).add(c)
            out.setdefault(("cli_version", c), set()).add(s)
        return out
    return rows.once(("good", family, good), make)  # type: ignore[no-any-return]


def _axis(rows: Rows, family: str, sdk: str | None, cli: str | None) -> list[str]:
    """The other side's measured versions of one release, sorted (shared: do not modify)."""
    this, other = _sides(sdk)
    version = str(sdk if sdk is not None else cli)
    return rows.once(("axis", family, this, version),  # type: ignore[no-any-return]
                     lambda: sorted_versions(rows.release(family, this, version)[other]))


def pin_lines(rows: Rows, family: str, sdk: str | None, cli: str | None, rs: list[Range], ecosystem: Ecosystem,
              package: str) -> list[str]:
    """What to write down to stay on the runs ``rs`` of ``package`` (the other side of the
    release asked about), with the measured versions inside them that do not work left out."""
    if not rs:
        return []
    axis = _axis(rows, family, sdk, cli)
    good = {v for r in rs for v in r.versions}
    inside = axis[axis.index(rs[0].first):axis.index(rs[-1].last) + 1]
    return ecosystem.pin(package, [Run(r.first, r.last) for r in rs], [v for v in inside if v not in good])
