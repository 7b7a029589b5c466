"""The site's overview pages (home, the versions index, the pin guide) as plain data from
every measured row, each rendered by its template in ``templates/``, whose autoescaping keeps
anything an SDK or CLI printed text on our pages. What each family knows (its vocabularies and
their notes, its own pages, what its ranges stand on) comes from the family."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pandas as pd

from matrix import HARNESS_VERSION, __version__
from matrix.answers.analysis import UpgradeAdvice, pairs, pin_lines, upgrade_advice
from matrix.ecosystems import get
from matrix.families.base import SiteView
from matrix.model import OUTCOME_INFO
from matrix.site.answer_lines import AnswerLine, answer_lines
from matrix.site.render import render
from matrix.store.listed import Unmeasured, unmeasured_side
from matrix.versions import sort_key, sorted_versions

__all__ = ["home", "home_page", "pins_page", "pins_page_data", "versions_index", "versions_index_data"]

@dataclass(frozen=True)
class LegendPart:
    title: str
    meanings: list[tuple[str, str]]  # outcome, what it means
    note: str  # Markdown after it: how its family's marks read


def legend_parts(view: SiteView) -> list[LegendPart]:
    """Every family's vocabularies, each title once (the first family to name it says it)."""
    parts: dict[str, LegendPart] = {}
    for fam in view.families.values():
        for v in fam.vocabularies:
            if v.title not in parts:
                parts[v.title] = LegendPart(v.title, [(o.value, v.meaning(o)) for o in v.outcomes], v.note)
    return list(parts.values())


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
    stand_ins: list[str]  # the families measured against a stand-in, by their names in prose
    guide: list[str]  # the families' lines pointing at their own pages (Markdown), each once


def home_page(view: SiteView) -> HomePage:
    measured = [view.families[f] for f in sorted(view.frame["family"].unique()) if f in view.families]
    families = [FamilyLink(fam.name, fam.front_page(), fam.description) for fam in measured]
    counts = view.frame["outcome"].value_counts()
    return HomePage(
        answers=answer_lines(view.rows), generated_at=view.generated_at, harness_version=HARNESS_VERSION,
        version=__version__, families=families,
        counts=[(o.value, int(counts[o.value])) for o in OUTCOME_INFO if counts.get(o.value, 0)],
        total=len(view.frame), legend=legend_parts(view),
        stand_ins=list(dict.fromkeys(fam.title or fam.name for fam in view.families.values() if fam.standin)),
        guide=list(dict.fromkeys(fam.guide for fam in view.families.values() if fam.guide)))


def home(view: SiteView) -> str:
    return render("home.md", page=home_page(view))


@dataclass(frozen=True)
class FamilyVersions:
    family: str
    sdks: list[str]
    clis: list[str]
    # What each side's registry lists that has no cell, by why (never hidden).
    sdk_unmeasured: list[Unmeasured] = field(default_factory=list)
    cli_unmeasured: list[Unmeasured] = field(default_factory=list)
    sdk_package: str = ""
    cli_package: str = ""


def _unmeasured(listed: Mapping[str, Mapping[str, str | None]], side: str, ecosystem: str | None,
                measured: pd.Series) -> list[Unmeasured]:
    return unmeasured_side(listed, side, measured, get(ecosystem).key if ecosystem else sort_key)


def versions_index_data(view: SiteView) -> list[FamilyVersions]:
    out = []
    for family in sorted(view.frame["family"].unique()):
        sub = pairs(view.rows, family)
        fam = view.families.get(family)
        rows = view.frame[view.frame["family"] == family]
        listed = view.releases.get(family, {})
        out.append(FamilyVersions(
            family, sorted_versions(sub["sdk_version"]), sorted_versions(sub["cli_version"]),
            _unmeasured(listed, "sdk", fam.sdk_ecosystem if fam else None, rows["sdk_version"]),
            _unmeasured(listed, "cli", fam.cli_ecosystem if fam else None, rows["cli_version"]),
            fam.sdk_package if fam else "", fam.cli_package if fam else ""))
    return out


def versions_index(view: SiteView) -> str:
    return render("versions-index.md", families=versions_index_data(view))


@dataclass(frozen=True)
class PinRow:
    version: str
    works: list[str]
    leaky: list[str]


@dataclass(frozen=True)
class FamilyPins:
    family: str
    caveat: str  # what the pairs of the third column leave their user with
    advice: UpgradeAdvice | None
    recommended: tuple[str, str] | None  # the SDK's and the CLI's install line
    sdk_tool: str
    cli_tool: str
    by_sdk: list[PinRow]  # the CLI releases that work with each SDK release
    by_cli: list[PinRow]


def pins_page_data(view: SiteView) -> list[FamilyPins]:
    out = []
    rows = view.rows
    for family in sorted(pairs(rows)["family"].unique()):
        fam = view.families[family]
        sub = pairs(rows, family)
        advice = upgrade_advice(rows, family)
        sdk_eco, cli_eco = get(fam.sdk_ecosystem), get(fam.cli_ecosystem)
        recommended = None
        if advice and advice.sdks_working_with_newest_cli:
            recommended = (sdk_eco.install(fam.sdk_package, advice.sdks_working_with_newest_cli[-1]),
                           cli_eco.install(fam.cli_package, advice.newest_cli))
        out.append(FamilyPins(
            family=family, caveat=fam.caveat, advice=advice, recommended=recommended, sdk_tool=sdk_eco.tool,
            cli_tool=cli_eco.tool,
            by_sdk=[PinRow(v, pin_lines(rows, family, sdk=v), pin_lines(rows, family, sdk=v, caveat=True))
                    for v in sorted_versions(sub["sdk_version"])],
            by_cli=[PinRow(v, pin_lines(rows, family, cli=v), pin_lines(rows, family, cli=v, caveat=True))
                    for v in sorted_versions(sub["cli_version"])]))
    return out


def pins_page(view: SiteView) -> str:
    families = pins_page_data(view)
    intros = list(dict.fromkeys(view.families[f.family].pin_guide for f in families))
    return render("pins.md", families=families, intros=intros)
