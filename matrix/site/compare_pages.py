"""The Copilot SDK families side by side against the same CLI versions: one picture with
a band per family on a shared CLI axis, per CLI version what each family's SDK versions
did, and the version numbers both SDKs released that behave differently."""

from __future__ import annotations

import pandas as pd

from matrix.answers.analysis import WORKS, handshake
from matrix.families.registry import FAMILIES
from matrix.markup import TABLE_END, WIDE, badge, esc, esc_raw, sortable
from matrix.site.pages import cli_slug, sdk_slug
from matrix.versions import sorted_versions

__all__ = ["compare_page", "compare_pages", "compare_slug", "compared_families"]


def compared_families(frame: pd.DataFrame) -> dict[str, list[str]]:
    """CLI package -> the families with handshake rows against it, when more than one."""
    by_cli: dict[str, list[str]] = {}
    for family in sorted(handshake(frame)["family"].unique()):
        if family in FAMILIES and not FAMILIES[family].standin:
            by_cli.setdefault(FAMILIES[family].cli_package, []).append(family)
    return {cli: fams for cli, fams in by_cli.items() if len(fams) > 1}


def _summary(part: pd.DataFrame) -> str:
    """What one family's SDK versions did against one CLI version."""
    if part.empty:
        return "not measured"
    works = sorted_versions(part[part["outcome"].isin(WORKS)]["sdk_version"])
    counts = part["outcome"].value_counts()
    tally = " ".join(f"{badge(str(o))}&nbsp;{int(n)}" for o, n in counts.items())
    span = f"works: {esc(works[0])}" + (f" … {esc(works[-1])}" if len(works) > 1 else "") if works else "works: none"
    return f"{span} ({len(works)} of {len(part)})<br>{tally}"


def compare_page(frame: pd.DataFrame, cli_package: str, families: list[str], image: str) -> str:
    hs = handshake(frame)
    clis = sorted_versions(hs[hs["family"].isin(families)]["cli_version"])
    lines = [*WIDE, f"# {esc(cli_package)}: the SDKs side by side", "",
             f"{len(families)} SDK families measured against the same {len(clis)} {esc(cli_package)} versions. "
             "Each band of the picture is one family; a column is one CLI version in every band.", "",
             f"![side by side]({image}){{ .cm-heatmap }}", "",
             "## Per CLI version", "", "Which of each family's measured SDK versions work with it, and how the "
             "rest ended.", "",
             sortable(["CLI", *(esc(f) for f in families)])]
    for cli in clis:
        cells = []
        for f in families:
            part = hs[(hs["family"] == f) & (hs["cli_version"] == cli)]
            link = f"../versions/{f}/{cli_slug(cli)}.md"
            cells.append(f'<td><a href="{link}">{esc(f)}</a>: {_summary(part)}</td>' if not part.empty
                         else "<td>not measured</td>")
        lines.append(f"<tr><td>{esc(cli)}</td>{''.join(cells)}</tr>")
    lines += [TABLE_END, ""]
    lines += _tolerance(frame, families)
    lines += _same_numbers(hs, families)
    return "\n".join(lines) + "\n"


def _tolerance(frame: pd.DataFrame, families: list[str]) -> list[str]:
    """Rule by rule, what each family's SDK versions did with the same mutation."""
    tol = frame[(frame["probe"] == "tolerance") & frame["family"].isin(families)]
    if tol.empty:
        return []
    lines = ["## Tolerance, rule by rule", "",
             "Each SDK version against the newest CLI it was measured compatible with, through the same shim "
             "rule; the count of SDK versions per outcome (details on the [tolerance pages](../tolerance/index.md)).",
             "", '<div class="cm-table-wrap"><table class="cm-table"><thead><tr><th>rule</th>'
             + "".join(f"<th>{esc(f)}</th>" for f in families) + "</tr></thead><tbody>"]
    for rule in sorted(tol["mutation"].unique()):
        cells = []
        for f in families:
            counts = tol[(tol["family"] == f) & (tol["mutation"] == rule)]["outcome"].value_counts()
            cells.append("<td>" + (" ".join(f"{badge(str(o))}&nbsp;{int(n)}" for o, n in counts.items())
                                   or "not measured") + "</td>")
        lines.append(f"<tr><td><code>{esc(rule)}</code></td>{''.join(cells)}</tr>")
    return [*lines, TABLE_END, ""]


def _same_numbers(hs: pd.DataFrame, families: list[str]) -> list[str]:
    """Version numbers several SDKs released: the cells where their outcomes differ. The
    packages are separate artifacts; a shared number promises nothing, this shows it."""
    per = {f: hs[hs["family"] == f] for f in families}
    shared = sorted_versions(list(set.intersection(*(set(p["sdk_version"]) for p in per.values()))))
    lines = ["## Same version number, different behaviour", ""]
    if not shared:
        return [*lines, "No SDK version number was measured in more than one family.", ""]
    lines += [f"SDK version numbers measured in every family: {', '.join(esc(v) for v in shared)}. Cells where the "
              "families' outcomes differ against the same CLI:", "",
              sortable(["SDK", "CLI", *(esc(f) for f in families)])]
    differ = 0
    cells_of = {f: {(str(r["sdk_version"]), str(r["cli_version"])): (str(r["outcome"]), r["error_message"])
                    for r in p[["sdk_version", "cli_version", "outcome", "error_message"]].to_dict("records")}
                for f, p in per.items()}
    for sdk in shared:
        for cli in sorted_versions(hs["cli_version"]):
            found = {f: cells_of[f].get((sdk, cli)) for f in families}
            if any(r is None for r in found.values()):
                continue
            outcomes = {f: r[0] for f, r in found.items() if r is not None}
            if len(set(outcomes.values())) == 1:
                continue
            differ += 1
            cells = "".join(
                f'<td class="cm-msg"><a href="../versions/{f}/{sdk_slug(sdk)}.md">{badge(outcomes[f])}</a> '
                f'{esc(esc_raw(r[1])[:120])}</td>' for f, r in found.items() if r is not None)
            lines.append(f"<tr><td>{esc(sdk)}</td><td>{esc(cli)}</td>{cells}</tr>")
    lines += [TABLE_END, "", f"{differ} cells differ.", ""]
    return lines


def compare_slug(cli_package: str) -> str:
    return cli_package.strip("@").replace("/", "-")


def compare_pages(frame: pd.DataFrame) -> dict[str, str]:
    """Relative page path -> text; build.py draws the pictures they show."""
    return {f"matrix/compare-{compare_slug(cli)}.md":
            compare_page(frame, cli, fams, f"../assets/compare-{compare_slug(cli)}.png")
            for cli, fams in compared_families(frame).items()}
