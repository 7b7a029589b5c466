"""The Copilot SDK families side by side against the same CLI versions: one picture with
a band per family on a shared CLI axis, per CLI version what each family's SDK versions
did, and the version numbers both SDKs released that behave differently."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from matrix.families.base import Picture, SiteView
from matrix.families.copilot.render import render
from matrix.markup import cli_slug, esc_raw, sdk_slug
from matrix.model import Outcome
from matrix.versions import sorted_versions

WORKS = {Outcome.COMPATIBLE.value}
WHAT = "the SDK families against the same CLI versions"  # a side-by-side page, in the matrices' index

__all__ = ["WHAT", "CliRow", "ComparePage", "FamilyCell", "SameNumberCell", "SameNumberRow", "ToleranceRow",
           "compare_page", "compare_page_data", "compare_pages", "compare_pictures", "compare_slug",
           "compared_families"]


def compared_families(view: SiteView, kind: type) -> dict[str, list[str]]:
    """CLI package -> the families of ``kind`` with handshake rows against it, when more than one."""
    by_cli: dict[str, list[str]] = {}
    for family in sorted(view.rows.pairs()["family"].unique()):
        fam = view.families.get(family)
        if fam is not None and isinstance(fam, kind) and not fam.standin:
            by_cli.setdefault(fam.cli_package, []).append(family)
    return {cli: fams for cli, fams in by_cli.items() if len(fams) > 1}


@dataclass(frozen=True)
class FamilyCell:
    """What one family's SDK versions did against one CLI version."""

    family: str
    link: str  # the family's page of that CLI version
    works: list[str]  # the SDK versions that work, oldest first
    measured: int  # SDK versions measured
    tally: list[tuple[str, int]]  # outcome, how many SDK versions ended so; the most first


@dataclass(frozen=True)
class CliRow:
    cli: str
    cells: list[FamilyCell | None]  # per family, in the page's order; None: not measured


@dataclass(frozen=True)
class ToleranceRow:
    rule: str
    tallies: list[list[tuple[str, int]]]  # per family: outcome, how many SDK versions; [] not measured


@dataclass(frozen=True)
class SameNumberCell:
    family: str
    link: str  # the family's page of that SDK version
    outcome: str
    message: str  # the start of its error message


@dataclass(frozen=True)
class SameNumberRow:
    sdk: str
    cli: str
    cells: list[SameNumberCell]


@dataclass(frozen=True)
class ComparePage:
    cli_package: str
    families: list[str]
    clis: int  # CLI versions measured by any of them
    image: str
    rows: list[CliRow]
    tolerance: list[ToleranceRow]  # [] when no family has tolerance cells
    shared: list[str]  # SDK version numbers measured in every family
    differ: list[SameNumberRow]  # where the families' outcomes differ against the same CLI


def _tally(outcomes: pd.Series) -> list[tuple[str, int]]:
    return [(str(o), int(n)) for o, n in outcomes.value_counts().items()]


def _summary(family: str, cli: str, part: pd.DataFrame) -> FamilyCell | None:
    """What one family's SDK versions did against one CLI version."""
    if part.empty:
        return None
    works = sorted_versions(part[part["outcome"].isin(WORKS)]["sdk_version"])
    return FamilyCell(family, f"../versions/{family}/{cli_slug(cli)}.md", works, len(part), _tally(part["outcome"]))


def compare_page_data(view: SiteView, cli_package: str, families: list[str], image: str) -> ComparePage:
    """The families of one CLI package side by side, as plain data."""
    frame = view.frame
    hs = view.rows.pairs()
    mine = hs[hs["family"].isin(families)]
    clis = sorted_versions(mine["cli_version"])
    # One pass over the cells, not a filter of the whole frame per family and CLI version.
    parts = {key: part for key, part in mine.groupby(["family", "cli_version"], sort=False)}
    rows = [CliRow(cli, [_summary(f, cli, parts.get((f, cli), mine.iloc[:0])) for f in families]) for cli in clis]
    shared, differ = _same_numbers(hs, families)
    return ComparePage(cli_package, families, len(clis), image, rows, _tolerance(frame, families), shared, differ)


def compare_page(view: SiteView, cli_package: str, families: list[str], image: str) -> str:
    return render("compare.md", page=compare_page_data(view, cli_package, families, image))


def _tolerance(frame: pd.DataFrame, families: list[str]) -> list[ToleranceRow]:
    """Rule by rule, what each family's SDK versions did with the same mutation."""
    tol = frame[(frame["probe"] == "tolerance") & frame["family"].isin(families)]
    return [ToleranceRow(esc_raw(rule), [_tally(tol[(tol["family"] == f) & (tol["mutation"] == rule)]["outcome"])
                                     for f in families])
            for rule in sorted(tol["mutation"].unique())]


def _same_numbers(hs: pd.DataFrame, families: list[str]) -> tuple[list[str], list[SameNumberRow]]:
    """Version numbers several SDKs released, and the cells where their outcomes differ. The
    packages are separate artifacts; a shared number promises nothing, this shows it."""
    per = {f: hs[hs["family"] == f] for f in families}
    shared = sorted_versions(list(set.intersection(*(set(p["sdk_version"]) for p in per.values()))))
    cells_of = {f: {(str(r["sdk_version"]), str(r["cli_version"])): (str(r["outcome"]), r["error_message"])
                    for r in p[["sdk_version", "cli_version", "outcome", "error_message"]].to_dict("records")}
                for f, p in per.items()}
    differ = []
    for sdk in shared:
        for cli in sorted_versions(hs["cli_version"]):
            found = [(f, cells_of[f].get((sdk, cli))) for f in families]
            cells = [SameNumberCell(f, f"../versions/{f}/{sdk_slug(sdk)}.md", r[0], esc_raw(r[1])[:120])
                     for f, r in found if r is not None]
            # A cell some family never measured says nothing about the shared number.
            if len(cells) == len(families) and len({c.outcome for c in cells}) > 1:
                differ.append(SameNumberRow(sdk, cli, cells))
    return shared, differ


def compare_slug(cli_package: str) -> str:
    return cli_package.strip("@").replace("/", "-")


def compare_pages(view: SiteView, kind: type) -> dict[str, str]:
    """Relative page path -> text, for the families of ``kind`` that share a CLI package; the
    pictures they show are ``compare_pictures``."""
    return {f"matrix/compare-{compare_slug(cli)}.md":
            compare_page(view, cli, fams, f"../assets/compare-{compare_slug(cli)}.png")
            for cli, fams in compared_families(view, kind).items()}


def compare_pictures(view: SiteView, kind: type) -> list[Picture]:
    """The picture of each side-by-side page: a band per family on the shared CLI axis."""
    hs = view.rows.pairs()
    return [Picture(f"compare-{compare_slug(cli)}.png", hs[hs["family"].isin(fams)],
                    f"{cli}: the SDKs side by side (number: negotiated protocol)", bands=fams)
            for cli, fams in compared_families(view, kind).items()]
