"""The site's own page of a family's checks (its rows that stand for one SDK release each,
``Row.per_sdk``), for a family that writes no pages of its checks itself (``Family.check_pages``):
per probe, SDK releases down, checks across, each cell its outcome and what it said."""

from __future__ import annotations

from dataclasses import dataclass

from matrix.families.base import Family, SiteView
from matrix.markup import esc_raw
from matrix.present.grid import first_line
from matrix.site.render import render
from matrix.versions import sorted_versions

__all__ = ["CheckCell", "CheckGrid", "CheckRow", "check_pages"]


@dataclass(frozen=True)
class CheckCell:
    outcome: str
    said: str  # the first line of its error, "" if none
    other: str  # the release of the other side it was measured against
    flaky: bool
    repeats: list[str]
    stale: str


@dataclass(frozen=True)
class CheckRow:
    sdk: str
    cells: list[CheckCell | None]  # by the grid's checks; None: not measured


@dataclass(frozen=True)
class CheckGrid:
    probe: str
    checks: list[str]
    rows: list[CheckRow]


def _grids(view: SiteView, fam: Family) -> list[CheckGrid]:
    frame = view.frame
    mine = frame[(frame["family"] == fam.name) & frame["per_sdk"].astype(bool)]
    grids = []
    for probe in [p for p in fam.probes if p in set(mine["probe"])]:
        part = mine[mine["probe"] == probe]
        checks = sorted(set(part["mutation"]))
        by = {(str(r["sdk_version"]), str(r["mutation"])): r for r in part.to_dict("records")}
        rows = [CheckRow(sdk, [CheckCell(str(r["outcome"]), esc_raw(first_line(r, 300)), str(r["cli_version"]),
                                         r["flaky"] is True, [str(o) for o in (r["repeats"] or [])], fam.rules.note(r))
                               if (r := by.get((sdk, c))) is not None else None for c in checks])
                for sdk in sorted_versions(part["sdk_version"])]
        grids.append(CheckGrid(probe, checks, rows))
    return grids


def check_pages(view: SiteView, fam: Family) -> dict[str, str]:
    """``checks/<family>.md``: every check of every SDK release, one grid per probe."""
    grids = _grids(view, fam)
    if not grids:
        return {}
    return {f"checks/{fam.name}.md": render("check-grid.md", family=fam, grids=grids)}
