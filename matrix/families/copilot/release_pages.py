"""A page per release: what an SDK release declares and works with, what a CLI release
reported, every cell's evidence, and the reproduction script beside an SDK release's page.
Each is plain data rendered by its template (``sdk-release.md``, ``cli-release.md``)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from matrix.families.base import Family, SiteView
from matrix.families.copilot.payload import SESSION
from matrix.families.copilot.render import render
from matrix.families.copilot.session.verdict import DELIVERIES
from matrix.families.copilot.stops import after_stop_text, stop_rate
from matrix.markup import cli_slug, embed_badge, esc, esc_raw, num, sdk_slug, yes_no
from matrix.model import Outcome
from matrix.present.pairs import caveat_ranges, does_not_start, pins, working_ranges
from matrix.present.ranges import Range
from matrix.versions import sort_by_version

CONNECTS = {Outcome.COMPATIBLE.value, Outcome.DEGRADED.value}

__all__ = [
    "CellEvidence",
    "CliReleasePage",
    "Pin",
    "SdkReleasePage",
    "cli_page",
    "cli_release_page",
    "reported_protocol",
    "repro_name",
    "reproduction",
    "sdk_page",
    "sdk_pages",
    "sdk_release_page",
]


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
    """Which versions of the other side a process was left running with, after stop(), and how
    often where it was a race ("0.0.400 in 2 of 5 stops")."""
    hit = []
    for r in rows[[c for c in (other, "leaked", "stops") if c in rows.columns]].to_dict("records"):
        if isinstance(r.get("leaked"), list) and r["leaked"]:
            left, n = stop_rate(r.get("stops"))
            hit.append(f"{r[other]} in {left} of {n} stops" if 0 < left < n else str(r[other]))
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
class SessionEvidence:
    """One session cell on its SDK release's page."""

    other: str
    outcome: str
    error: str
    route: str
    turns: str  # each scripted turn: held, or why not
    idle: str  # seconds until idle, every turn
    events: str  # how many event types reached the application typed, as unknown, or never
    asked: str  # the permission kinds the application was asked


def _session(r: Mapping[Any, Any]) -> SessionEvidence:
    turns = [t for t in r.get("turns") or [] if isinstance(t, Mapping)]
    given = r.get("events")
    events: Mapping[str, str] = given if isinstance(given, Mapping) else {}
    counts = {how: len([v for v in events.values() if v == how]) for how in DELIVERIES}
    return SessionEvidence(
        other=str(r["cli_version"]), outcome=str(r["outcome"]), error=esc_raw(r.get("error_message")),
        route=str(r.get("route") or "none"),
        turns=", ".join(f"{t.get('name')} {'✓' if t.get('held') else '✗ ' + str(t.get('why') or 'did not hold')}"
                        for t in turns) or "–",
        idle=num(r.get("idle_seconds")) or "–",
        events=", ".join(f"{n} {how}" for how, n in counts.items() if n) or "–",
        asked=", ".join(map(str, r.get("asked") or [])) or "none")


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
    script_text: str | None  # the script itself, written beside the page
    cells: list[CellEvidence]
    sessions: list[SessionEvidence]


def _pin(lines: list[str], rs: Iterable[Range]) -> Pin:
    return Pin(lines, [v for r in rs for v in r.versions])


def _evidence(r: Any, other: str) -> CellEvidence:
    """One row of the results (``itertuples``) as a cell's evidence against ``other``."""
    detail: dict[str, Any] = r.detail if isinstance(r.detail, dict) else {}
    return CellEvidence(
        other=other, outcome=str(r.outcome), protocol=num(r.protocol), steps=_steps(r),
        after_stop=after_stop_text(r.leaked, r.exit_after_stop_seconds, r.stops),
        names_versions=yes_no(r.message_names_versions), actionable=yes_no(r.message_actionable),
        launch=" ".join(detail.get("launch_argv") or []) or "(not launched)",
        runtime=esc_raw(r.node_runtime) or "–", error=esc_raw(r.error_message))


def _steps(r: Any) -> str:
    return " · ".join(num(round(x, 2)) if isinstance(x, (int, float)) and x == x else "–"
                      for x in (r.start_seconds, r.calls_seconds, r.stop_seconds))


def sdk_release_page(view: SiteView, fam: Family, sdk: str) -> SdkReleasePage:
    """An SDK release's page as plain data: what it declares, what it works with, every cell."""
    family = fam.name
    sub = view.rows.pairs(family)
    rows = sort_by_version(sub[sub["sdk_version"] == sdk], "cli_version")
    decl = next((d for d in (_declared(r) for _, r in rows.iterrows()) if d), {})
    works = working_ranges(view.rows, fam, sdk=sdk)
    leaky = caveat_ranges(view.rows, fam, sdk=sdk)
    connects = working_ranges(view.rows, fam, sdk=sdk, outcomes=CONNECTS)
    ok = rows[fam.works(rows)]["cli_version"].tolist()
    pinned = decl.get("CLI_VERSION")
    script = _script(fam, sdk, rows)
    cells = [_evidence(r, str(r.cli_version)) for r in rows.itertuples()]
    return SdkReleasePage(
        family=family, package=fam.sdk_package, version=sdk,
        released=str(view.releases.get(family, {}).get("sdk", {}).get(sdk) or "unknown"),
        window=_window(decl), observed=", ".join(map(str, sorted({int(p) for p in rows["protocol"].dropna()})))
        or "none", first_working=ok[0] if ok else "–", last_working=ok[-1] if ok else "–",
        bundles=_yes_no(decl.get("bundled_cli")), pinned=str(pinned) if pinned else "none",
        left_running=_left_running(rows, "cli_version"),
        works=_pin(pins(view.rows, fam, sdk=sdk), works),
        leaky=_pin(pins(view.rows, fam, sdk=sdk, caveat=True), leaky) if leaky else None,
        connects=None if [r.versions for r in connects] == [r.versions for r in works] else
        ", ".join(f"{r.first}" if r.first == r.last else f"{r.first} to {r.last}" for r in connects),
        badge=embed_badge(family, "sdk", sdk, f"{fam.sdk_package} {sdk}", f"versions/{family}/{sdk_slug(sdk)}/"),
        script=repro_name(sdk) if script is not None else None, script_text=script, cells=cells,
        sessions=_sessions(view, family, sdk))


def _sessions(view: SiteView, family: str, sdk: str) -> list[SessionEvidence]:
    mine = view.rows.of_sdk(family, SESSION, sdk)
    return [_session(r) for r in sort_by_version(mine, "cli_version").to_dict("records")]


def sdk_page(view: SiteView, fam: Family, sdk: str) -> str:
    return render("sdk-release.md", page=sdk_release_page(view, fam, sdk))


def sdk_pages(view: SiteView, fam: Family, sdk: str) -> dict[str, str]:
    """An SDK release's page and its reproduction script (relative path -> text)."""
    family = fam.name
    page = sdk_release_page(view, fam, sdk)
    out = {f"versions/{family}/{sdk_slug(sdk)}.md": render("sdk-release.md", page=page)}
    if page.script is not None and page.script_text is not None:
        out[f"versions/{family}/{page.script}"] = page.script_text
    return out


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


def _script(fam: Family, sdk: str, rows: pd.DataFrame) -> str | None:
    """The reproduction script of an SDK release (``rows``: its handshake cells, by CLI
    version), for its newest measured CLI by default."""
    if rows.empty:
        return None
    return fam.reproduction(sdk, str(rows["cli_version"].iloc[-1]), _api(rows), repro_name(sdk))


def reproduction(view: SiteView, fam: Family, sdk: str) -> str | None:
    """The reproduction script of an SDK release, as its page publishes it."""
    return sdk_release_page(view, fam, sdk).script_text


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
    does_not_start: str | None  # why no SDK could run it here (its own --version fails), once for all
    works: Pin
    leaky: Pin | None
    badge: list[str]
    cells: list[CellEvidence]


def cli_release_page(view: SiteView, fam: Family, cli: str) -> CliReleasePage:
    """A CLI release's page as plain data: what it reported, which SDK releases work, every cell."""
    family = fam.name
    sub = view.rows.pairs(family)
    rows = sort_by_version(sub[sub["cli_version"] == cli], "sdk_version")
    failures: dict[str, str] = {}
    not_served: list[str] = []
    reports_as: str | None = None
    for d in rows["detail"]:
        if isinstance(d, dict):
            failures = failures or d.get("runtime_failures") or {}
            not_served = not_served or d.get("optional_not_served") or []
            reports_as = reports_as or d.get("cli_reports_itself_as")
    leaky = caveat_ranges(view.rows, fam, cli=cli)
    cells = [_evidence(r, str(r.sdk_version)) for r in rows.itertuples()]
    return CliReleasePage(
        family=family, package=fam.cli_package, version=cli,
        released=str(view.releases.get(family, {}).get("cli", {}).get(cli) or "unknown"),
        observed=", ".join(map(str, sorted({int(p) for p in rows["protocol"].dropna()}))) or "none",
        reported=", ".join(sorted({m for m in (reported_protocol(esc_raw(x)) for x in rows["error_message"]) if m}))
        or "none quoted",
        runtimes=", ".join(sorted({str(x) for x in rows["node_runtime"].dropna()})) or "none (not installed)",
        left_running=_left_running(rows, "sdk_version"), reports_as=reports_as,
        runtime_failures={k: v[:300] for k, v in failures.items()}, not_served=list(not_served),
        does_not_start=does_not_start(view.rows, family, cli),
        works=_pin(pins(view.rows, fam, cli=cli), working_ranges(view.rows, fam, cli=cli)),
        leaky=_pin(pins(view.rows, fam, cli=cli, caveat=True), leaky) if leaky else None,
        badge=embed_badge(family, "cli", cli, f"{fam.cli_package} {cli}", f"versions/{family}/{cli_slug(cli)}/"),
        cells=cells)


def cli_page(view: SiteView, fam: Family, cli: str) -> str:
    return render("cli-release.md", page=cli_release_page(view, fam, cli))
