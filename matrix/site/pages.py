"""The site's overview pages (home, a family's matrix and its every-cell page, the versions
index, the pin guide) as plain data from the results DataFrame, each rendered by its template in ``templates/``, whose
autoescaping keeps anything an SDK or CLI printed text on our pages."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from matrix import HARNESS_VERSION, __version__
from matrix.answers.analysis import (
    UpgradeAdvice,
    after_stop_text,
    does_not_start,
    handshake,
    pin_lines,
    upgrade_advice,
)
from matrix.ecosystems import get
from matrix.families.registry import FAMILIES
from matrix.markup import esc_raw
from matrix.model import HANDSHAKE_OUTCOMES, OUTCOME_INFO, PROMISE_OUTCOMES, TOLERANCE_OUTCOMES
from matrix.site.answer_lines import AnswerLine, answer_lines
from matrix.site.grid import Grid, grid_of
from matrix.site.heatmap import LEAK_MARK, LEAK_TEXT, RACE_MARK
from matrix.site.render import render
from matrix.site.sitedata import SiteData, num
from matrix.versions import sort_by_version, sorted_versions

__all__ = ["cell_rows", "cells_page", "home", "home_page", "matrix_page", "matrix_page_data", "matrix_pages",
           "pins_page", "pins_page_data", "versions_index", "versions_index_data"]

EXCERPT = 160


@dataclass(frozen=True)
class CellRow:
    """One handshake cell in a table of every cell; ``flaky``, ``repeats``, ``harness_version``
    and ``probe`` are what the flaky and stale marks read."""

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
    harness_version: str
    probe: str


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
            harness_version=esc_raw(r.harness_version), probe=str(r.probe)))
    return rows


@dataclass(frozen=True)
class LegendPart:
    title: str
    meanings: list[tuple[str, str]]  # outcome, what it means


def legend_parts() -> list[LegendPart]:
    parts = []
    for title, outcomes in (("Handshake cells", HANDSHAKE_OUTCOMES), ("Tolerance checks", TOLERANCE_OUTCOMES),
                            ("Promise checks", PROMISE_OUTCOMES[:2])):
        parts.append(LegendPart(title, [(o.value, OUTCOME_INFO[o][1].removeprefix("Tolerance: ")
                                         .removeprefix("Promise check: ")) for o in outcomes]))
    return parts


@dataclass(frozen=True)
class FamilyLink:
    name: str
    page: str  # from the site's root
    description: str


@dataclass(frozen=True)
class HomePage:
    answers: list[AnswerLine]
    generated_at: str
    harness_version: str
    version: str
    families: list[FamilyLink]
    counts: list[tuple[str, int]]  # outcome, cells: in the legend's order, outcomes with cells only
    total: int
    legend: list[LegendPart]
    leak_mark: str
    leak_text: str


def home_page(data: SiteData) -> HomePage:
    families = []
    for f in sorted(data.frame["family"].unique()):
        fam = FAMILIES.get(f)
        families.append(FamilyLink(f, f"cosmo/{f}.md" if fam and fam.standin else f"matrix/{f}.md",
                                   fam.description if fam else ""))
    counts = data.frame["outcome"].value_counts()
    return HomePage(
        answers=answer_lines(data.frame), generated_at=data.generated_at, harness_version=HARNESS_VERSION,
        version=__version__, families=families,
        counts=[(o.value, int(counts[o.value])) for o in OUTCOME_INFO if counts.get(o.value, 0)],
        total=len(data.frame), legend=legend_parts(), leak_mark=LEAK_MARK,
        leak_text=LEAK_TEXT.removeprefix(LEAK_MARK).strip())


def home(data: SiteData) -> str:
    return render("home.md", page=home_page(data))


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


def matrix_page_data(data: SiteData, family: str) -> MatrixPage:
    sub = handshake(data.frame, family)
    clis = sorted_versions(sub["cli_version"])
    dead = [(c, why) for c in clis if (why := does_not_start(data.frame, family, c)) is not None]
    return MatrixPage(family=family, description=FAMILIES[family].description if family in FAMILIES else "",
                      sdks=sub["sdk_version"].nunique(), clis=len(clis), leak_mark=LEAK_MARK, race_mark=RACE_MARK,
                      grid=grid_of(data.frame, data.releases, family), cells=cell_rows(sub), dead=dead)


def matrix_page(data: SiteData, family: str) -> str:
    return render("matrix.md", page=matrix_page_data(data, family))


def cells_page(data: SiteData, family: str) -> str:
    """Every cell of the family's matrix as a sortable table, on a page of its own."""
    return render("matrix-cells.md", page=matrix_page_data(data, family))


def matrix_pages(data: SiteData, family: str) -> dict[str, str]:
    """The matrix page and its every-cell page (relative path -> text), from one reading."""
    page = matrix_page_data(data, family)
    return {f"matrix/{family}.md": render("matrix.md", page=page),
            f"matrix/{family}-cells.md": render("matrix-cells.md", page=page)}


@dataclass(frozen=True)
class FamilyVersions:
    family: str
    sdks: list[str]
    clis: list[str]


def versions_index_data(data: SiteData) -> list[FamilyVersions]:
    out = []
    for family in sorted(data.frame["family"].unique()):
        sub = handshake(data.frame, family)
        out.append(FamilyVersions(family, sorted_versions(sub["sdk_version"]), sorted_versions(sub["cli_version"])))
    return out


def versions_index(data: SiteData) -> str:
    return render("versions-index.md", families=versions_index_data(data))


@dataclass(frozen=True)
class PinRow:
    version: str
    works: list[str]
    leaky: list[str]


@dataclass(frozen=True)
class FamilyPins:
    family: str
    advice: UpgradeAdvice | None
    recommended: tuple[str, str] | None  # the SDK's and the CLI's install line
    sdk_tool: str
    cli_tool: str
    by_sdk: list[PinRow]  # the CLI releases that work with each SDK release
    by_cli: list[PinRow]


def pins_page_data(data: SiteData) -> list[FamilyPins]:
    out = []
    for family in sorted(handshake(data.frame)["family"].unique()):
        fam = FAMILIES[family]
        sub = handshake(data.frame, family)
        advice = upgrade_advice(data.frame, family)
        sdk_eco, cli_eco = get(fam.sdk_ecosystem), get(fam.cli_ecosystem)
        recommended = None
        if advice and advice.sdks_working_with_newest_cli:
            recommended = (sdk_eco.install(fam.sdk_package, advice.sdks_working_with_newest_cli[-1]),
                           cli_eco.install(fam.cli_package, advice.newest_cli))
        out.append(FamilyPins(
            family=family, advice=advice, recommended=recommended, sdk_tool=sdk_eco.tool, cli_tool=cli_eco.tool,
            by_sdk=[PinRow(v, pin_lines(data.frame, family, sdk=v), pin_lines(data.frame, family, sdk=v, leaky=True))
                    for v in sorted_versions(sub["sdk_version"])],
            by_cli=[PinRow(v, pin_lines(data.frame, family, cli=v), pin_lines(data.frame, family, cli=v, leaky=True))
                    for v in sorted_versions(sub["cli_version"])]))
    return out


def pins_page(data: SiteData) -> str:
    return render("pins.md", families=pins_page_data(data))
