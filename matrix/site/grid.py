"""The handshake matrix as HTML: one cell per measured pair, coloured by outcome, saying the
negotiated protocol or the failure's letter, with a tooltip (outcome and the first line of
the error) and a link to the cell's evidence on its SDK release's page. Plain data here;
``templates/grid.html`` draws it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from matrix.answers.analysis import handshake
from matrix.site.heatmap import cell_label
from matrix.store.results import Releases
from matrix.versions import sorted_versions

__all__ = ["Axis", "Cell", "Grid", "grid_of"]

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


def _tip(rec: Mapping[Any, Any], sdk: str, cli: str) -> str:
    error = rec.get("error_message")
    first = error.strip().splitlines()[0][:_TIP] if isinstance(error, str) and error.strip() else ""
    proto = rec.get("protocol")
    said = f"protocol {int(proto)}" if isinstance(proto, (int, float)) and proto == proto else first
    return f"SDK {sdk} × CLI {cli}: {rec['outcome']}" + (f". {said}" if said else "")


def grid_of(frame: pd.DataFrame, releases: Releases, family: str, to_versions: str = "../../versions/") -> Grid:
    """``to_versions``: the versions folder relative to the URL of the page the grid is on
    (raw HTML: MkDocs does not rewrite these links; a page ``matrix/F.md`` is served at
    ``matrix/F/``)."""
    sub = handshake(frame, family)
    sdks, clis = sorted_versions(sub["sdk_version"]), sorted_versions(sub["cli_version"])
    dates = releases.get(family, {})

    def axis(side: str, v: str) -> Axis:
        return Axis(v, str(dates.get(side, {}).get(v) or "")[:10], f"{to_versions}{family}/{side}-{v}/")

    at = {(str(r["sdk_version"]), str(r["cli_version"])): r
          for r in sub[["sdk_version", "cli_version", "outcome", "protocol", "leaked", "stops", "error_message"]]
          .to_dict("records")}
    rows = []
    for s in sdks:
        row: list[Cell | None] = []
        for c in clis:
            rec = at.get((s, c))
            row.append(None if rec is None else Cell(str(rec["outcome"]), cell_label(rec), _tip(rec, s, c),
                                                     f"{to_versions}{family}/sdk-{s}/#cli-{c}"))
        rows.append(row)
    return Grid(family, [axis("sdk", s) for s in sdks], [axis("cli", c) for c in clis], rows)
