"""What a family's pair cells answer, from the family's own reading of a cell (``works``,
``works_but``) and its ecosystems: the ranges of the other side a release works with, and what
to write down to stay on them. The answers layer asks these through the family registry; a
family's own pages ask them of itself."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import pandas as pd

from matrix.ecosystems import get
from matrix.present.ranges import Range, pin_lines, ranges_where
from matrix.present.rows import Rows
from matrix.probes.verdict import DOES_NOT_START

__all__ = ["PairFamily", "caveat_ranges", "does_not_start", "pins", "working_ranges"]


class PairFamily(Protocol):
    """What these answers read of a family (``matrix.families.base.Family`` has it)."""

    @property
    def name(self) -> str: ...

    @property
    def sdk_ecosystem(self) -> str: ...

    @property
    def sdk_package(self) -> str: ...

    @property
    def cli_ecosystem(self) -> str: ...

    @property
    def cli_package(self) -> str: ...

    def works(self, cells: pd.DataFrame) -> pd.Series: ...

    def works_but(self, cells: pd.DataFrame) -> pd.Series: ...


@dataclass(frozen=True)
class OutcomeIn:
    """A reading of cells by outcome alone; equal readings are one key of ``Rows.once``."""

    outcomes: frozenset[str]

    def __call__(self, part: pd.DataFrame) -> pd.Series:
        return part["outcome"].isin(self.outcomes)


def working_ranges(rows: Rows, fam: PairFamily, sdk: str | None = None, cli: str | None = None,
                   outcomes: set[str] | None = None) -> list[Range]:
    """For an SDK version: the ranges of the other side that work with it (``outcomes``: those
    with one of these outcomes instead); or the reverse."""
    good = fam.works if outcomes is None else OutcomeIn(frozenset(outcomes))
    return ranges_where(rows, fam.name, sdk, cli, good)


def caveat_ranges(rows: Rows, fam: PairFamily, sdk: str | None = None, cli: str | None = None) -> list[Range]:
    """The ranges that work only with the family's caveat (``works_but``)."""
    return ranges_where(rows, fam.name, sdk, cli, fam.works_but)


def pins(rows: Rows, fam: PairFamily, sdk: str | None = None, cli: str | None = None,
         caveat: bool = False) -> list[str]:
    """For an SDK version, what to write down to stay on releases of the other side that work
    with it; for a release of the other side, the same of SDKs; each in the other side's
    ecosystem's own syntax. ``caveat``: the releases that work only with the family's caveat."""
    eco, package = (get(fam.cli_ecosystem), fam.cli_package) if sdk is not None else \
        (get(fam.sdk_ecosystem), fam.sdk_package)
    rs = caveat_ranges(rows, fam, sdk, cli) if caveat else working_ranges(rows, fam, sdk, cli)
    return pin_lines(rows, fam.name, sdk, cli, rs, eco, package)


def does_not_start(rows: Rows, family: str, cli: str) -> str | None:
    """Why a release of the other side starts for no SDK release on this machine (every one of
    its cells says so), or None."""
    part = rows.release(family, "cli_version", cli)
    if part.empty or not (part["error_type"] == DOES_NOT_START).all():
        return None
    full = rows.pairs(family)
    hit = full[(full["cli_version"] == cli) & (full["error_type"] == DOES_NOT_START)]["error_message"]
    return str(hit.iloc[0]) if not hit.empty else None
