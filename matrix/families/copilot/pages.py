"""Site pages for the tolerance checks: a matrix per family (SDK versions x rules) and one
page per cell with the transcript the shim recorded (what the SDK sent, what the CLI
answered, what the shim injected)."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from matrix.families.copilot.shim import RULES
from matrix.families.registry import FAMILIES
from matrix.markup import TABLE_END, WIDE, badge, esc, esc_raw, flaky_mark, sortable
from matrix.store.dataset import Sources
from matrix.versions import sort_by_version, sorted_versions

__all__ = ["tolerance_pages"]

_MAX_MESSAGE = 4000


def _cell_slug(sdk: str, rule: str) -> str:
    return f"sdk-{sdk}-{rule}"


def matrix_page(frame: pd.DataFrame, family: str) -> str:
    sub = frame[(frame["probe"] == "tolerance") & (frame["family"] == family)]
    rules = [r for r in RULES if r in set(sub["mutation"])]
    lines = [*WIDE, f"# {family}: additive tolerance", "",
             "Each SDK version is started against the newest CLI version it was measured to work with "
             "(`compatible`, or `degraded` only by what `stop()` left running); a transparent shim between them "
             "applies one rule. A cell links to the transcript of that run.", "",
             "| rule | category | what the shim does |", "|---|---|---|"]
    lines += [f"| `{r}` | {RULES[r].category} | {esc(RULES[r].description)} |" for r in rules]
    lines += ["", sortable(["SDK", "probed against CLI", *(esc(r) for r in rules)], "cm-tolerance")]
    for sdk in sorted_versions(sub["sdk_version"]):
        part = sub[sub["sdk_version"] == sdk]
        by_rule = {str(r.mutation): r for r in part.itertuples()}
        cli = esc(part["cli_version"].iloc[0])
        cells = []
        for rule in rules:
            r = by_rule.get(rule)
            if r is None:
                cells.append("<td>·</td>")
                continue
            link = f"{family}/{_cell_slug(sdk, rule)}.md"
            cells.append(f'<td data-sort="{esc(r.outcome)}"><a href="{link}">{badge(str(r.outcome))}</a>'
                         f"{flaky_mark(r)}</td>")
        lines.append(f"<tr><td>{esc(sdk)}</td><td>{cli}</td>{''.join(cells)}</tr>")
    lines += [TABLE_END, ""]
    return "\n".join(lines)


def contract_section(frame: pd.DataFrame, family: str) -> str:
    """The failure contract of the Copilot SDK's version negotiation design, on the pairs whose
    handshake failed as it should."""
    sub = sort_by_version(frame[(frame["probe"] == "contract") & (frame["family"] == family)], "sdk_version")
    if sub.empty:
        return ""

    def mark(ok: Any) -> str:
        return "yes" if ok is True else "<b>no</b>" if ok is False else "?"

    lines = ["## Failure contract", "",
             "The Copilot SDK's version negotiation design promises that after a failed handshake the SDK "
             "terminates the CLI, rejects calls that were already queued with the same error, and leaves no "
             "files behind. Each SDK version is started "
             "against the newest CLI it was measured `refused` or `launch-failed` with, with a `ping` queued "
             "behind `start()`; `stop()` is not called.", "",
             '<table class="cm-table"><thead><tr><th>SDK</th><th>CLI</th><th>how start failed</th>'
             "<th>CLI terminated by the SDK</th><th>queued call rejected promptly</th><th>no files written</th>"
             "<th>queued call's answer</th></tr></thead><tbody>"]
    for r in sub.itertuples():
        c: dict[str, Any] = (r.detail or {}).get("contract", {}) if isinstance(r.detail, dict) else {}
        queued = c.get("queued_call") or {}
        answer = "resolved" if queued.get("ok") else (esc_raw(queued.get("error")).splitlines() or [""])[0]
        settled = c.get("queued_settled_after_start_s")
        files = ", ".join(c.get("files_written") or [])
        gone = c.get("cli_gone_after_s")
        lines.append(
            f"<tr><td>{esc(r.sdk_version)}</td><td>{esc(r.cli_version)}</td><td>{badge(str(r.outcome))}</td>"
            f"<td>{mark(c.get('cli_terminated'))}"
            f"{f' (gone {gone:.1f} s after start failed)' if isinstance(gone, (int, float)) else ''}</td>"
            f"<td>{mark(c.get('queued_call_rejected'))}"
            f"{f' ({settled:.2f} s after start failed)' if isinstance(settled, (int, float)) else ''}</td>"
            f"<td>{mark(c.get('no_files_written'))}{f' ({esc(files)})' if files else ''}</td>"
            f'<td><pre class="cm-err">{esc(answer[:400])}</pre></td></tr>')
    lines += ["</tbody></table>", ""]
    return "\n".join(lines)


def _transcript(text: str | None) -> str:
    try:
        entries = [json.loads(line) for line in (text or "").splitlines() if line.strip()]
    except ValueError:
        entries = []
    if not entries:
        return "<p>No transcript was recorded for this cell.</p>"
    rows = ['<table class="cm-table cm-transcript"><thead><tr><th>t (s)</th><th>direction</th>'
            "<th>message</th></tr></thead><tbody>"]
    for e in entries:
        body = e.get("msg", e.get("raw", ""))
        text = json.dumps(body, indent=1, default=str) if not isinstance(body, str) else body
        if len(text) > _MAX_MESSAGE:
            text = text[:_MAX_MESSAGE] + f"\n… ({len(text) - _MAX_MESSAGE} more characters)"
        direction = str(e.get("dir", ""))
        rows.append(f'<tr class="cm-dir-{esc(direction.replace(">", ""))}"><td>{esc(e.get("t"))}</td>'
                    f"<td>{esc(direction)}{' (' + esc(e['note']) + ')' if e.get('note') else ''}</td>"
                    f'<td><pre class="cm-err">{esc(text)}</pre></td></tr>')
    rows.append("</tbody></table>")
    return "\n".join(rows)


def cell_page(row: Any, sources: Sources) -> str:
    detail: dict[str, Any] = row.detail if isinstance(row.detail, dict) else {}
    rule = RULES.get(str(row.mutation))
    lines = [f"# {esc(row.sdk_version)} × `{esc(row.mutation)}`", "",
             f"{esc(rule.description) if rule else ''}", "",
             "| | |", "|---|---|",
             f"| outcome | {badge(str(row.outcome))} |",
             f"| SDK / CLI | {esc(row.sdk_version)} / {esc(row.cli_version)} |",
             f"| what the shim applied | {esc('; '.join(detail.get('applied') or []) or 'nothing')} |", ""]
    message = esc_raw(row.error_message)
    if message:
        lines += ["## Error", "", f'<pre class="cm-err">{esc(message)}</pre>', ""]
    evidence = detail.get("loop_errors") or detail.get("evidence") or []
    if evidence:
        lines += ["## Evidence the SDK left (asyncio exception handler, logs)", ""]
        lines += [f'<pre class="cm-err">{esc(e)}</pre>' for e in evidence[:5]]
        lines.append("")
    observed = detail.get("observed")
    if observed:
        lines += ["## What the application was handed", "",
                  f'<pre class="cm-err">{esc(json.dumps(observed, indent=1, default=str)[:6000])}</pre>', ""]
    lines += ["## Transcript", "", "`sdk->cli`: what the SDK sent; `cli->sdk`: what the CLI answered; "
              "`shim->sdk`: what the shim injected or changed.", ""]
    transcript = detail.get("transcript")
    lines.append(_transcript(sources.evidence(transcript)) if transcript else "<p>No transcript for this cell.</p>")
    return "\n".join(lines) + "\n"


def tolerance_pages(frame: pd.DataFrame, sources: Sources, family: str) -> dict[str, str]:
    """Relative path -> page text: ``family``'s tolerance pages, and the index of every family's
    (the same page whichever family writes it)."""
    pages: dict[str, str] = {}
    standin = [f for f, fam in FAMILIES.items() if fam.standin]  # their pages: cosmo_pages
    tol = frame[(frame["probe"] == "tolerance") & ~frame["family"].isin(standin)]
    families = sorted(tol["family"].unique())
    pages["tolerance/index.md"] = "# Additive tolerance\n\n" + "\n".join(
        f"- [{f}]({f}.md)" for f in families) + ("\n" if families else "No tolerance checks measured yet.\n")
    for family in [f for f in families if f == family]:
        pages[f"tolerance/{family}.md"] = matrix_page(frame, family) + "\n" + contract_section(frame, family)
        for row in sort_by_version(tol[tol["family"] == family], "sdk_version").itertuples():
            pages[f"tolerance/{family}/{_cell_slug(str(row.sdk_version), str(row.mutation))}.md"] = \
                cell_page(row, sources)
    return pages
