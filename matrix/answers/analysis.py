"""Derived answers from the measured rows: working ranges, pins, recommendations, each read
from a family's pair cells (``Family.pair_probe``) the way the family says a cell works
(``Family.works``, and ``Family.works_but`` for the pairs that work with its caveat).

Everything here reads measured rows only. A version pair that was not measured, or was
measured only as an infra/harness error, is unknown and never counted as working."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from matrix.families.payload import payload_columns
from matrix.families.registry import FAMILIES
from matrix.model import Outcome
from matrix.present import pairs as _pairs
from matrix.present.ranges import Range, ranges
from matrix.present.rows import Rows, as_rows
from matrix.versions import sorted_versions

__all__ = ["CONNECTS", "WORKS", "Range", "caveat_ranges", "does_not_start", "pairs", "pin_lines", "ranges",
           "rows_of", "upgrade_advice", "working_ranges"]

WORKS = {Outcome.COMPATIBLE.value}
CONNECTS = {Outcome.COMPATIBLE.value, Outcome.DEGRADED.value}


def rows_of(frame: pd.DataFrame | Rows) -> Rows:
    """The rows, with every registered family's pair probe and payload column, to ask questions of."""
    if not isinstance(frame, Rows):
        missing = [c for c in payload_columns(FAMILIES.values()) if c not in frame.columns]
        frame = frame.assign(**dict.fromkeys(missing, None)) if missing else frame
    return as_rows(frame, {name: f.pair_probe for name, f in FAMILIES.items() if f.pair_probe},
                   {name: f.refined_by for name, f in FAMILIES.items() if f.refined_by})


def pairs(frame: pd.DataFrame | Rows, family: str | None = None) -> pd.DataFrame:
    """The pair cells (of ``family``); the same object for the same ``Rows``: do not modify it."""
    return rows_of(frame).pairs(family)


def does_not_start(frame: pd.DataFrame | Rows, family: str, cli: str) -> str | None:
    """Why a release of the other side starts for no SDK release on this machine, or None."""
    return _pairs.does_not_start(rows_of(frame), family, cli)


def working_ranges(frame: pd.DataFrame | Rows, family: str, sdk: str | None = None, cli: str | None = None,
                   outcomes: set[str] | None = None) -> list[Range]:
    """For an SDK version: the ranges of the other side that work with it (``outcomes``: those
    with one of these outcomes instead); or the reverse."""
    return _pairs.working_ranges(rows_of(frame), FAMILIES[family], sdk, cli, outcomes)


def caveat_ranges(frame: pd.DataFrame | Rows, family: str, sdk: str | None = None,
                  cli: str | None = None) -> list[Range]:
    """The ranges that work with the family's caveat (``Family.works_but``)."""
    return _pairs.caveat_ranges(rows_of(frame), FAMILIES[family], sdk, cli)


def pin_lines(frame: pd.DataFrame | Rows, family: str, sdk: str | None = None, cli: str | None = None,
              caveat: bool = False) -> list[str]:
    """For an SDK version, what to write down to stay on releases of the other side that work
    with it; for a release of the other side, the same of SDKs; each in the other side's
    ecosystem's own syntax (pip specifiers, npm ranges, a Go ``require`` with ``exclude``
    lines). ``caveat``: the versions that work only with the family's caveat, instead."""
    return _pairs.pins(rows_of(frame), FAMILIES[family], sdk, cli, caveat)


@dataclass(frozen=True)
class UpgradeAdvice:
    newest_sdk: str
    newest_cli: str
    sdks_working_with_newest_cli: tuple[str, ...]
    clis_working_with_newest_sdk: tuple[str, ...]
    sdk_count: int
    cli_count: int

    @property
    def first(self) -> str:
        """Which side to upgrade first: the one whose newest release works with more of the
        other side's measured versions keeps more deployments working during the move."""
        sdk_share = len(self.clis_working_with_newest_sdk) / max(self.cli_count, 1)
        cli_share = len(self.sdks_working_with_newest_cli) / max(self.sdk_count, 1)
        if sdk_share > cli_share:
            return "sdk"
        if cli_share > sdk_share:
            return "cli"
        return "either"


def upgrade_advice(frame: pd.DataFrame | Rows, family: str) -> UpgradeAdvice | None:
    sub = pairs(frame, family)
    if sub.empty:
        return None
    sdks = sorted_versions(sub["sdk_version"])
    clis = sorted_versions(sub["cli_version"])
    ok = sub[FAMILIES[family].works(sub)]
    return UpgradeAdvice(
        newest_sdk=sdks[-1],
        newest_cli=clis[-1],
        sdks_working_with_newest_cli=tuple(sorted_versions(ok[ok["cli_version"] == clis[-1]]["sdk_version"])),
        clis_working_with_newest_sdk=tuple(sorted_versions(ok[ok["sdk_version"] == sdks[-1]]["cli_version"])),
        sdk_count=len(sdks),
        cli_count=len(clis),
    )
