"""Markdown pages of the site, generated from the results DataFrame.

Third-party text (error messages, argv) is always HTML-escaped and placed in HTML
elements, so nothing an SDK or CLI printed can become markup on our pages."""

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
    after_stop_text,
    handshake,
    leak_ranges,
    pin_lines,
    upgrade_advice,
    working_ranges,
)
from matrix.ecosystems import get
from matrix.families.registry import FAMILIES
from matrix.markup import TABLE_END, WIDE, badge, embed_badge, esc, esc_raw, flaky_mark, sortable
from matrix.model import HANDSHAKE_OUTCOMES, OUTCOME_INFO, PROMISE_OUTCOMES, TOLERANCE_OUTCOMES
from matrix.site.answer_lines import answer_lines
from matrix.site.grid import grid_of
from matrix.site.heatmap import LEAK_MARK, LEAK_TEXT
from matrix.site.render import render
from matrix.store.results import Releases
from matrix.versions import sort_by_version, sorted_versions

__all__ = ["SiteData", "cli_page", "cli_slug", "home", "matrix_page", "pins_page", "repro_name", "reproduction",
           "sdk_page", "sdk_slug", "versions_index", "write"]

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


def long_table(frame: pd.DataFrame, link_prefix: str = "../versions/") -> str:
    """Every row, sortable and filterable by the site's tables.js."""
    head = ["family", "sdk", "cli", "outcome", "protocol", "observed CLI", "after stop()", "error", "seconds"]
    frame = sort_by_version(sort_by_version(frame, "cli_version"), "sdk_version").sort_values("family", kind="stable")
    out = [sortable(head)]
    for r in frame.itertuples():
        msg = esc_raw(r.error_message)
        excerpt = msg if len(msg) <= EXCERPT else msg[:EXCERPT] + "…"
        fam = esc(r.family)
        out.append(
            "<tr>"
            f"<td>{fam}</td>"
            f'<td><a href="{link_prefix}{fam}/{sdk_slug(str(r.sdk_version))}/">{esc(r.sdk_version)}</a></td>'
            f'<td><a href="{link_prefix}{fam}/{cli_slug(str(r.cli_version))}/">{esc(r.cli_version)}</a></td>'
            f'<td data-sort="{esc(r.outcome)}">{badge(str(r.outcome))}{flaky_mark(r)}</td>'
            f"<td>{_num(r.protocol)}</td>"
            f"<td>{esc(r.observed_cli_version)}</td>"
            f"<td>{esc(after_stop_text(r.leaked, r.exit_after_stop_seconds))}</td>"
            f'<td class="cm-msg" title="{esc(msg)}">{esc(excerpt)}</td>'
            f"<td>{_num(round(float(str(r.seconds)), 1))}</td>"
            "</tr>"
        )
    out.append(TABLE_END)
    return "\n".join(out)


def legend() -> str:
    parts = []
    for title, outcomes in (("Handshake cells", HANDSHAKE_OUTCOMES), ("Tolerance checks", TOLERANCE_OUTCOMES),
                            ("Promise checks", PROMISE_OUTCOMES[:2])):
        meaning = {o: OUTCOME_INFO[o][1].removeprefix("Tolerance: ").removeprefix("Promise check: ") for o in outcomes}
        rows = [f"| {badge(o.value)} | {esc(meaning[o])} |" for o in outcomes]
        parts.append(f"**{title}**\n\n| outcome | meaning |\n|---|---|\n" + "\n".join(rows))
    leak = esc(LEAK_TEXT.removeprefix(LEAK_MARK).strip())
    parts.insert(1, f"In the heatmaps, **{LEAK_MARK}** after a cell's number or letter: {leak} "
                    "(still alive `timeouts.leak` seconds after `stop()` returned, the application still running). "
                    "The Copilot SDK's version negotiation design promises that stopping the client closes its "
                    "pipes and leaves no CLI process behind: a cell that connected but leaked is `degraded`; "
                    "a failed start that leaked keeps its outcome and says so on the version pages.")
    return "\n\n".join(parts)


def counts_table(frame: pd.DataFrame) -> str:
    counts = frame["outcome"].value_counts()
    lines = ['<table class="cm-counts"><thead><tr><th>outcome</th><th>cells</th></tr></thead><tbody>']
    for o in OUTCOME_INFO:
        if counts.get(o.value, 0):
            lines.append(f'<tr><td>{badge(o.value)}</td><td data-cm-count="{o.value}">{int(counts[o.value])}</td></tr>')
    lines.append(f'<tr><td><b>total</b></td><td data-cm-count="total"><b>{len(frame)}</b></td></tr>')
    lines.append("</tbody></table>")
    return "\n".join(lines)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:  # unchanged pages keep their mtime
        path.write_text(text)


def home(data: SiteData) -> str:
    fams = sorted(data.frame["family"].unique())

    def page(f: str) -> str:
        return f"cosmo/{f}.md" if f in FAMILIES and FAMILIES[f].standin else f"matrix/{f}.md"

    links = "\n".join(f"- [{f}]({page(f)}): {esc(FAMILIES[f].description) if f in FAMILIES else ''}"
                      for f in fams)
    return f"""# compat-matrix

{render("home-answers.html", lines=answer_lines(data.frame))}

Which released SDK versions work with which released CLI versions, **measured**: every cell
is one real SDK release from its registry, started against one real CLI release (or,
for Cosmo, whose backend is not reachable, a strict local stand-in of it) in a sandbox.
Nothing here is inferred from version numbers.

<p class="cm-stamp">Generated {esc(data.generated_at)} · harness {esc(HARNESS_VERSION)} ·
compat-matrix {esc(__version__)}</p>

## Families

{links}

## Outcomes

{counts_table(data.frame)}

## Legend

{legend()}

## Where to go

- [The matrices](matrix/index.md): heatmap and every row, sortable and filterable.
- [Tolerance](tolerance/index.md): what each SDK version does with unknown fields, event types and
  enum values, with the transcript of every check; and the failure contract after a failed handshake.
- [Cosmo](cosmo/index.md): every cosmo-ai-sdk release against a strict stand-in: tolerance,
  identity and strict-server findings, each promise of its design next to what every release does.
- [Versions](versions/index.md): one page per SDK and per CLI version.
- [Pin guide](pins.md): copy-paste version ranges that were measured to work.
- [Notebooks](notebooks/index.md): analyses executed against these results at build time.
- [Data](data.md): the same results as JSON, CSV and parquet.
"""


def matrix_page(data: SiteData, family: str) -> str:
    sub = handshake(data.frame, family)
    sdks, clis = sorted_versions(sub["sdk_version"]), sorted_versions(sub["cli_version"])
    wide = "\n".join(WIDE)
    return f"""{wide}
# {family}: handshake matrix

{esc(FAMILIES[family].description) if family in FAMILIES else ""}. {len(sdks)} SDK versions ×
{len(clis)} CLI versions, {len(sub)} cells. The number in a cell is the negotiated protocol
version; letters mark failures (R refused, L launch-failed, H hang, C crashed,
U uninstallable, ? infra error, ! harness error); {LEAK_MARK} marks a cell whose SDK left a
process it started running after `stop()` returned.

Hover a cell for its outcome and the first line of its error; click it for its evidence.
The same as a picture: [heatmap-{family}.png](../assets/heatmap-{family}.png).

{render("grid-colours.html")}
{render("grid.html", grid=grid_of(data.frame, data.releases, family))}

## Every cell

Click a column header to sort; type to filter (matches any column).

{long_table(sub)}
"""


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
    has_script = fam.reproduction(sdk, str(rows["cli_version"].iloc[-1]), _api_style(rows), script) is not None
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
    return render("sdk-release.md", page=sdk_release_page(data, family, sdk), WIDE="\n".join(WIDE))


def repro_name(sdk: str) -> str:
    """The reproduction script's file, beside the SDK release's page."""
    return f"{sdk_slug(sdk)}.repro.sh"


def _api_style(rows: pd.DataFrame) -> str | None:
    """How the harness constructed this release's client (the newest row that says)."""
    for d in reversed(list(rows["detail"])):
        api = d.get("api") if isinstance(d, dict) else None
        if isinstance(api, dict) and isinstance(api.get("style"), str):
            return str(api["style"])
    return None


def reproduction(data: SiteData, family: str, sdk: str) -> str | None:
    """The reproduction script of an SDK release, for its newest measured CLI by default."""
    rows = sort_by_version(handshake(data.frame, family).query("sdk_version == @sdk"), "cli_version")
    if rows.empty:
        return None
    return FAMILIES[family].reproduction(sdk, str(rows["cli_version"].iloc[-1]), _api_style(rows), repro_name(sdk))


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
    return render("cli-release.md", page=cli_release_page(data, family, cli), WIDE="\n".join(WIDE))


def versions_index(data: SiteData) -> str:
    lines = ["# Versions", ""]
    for family in sorted(data.frame["family"].unique()):
        sub = handshake(data.frame, family)
        lines += [f"## {family}", "", "SDK versions: " + " · ".join(
            f"[{v}]({family}/{sdk_slug(v)}.md)" for v in sorted_versions(sub["sdk_version"])), "",
            "CLI versions: " + " · ".join(
            f"[{v}]({family}/{cli_slug(v)}.md)" for v in sorted_versions(sub["cli_version"])), ""]
    return "\n".join(lines)


def _cell_pins(pins: list[str], none: str = "none measured") -> str:
    return "<br>".join(f"<code>{esc(p)}</code>" for p in pins) or none


def pins_page(data: SiteData) -> str:
    lines = ["# Pin guide", "",
             "Ranges below are runs of **measured** versions that were `compatible` (connected, answered, and",
             "left nothing running after `stop()`); a range spans only versions between two measured ones that",
             "both worked, and the versions measured inside it are on each version's page. Pairs that work but",
             "leave the CLI running after `stop()` are listed apart: prefer the first column. Each side is",
             "written in its own ecosystem's syntax: pip specifiers, npm ranges, and for Go (which has no",
             "ranges) the version to `go get`, its `require` line and `exclude` lines for measured-bad",
             "versions inside the working span. Anything not listed was not measured.", ""]
    for family in sorted(handshake(data.frame)["family"].unique()):
        fam = FAMILIES[family]
        sub = handshake(data.frame, family)
        advice = upgrade_advice(data.frame, family)
        lines += [f"## {family}", ""]
        if advice:
            first = {"sdk": f"**upgrade the SDK first**: the newest SDK ({advice.newest_sdk}) works with "
                            f"{len(advice.clis_working_with_newest_sdk)} of {advice.cli_count} measured CLI "
                            f"versions, the newest CLI ({advice.newest_cli}) with "
                            f"{len(advice.sdks_working_with_newest_cli)} of {advice.sdk_count} SDK versions.",
                     "cli": f"**upgrade the CLI first**: the newest CLI ({advice.newest_cli}) works with "
                            f"{len(advice.sdks_working_with_newest_cli)} of {advice.sdk_count} measured SDK "
                            f"versions, the newest SDK ({advice.newest_sdk}) with "
                            f"{len(advice.clis_working_with_newest_sdk)} of {advice.cli_count} CLI versions.",
                     "either": "either side first: both newest releases work with the same share of the other "
                               "side."}[advice.first]
            lines += [f"Which side to upgrade first, from the data: {first}", ""]
        sdk_eco, cli_eco = get(fam.sdk_ecosystem), get(fam.cli_ecosystem)
        if advice and advice.sdks_working_with_newest_cli:
            sdk_pin = sdk_eco.install(fam.sdk_package, advice.sdks_working_with_newest_cli[-1])
            lines += [f"Recommended pair: `{sdk_pin}` with `{cli_eco.install(fam.cli_package, advice.newest_cli)}`.",
                      ""]
        lines += [f"### CLI versions for each SDK version ({cli_eco.tool})", "",
                  "| SDK | works with CLI | works, but stop() leaves the CLI running |", "|---|---|---|"]
        for sdk in sorted_versions(sub["sdk_version"]):
            lines.append(f"| [{sdk}](versions/{family}/{sdk_slug(sdk)}.md) | "
                         f"{_cell_pins(pin_lines(data.frame, family, sdk=sdk))} | "
                         f"{_cell_pins(pin_lines(data.frame, family, sdk=sdk, leaky=True), '')} |")
        lines += ["", f"### SDK versions for each CLI version ({sdk_eco.tool})", "",
                  "| CLI | works with SDK | works, but stop() leaves the CLI running |", "|---|---|---|"]
        for cli in sorted_versions(sub["cli_version"]):
            lines.append(f"| [{cli}](versions/{family}/{cli_slug(cli)}.md) | "
                         f"{_cell_pins(pin_lines(data.frame, family, cli=cli))} | "
                         f"{_cell_pins(pin_lines(data.frame, family, cli=cli, leaky=True), '')} |")
        lines.append("")
    return "\n".join(lines)
