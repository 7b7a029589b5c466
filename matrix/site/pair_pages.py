"""The site's own matrix and release pages for a family with a pair probe that does not write
its own (``Family.pair_pages``): the grid of its cells as the family reads them, every cell as
a table, and a page per release with what it works with, in its ecosystem's syntax."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from matrix.answers.analysis import caveat_ranges, pin_lines, working_ranges
from matrix.families.base import Family, SiteView
from matrix.markup import cli_slug, embed_badge, esc_raw, num, sdk_slug
from matrix.present.grid import Grid, first_line, grid_of
from matrix.present.ranges import Range
from matrix.site.render import render
from matrix.versions import sort_by_version, sorted_versions

__all__ = ["PairCell", "PairMatrix", "PairRelease", "pair_pages"]


@dataclass(frozen=True)
class PairCell:
    """One cell, on a release's page or in the table of every cell."""

    sdk: str
    cli: str
    outcome: str
    label: str  # what the family's reading of it says (a number, a letter)
    error: str
    seconds: str
    flaky: bool
    repeats: list[str]
    stale: str  # what its stale mark says ("": not stale)


@dataclass(frozen=True)
class PairMatrix:
    family: str
    probe: str
    description: str
    other: str  # the other side's package
    grid: Grid
    marks: list[str]  # what the family's marks in the grid mean
    cells: list[PairCell]


@dataclass(frozen=True)
class Pin:
    lines: list[str]
    measured: list[str]


@dataclass(frozen=True)
class PairRelease:
    family: str
    package: str
    version: str
    side: str  # "sdk" or "cli"
    other: str  # the other side's package
    released: str
    works: Pin
    caveat: str
    with_caveat: Pin | None
    badge: list[str]
    cells: list[PairCell]


def _cells(fam: Family, rows: pd.DataFrame) -> list[PairCell]:
    ordered = sort_by_version(sort_by_version(rows, "cli_version"), "sdk_version")
    return [PairCell(sdk=str(r["sdk_version"]), cli=str(r["cli_version"]), outcome=str(r["outcome"]),
                     label=fam.cell_label(r), error=esc_raw(first_line(r, 4000)),
                     seconds=num(round(float(r["seconds"]), 1)),
                     flaky=r["flaky"] is True, repeats=[str(o) for o in (r["repeats"] or [])],
                     stale=fam.rules.note(r))
            for r in ordered.to_dict("records")]


def _pin(lines: list[str], rs: list[Range]) -> Pin:
    return Pin(lines, [v for r in rs for v in r.versions])


def pair_pages(view: SiteView, fam: Family) -> dict[str, str]:
    """The matrix, every cell, and a page per release of ``fam`` (relative path -> text)."""
    family, rows = fam.name, view.rows
    sub = rows.pairs(family)
    cells = _cells(fam, sub)
    grid = grid_of(rows, view.releases, family, fam.cell_label, fam.cell_note, columns=fam.cell_columns)
    matrix = PairMatrix(family, str(fam.pair_probe), fam.description, fam.cli_package, grid, fam.marks(sub), cells)
    pages = {f"matrix/{family}.md": render("pair-matrix.md", page=matrix),
             f"matrix/{family}-cells.md": render("pair-cells.md", page=matrix)}
    for side, col, package, other in (("sdk", "sdk_version", fam.sdk_package, fam.cli_package),
                                      ("cli", "cli_version", fam.cli_package, fam.sdk_package)):
        for version in sorted_versions(sub[col]):
            sdk, cli = (version, None) if side == "sdk" else (None, version)
            works, caveat = working_ranges(rows, family, sdk, cli), caveat_ranges(rows, family, sdk, cli)
            slug = sdk_slug(version) if side == "sdk" else cli_slug(version)
            page = PairRelease(
                family=family, package=package, version=version, side=side, other=other,
                released=str(view.releases.get(family, {}).get(side, {}).get(version) or "unknown"),
                works=_pin(pin_lines(rows, family, sdk, cli), works), caveat=fam.caveat,
                with_caveat=_pin(pin_lines(rows, family, sdk, cli, caveat=True), caveat) if caveat else None,
                badge=embed_badge(family, side, version, f"{package} {version}", f"versions/{family}/{slug}/"),
                cells=[c for c in cells if (c.sdk if side == "sdk" else c.cli) == version])
            pages[f"versions/{family}/{slug}.md"] = render("pair-release.md", page=page)
    return pages
