"""The site's own pages (home, matrices, a page per release, versions index, pin guide) as plain
data from the results DataFrame, each rendered by its template in ``templates/``, whose
autoescaping keeps anything an SDK or CLI printed text on our pages."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from matrix import HARNESS_VERSION, __version__
from matrix.answers.analysis import (
    CONNECTS,
    WORKS,
    Range,
    UpgradeAdvice,
    after_stop_text,
    handshake,
    leak_ranges,
    pin_lines,
    upgrade_advice,
    working_ranges,
)
from matrix.ecosystems import get
from matrix.families.registry import FAMILIES
from matrix.markup import embed_badge, esc, esc_raw
from matrix.model import HANDSHAKE_OUTCOMES, OUTCOME_INFO, PROMISE_OUTCOMES, TOLERANCE_OUTCOMES
from matrix.site.answer_lines import AnswerLine, answer_lines
from matrix.site.grid import Grid, grid_of
from matrix.site.heatmap import LEAK_MARK, LEAK_TEXT
from matrix.site.render import render
from matrix.store.results import Releases
from matrix.versions import sort_by_version, sorted_versions

__all__ = ["SiteData", "cell_rows", "cells_page", "cli_page", "cli_slug", "home", "home_page", "matrix_page",
           "matrix_page_data", "matrix_pages", "pins_page", "pins_page_data", "repro_name", "reproduction", "sdk_page",
           "sdk_slug", "versions_index", "versions_index_data", "write"]

EXCERPT = 160


def _num(value: Any) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return ""
    return str(int(value)) if isinstance(value, (int, float)) and float(value).is_integer() else f"{value}"


@dataclass(frozen=True)
class SiteData:
    frame: pd.DataFrame
    releases: Releases  # family -> side -> version -> release date
    generated_at: str


def sdk_slug(v: str) -> str:
    return f"sdk-{v}"


def cli_slug(v: str) -> str:
    return f"cli-{v}"


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
            protocol=_num(r.protocol), observed_cli=esc_raw(r.observed_cli_version),
            after_stop=after_stop_text(r.leaked, r.exit_after_stop_seconds), error=msg,
            excerpt=msg if len(msg) <= EXCERPT else msg[:EXCERPT] + "…", seconds=_num(round(float(str(r.seconds)), 1)),
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


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:  # unchanged pages keep their mtime
        path.write_text(text)


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
    grid: Grid
    cells: list[CellRow]


def matrix_page_data(data: SiteData, family: str) -> MatrixPage:
    sub = handshake(data.frame, family)
    return MatrixPage(family=family, description=FAMILIES[family].description if family in FAMILIES else "",
                      sdks=sub["sdk_version"].nunique(), clis=sub["cli_version"].nunique(), leak_mark=LEAK_MARK,
                      grid=grid_of(data.frame, data.releases, family), cells=cell_rows(sub))


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


def _declared(row: pd.Series) -> dict[str, Any]:
    value = row.get("sdk_declared")
    return value if isinstance(value, dict) else {}


def _window(decl: dict[str, Any]) -> str:
    top = decl.get("SDK_PROTOCOL_VERSION")
    if top is None:
        return "not found in the SDK's source"
    low = decl.get("MIN_PROTOCOL_VERSION")
    if low is None:
        return f"exactly {top} (no minimum declared: exact match)"
    return f"{low} to {top}"


_REPORTS = re.compile(r"server (reports version \d+|does not report a protocol version)")


def reported_protocol(message: str) -> str | None:
    """What the CLI told an SDK that refused it, in the SDK's own words."""
    m = _REPORTS.search(message)
    return m.group(1) if m else None


def _left_running(rows: pd.DataFrame, other: str) -> str:
    """Which versions of the other side a process was left running with, after stop()."""
    hit = [str(r[other]) for r in rows.to_dict("records")
           if isinstance(r.get("leaked"), list) and r["leaked"]]
    measured = rows["exit_after_stop_seconds"].notna() | rows["leaked"].map(lambda v: bool(v) if isinstance(v, list)
                                                                             else False)
    if not measured.any():
        return "not measured"
    return f"with {len(hit)} of {int(measured.sum())}: {esc(', '.join(hit))}" if hit else \
        f"never (0 of {int(measured.sum())})"


def _yes_no(value: Any) -> str:
    return "yes" if value is True else "no" if value is False else "unknown"


@dataclass(frozen=True)
class Pin:
    """What to write down (in its ecosystem's syntax) and the measured releases it stands on."""

    lines: list[str]
    measured: list[str]


@dataclass(frozen=True)
class CellEvidence:
    """One cell on a release's page: what the SDK did against one release of the other side."""

    other: str
    outcome: str
    protocol: str
    steps: str  # seconds: start · calls · stop
    after_stop: str
    names_versions: bool | None  # grades of the failure message
    actionable: bool | None
    launch: str
    runtime: str
    error: str


@dataclass(frozen=True)
class SdkReleasePage:
    family: str
    package: str
    version: str
    released: str
    window: str
    observed: str
    first_working: str
    last_working: str
    bundles: str
    pinned: str
    left_running: str
    works: Pin
    leaky: Pin | None
    connects: str | None  # when it differs from ``works``: the ranges that connect at all
    badge: list[str]
    script: str | None  # the reproduction script's file name
    cells: list[CellEvidence]


def _pin(lines: list[str], rs: Iterable[Range]) -> Pin:
    return Pin(lines, [v for r in rs for v in r.versions])


def _evidence(r: Any, other: str) -> CellEvidence:
    """One row of the results (``itertuples``) as a cell's evidence against ``other``."""
    detail: dict[str, Any] = r.detail if isinstance(r.detail, dict) else {}
    return CellEvidence(
        other=other, outcome=str(r.outcome), protocol=_num(r.protocol), steps=_steps(r),
        after_stop=after_stop_text(r.leaked, r.exit_after_stop_seconds),
        names_versions=r.message_names_versions if isinstance(r.message_names_versions, bool) else None,
        actionable=r.message_actionable if isinstance(r.message_actionable, bool) else None,
        launch=" ".join(detail.get("launch_argv") or []) or "(not launched)",
        runtime=esc_raw(r.node_runtime) or "–", error=esc_raw(r.error_message))


def _steps(r: Any) -> str:
    return " · ".join(_num(round(x, 2)) if isinstance(x, (int, float)) and x == x else "–"
                      for x in (r.start_seconds, r.calls_seconds, r.stop_seconds))


def sdk_release_page(data: SiteData, family: str, sdk: str) -> SdkReleasePage:
    """An SDK release's page as plain data: what it declares, what it works with, every cell."""
    fam = FAMILIES[family]
    sub = handshake(data.frame, family)
    rows = sort_by_version(sub[sub["sdk_version"] == sdk], "cli_version")
    decl = next((d for d in (_declared(r) for _, r in rows.iterrows()) if d), {})
    works = working_ranges(data.frame, family, sdk=sdk)
    leaky = leak_ranges(data.frame, family, sdk=sdk)
    connects = working_ranges(data.frame, family, sdk=sdk, outcomes=CONNECTS)
    ok = rows[rows["outcome"].isin(WORKS)]["cli_version"].tolist()
    pinned = decl.get("CLI_VERSION")
    script = repro_name(sdk)
    has_script = fam.reproduction(sdk, str(rows["cli_version"].iloc[-1]), _api(rows), script) is not None
    cells = [_evidence(r, str(r.cli_version)) for r in rows.itertuples()]
    return SdkReleasePage(
        family=family, package=fam.sdk_package, version=sdk,
        released=str(data.releases.get(family, {}).get("sdk", {}).get(sdk) or "unknown"),
        window=_window(decl), observed=", ".join(map(str, sorted({int(p) for p in rows["protocol"].dropna()})))
        or "none", first_working=ok[0] if ok else "–", last_working=ok[-1] if ok else "–",
        bundles=_yes_no(decl.get("bundled_cli")), pinned=str(pinned) if pinned else "none",
        left_running=_left_running(rows, "cli_version"),
        works=_pin(pin_lines(data.frame, family, sdk=sdk), works),
        leaky=_pin(pin_lines(data.frame, family, sdk=sdk, leaky=True), leaky) if leaky else None,
        connects=None if [r.versions for r in connects] == [r.versions for r in works] else
        ", ".join(f"{r.first}" if r.first == r.last else f"{r.first} to {r.last}" for r in connects),
        badge=embed_badge(family, "sdk", sdk, f"{fam.sdk_package} {sdk}", f"versions/{family}/{sdk_slug(sdk)}/"),
        script=script if has_script else None, cells=cells)


def sdk_page(data: SiteData, family: str, sdk: str) -> str:
    return render("sdk-release.md", page=sdk_release_page(data, family, sdk))


def repro_name(sdk: str) -> str:
    """The reproduction script's file, beside the SDK release's page."""
    return f"{sdk_slug(sdk)}.repro.sh"


def _api(rows: pd.DataFrame) -> dict[str, Any]:
    """What the agent recorded of this release's API (the newest row that did)."""
    for d in reversed(list(rows["detail"])):
        api = d.get("api") if isinstance(d, dict) else None
        if isinstance(api, dict) and api:
            return api
    return {}


def reproduction(data: SiteData, family: str, sdk: str) -> str | None:
    """The reproduction script of an SDK release, for its newest measured CLI by default."""
    rows = sort_by_version(handshake(data.frame, family).query("sdk_version == @sdk"), "cli_version")
    if rows.empty:
        return None
    return FAMILIES[family].reproduction(sdk, str(rows["cli_version"].iloc[-1]), _api(rows), repro_name(sdk))


@dataclass(frozen=True)
class CliReleasePage:
    family: str
    package: str
    version: str
    released: str
    observed: str
    reported: str  # the protocol it reported, as quoted in SDK refusals
    runtimes: str
    left_running: str  # HTML (escaped)
    reports_as: str | None  # the version it reports in status.get, when not its own
    runtime_failures: dict[str, str]
    not_served: list[str]
    works: Pin
    leaky: Pin | None
    badge: list[str]
    cells: list[CellEvidence]


def cli_release_page(data: SiteData, family: str, cli: str) -> CliReleasePage:
    """A CLI release's page as plain data: what it reported, which SDK releases work, every cell."""
    fam = FAMILIES[family]
    sub = handshake(data.frame, family)
    rows = sort_by_version(sub[sub["cli_version"] == cli], "sdk_version")
    failures: dict[str, str] = {}
    not_served: list[str] = []
    reports_as: str | None = None
    for d in rows["detail"]:
        if isinstance(d, dict):
            failures = failures or d.get("runtime_failures") or {}
            not_served = not_served or d.get("optional_not_served") or []
            reports_as = reports_as or d.get("cli_reports_itself_as")
    leaky = leak_ranges(data.frame, family, cli=cli)
    cells = [_evidence(r, str(r.sdk_version)) for r in rows.itertuples()]
    return CliReleasePage(
        family=family, package=fam.cli_package, version=cli,
        released=str(data.releases.get(family, {}).get("cli", {}).get(cli) or "unknown"),
        observed=", ".join(map(str, sorted({int(p) for p in rows["protocol"].dropna()}))) or "none",
        reported=", ".join(sorted({m for m in (reported_protocol(esc_raw(x)) for x in rows["error_message"]) if m}))
        or "none quoted",
        runtimes=", ".join(sorted({str(x) for x in rows["node_runtime"].dropna()})) or "none (not installed)",
        left_running=_left_running(rows, "sdk_version"), reports_as=reports_as,
        runtime_failures={k: v[:300] for k, v in failures.items()}, not_served=list(not_served),
        works=_pin(pin_lines(data.frame, family, cli=cli), working_ranges(data.frame, family, cli=cli)),
        leaky=_pin(pin_lines(data.frame, family, cli=cli, leaky=True), leaky) if leaky else None,
        badge=embed_badge(family, "cli", cli, f"{fam.cli_package} {cli}", f"versions/{family}/{cli_slug(cli)}/"),
        cells=cells)


def cli_page(data: SiteData, family: str, cli: str) -> str:
    return render("cli-release.md", page=cli_release_page(data, family, cli))


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
