"""A Copilot family's matrix page (the grid of every SDK × CLI cell, how to read it, the CLI
releases that start for no SDK here) and its page of every cell as a sortable table."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from matrix.ecosystems import get
from matrix.families.base import Family, SiteView
from matrix.families.copilot.payload import CONNECTED, SESSION
from matrix.families.copilot.render import render
from matrix.families.copilot.rules import COPILOT_RULES
from matrix.families.copilot.stops import LEAK_MARK, RACE_MARK, after_stop_text
from matrix.markup import esc_raw, num
from matrix.present.grid import Grid, grid_of
from matrix.present.pairs import does_not_start
from matrix.present.rows import refined
from matrix.store.listed import NOT_YET, unmeasured_side
from matrix.versions import sort_by_version, sorted_versions

__all__ = ["CellRow", "MatrixPage", "cell_rows", "cells_page", "matrix_page", "matrix_page_data", "matrix_pages"]

EXCERPT = 160


@dataclass(frozen=True)
class CellRow:
    """One handshake cell in a table of every cell; ``flaky``, ``repeats`` and ``stale`` are what
    the flaky and stale marks read."""

    family: str
    sdk: str
    cli: str
    outcome: str
    protocol: str
    observed_cli: str
    after_stop: str
    error: str
    excerpt: str
    seconds: str
    flaky: bool
    repeats: list[str]
    stale: str


def cell_rows(frame: pd.DataFrame) -> list[CellRow]:
    """Every row, by family, SDK and CLI version."""
    frame = sort_by_version(sort_by_version(frame, "cli_version"), "sdk_version").sort_values("family", kind="stable")
    rows = []
    for r in frame.itertuples():
        msg = esc_raw(r.error_message)
        rows.append(CellRow(
            family=str(r.family), sdk=str(r.sdk_version), cli=str(r.cli_version), outcome=str(r.outcome),
            protocol=num(r.protocol), observed_cli=esc_raw(r.observed_cli_version),
            after_stop=after_stop_text(r.leaked, r.exit_after_stop_seconds, r.stops), error=msg,
            excerpt=msg if len(msg) <= EXCERPT else msg[:EXCERPT] + "…", seconds=num(round(float(str(r.seconds)), 1)),
            flaky=r.flaky is True, repeats=[str(o) for o in r.repeats] if isinstance(r.repeats, list) else [],
            stale=COPILOT_RULES.note(r)))
    return rows


@dataclass(frozen=True)
class MatrixPage:
    family: str
    description: str
    sdks: int
    clis: int
    leak_mark: str
    race_mark: str
    grid: Grid
    cells: list[CellRow]
    dead: list[tuple[str, str]]  # (release of the other side, why it starts for no SDK here)
    # (package, how many of its releases the registry lists that no selection has measured yet)
    not_yet: list[tuple[str, int]] = field(default_factory=list)
    no_session: int = 0  # pairs that connect whose conversation turn has no verdict yet


def _not_yet(view: SiteView, fam: Family) -> list[tuple[str, int]]:
    """Per side, the releases the registry lists that have no cell of the family yet (a history
    still being measured): a grid of the measured ones alone would read as the whole of it."""
    listed = view.releases.get(fam.name, {})
    rows = view.frame[view.frame["family"] == fam.name]
    out = []
    for side, package, ecosystem in (("sdk", fam.sdk_package, fam.sdk_ecosystem),
                                     ("cli", fam.cli_package, fam.cli_ecosystem)):
        for group in unmeasured_side(listed, side, rows[f"{side}_version"], get(ecosystem).key):
            if group.why == NOT_YET:
                out.append((package, len(group.versions)))
    return out


def _no_session(sub: pd.DataFrame) -> int:
    """Pairs that connected and have no session row: the grid shows how they connect, not yet
    whether a turn works (a history still being measured)."""
    session = sub.get(refined(SESSION, "outcome"))
    if session is None:
        return 0
    return int((sub["outcome"].isin(CONNECTED) & session.isna()).sum())


def matrix_page_data(view: SiteView, fam: Family) -> MatrixPage:
    family = fam.name
    sub = view.rows.pairs(family)
    clis = sorted_versions(sub["cli_version"])
    dead = [(c, why) for c in clis if (why := does_not_start(view.rows, family, c)) is not None]
    grid = grid_of(view.rows, view.releases, family, fam.cell_label, fam.cell_note, columns=fam.cell_columns)
    return MatrixPage(family=family, description=fam.description, sdks=sub["sdk_version"].nunique(), clis=len(clis),
                      leak_mark=LEAK_MARK, race_mark=RACE_MARK, grid=grid, cells=cell_rows(sub), dead=dead,
                      not_yet=_not_yet(view, fam), no_session=_no_session(sub))


def matrix_page(view: SiteView, fam: Family) -> str:
    return render("matrix.md", page=matrix_page_data(view, fam))


def cells_page(view: SiteView, fam: Family) -> str:
    """Every cell of the family's matrix as a sortable table, on a page of its own."""
    return render("matrix-cells.md", page=matrix_page_data(view, fam))


def matrix_pages(view: SiteView, fam: Family) -> dict[str, str]:
    """The matrix page and its every-cell page (relative path -> text), from one reading."""
    page = matrix_page_data(view, fam)
    return {f"matrix/{fam.name}.md": render("matrix.md", page=page),
            f"matrix/{fam.name}-cells.md": render("matrix-cells.md", page=page)}
