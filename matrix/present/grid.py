"""A family's pair matrix as HTML: one cell per measured pair, coloured by outcome, saying what
the family's reading of the cell says (``Family.cell_label``: a letter, a number),
with a tooltip (the outcome and ``Family.cell_note``) and a link to the cell's evidence on its
SDK release's page. Plain data here; ``matrix/templates/grid.html`` draws it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from matrix.present.rows import Rows
from matrix.store.results import Releases
from matrix.versions import sorted_versions

__all__ = ["Axis", "Cell", "Grid", "Label", "first_line", "grid_of"]

_TIP = 140


@dataclass(frozen=True)
class Axis:
    version: str
    released: str  # ISO date, "" when unknown: the "by release date" order puts those last
    href: str  # the release's page, relative to the page the grid is on


@dataclass(frozen=True)
class Cell:
    outcome: str
    text: str
    tip: str
    href: str


@dataclass(frozen=True)
class Grid:
    family: str
    sdks: list[Axis]
    clis: list[Axis]
    rows: list[list[Cell | None]]  # rows[i][j]: SDK i against CLI j; None: never measured

    @property
    def cells(self) -> int:
        return sum(1 for row in self.rows for c in row if c is not None)


def first_line(rec: Mapping[Any, Any], width: int = _TIP) -> str:
    """The first line of a cell's error message ("" when it has none)."""
    error = rec.get("error_message")
    return error.strip().splitlines()[0][:width] if isinstance(error, str) and error.strip() else ""


Label = Callable[[Mapping[Any, Any]], str]


def grid_of(rows: Rows, releases: Releases, family: str, label: Label, note: Label = first_line,
            to_versions: str = "../../versions/", columns: tuple[str, ...] = (), probe: str | None = None,
            anchor: str = "cli-") -> Grid:
    """``label``, ``note``: what a cell says, and its tooltip after the outcome; ``columns``:
    the cell fields they read besides the outcome and the error. ``to_versions``: the versions
    folder relative to the URL of the page the grid is on (raw HTML: MkDocs does not rewrite
    these links; a page ``matrix/F.md`` is served at ``matrix/F/``). ``probe``: a grid of that
    probe's cells of each pair instead of the pair probe's; ``anchor``: where on its SDK
    release's page a cell's evidence is (the anchor's start, the CLI release after it)."""
    sub = rows.pairs(family) if probe is None else rows.frame[(rows.frame["family"] == family)
                                                               & (rows.frame["probe"] == probe)]
    sdks, clis = sorted_versions(sub["sdk_version"]), sorted_versions(sub["cli_version"])
    dates = releases.get(family, {})

    def axis(side: str, v: str) -> Axis:
        return Axis(v, str(dates.get(side, {}).get(v) or "")[:10], f"{to_versions}{family}/{side}-{v}/")

    read = list(dict.fromkeys(["sdk_version", "cli_version", "outcome", "error_message", *columns]))
    at = {(str(r["sdk_version"]), str(r["cli_version"])): r for r in sub[read].to_dict("records")}
    def cell(s: str, c: str) -> Cell | None:
        rec = at.get((s, c))
        if rec is None:
            return None
        said = note(rec)
        tip = f"SDK {s} × CLI {c}: {rec['outcome']}" + (f". {said}" if said else "")
        return Cell(str(rec["outcome"]), label(rec), tip, f"{to_versions}{family}/sdk-{s}/#{anchor}{c}")

    return Grid(family, [axis("sdk", s) for s in sdks], [axis("cli", c) for c in clis],
                [[cell(s, c) for c in clis] for s in sdks])
