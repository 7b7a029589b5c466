"""Site pages for families whose other side is our stand-in (Cosmo): the tolerance matrix
(versions x checks), the identity checks, the strict-server findings, each promise of
Cosmo's additive-evolution design next to what every release does, and one page per release with the evidence and
the stand-in's log of every check."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from matrix.families.cosmo.checks import CHECKS, SET_PREFIX, Check, check_for_set, declared_sets, set_check
from matrix.families.cosmo.probe import PATHS
from matrix.families.registry import FAMILIES
from matrix.markup import TABLE_END, WIDE, badge, embed_badge, esc, esc_raw, flaky_mark, sortable
from matrix.store.dataset import Sources
from matrix.store.results import Releases
from matrix.versions import sort_by_version, sorted_versions

__all__ = ["STANDIN_CHECKS", "cosmo_pages", "standin_frame"]

STANDIN_CHECKS = [c.name for c in CHECKS]
_LOG_LINES = 80
_MAX_TEXT = 3000


def standin_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of stand-in families, for checks that still exist (named, or a closed set's)."""
    families = [f for f, fam in FAMILIES.items() if fam.standin]
    known = frame["mutation"].isin(STANDIN_CHECKS) | frame["mutation"].str.startswith(SET_PREFIX)
    return frame[frame["family"].isin(families) & known]


def checks_in(sub: pd.DataFrame, probe: str | None = None) -> tuple[Check, ...]:
    """The named checks, then the closed-set checks measured in ``sub``."""
    sets = tuple(set_check(m) for m in sorted(set(sub["mutation"])) if str(m).startswith(SET_PREFIX))
    return tuple(c for c in (*CHECKS, *sets) if probe is None or c.probe == probe)


def _closed_sets(sub: pd.DataFrame, family: str, own_page: bool = False) -> list[str]:
    """Every release's closed sets in what the server sends it, as its agent read them from its
    own models, and the check that probes each."""
    rows = list(sub.itertuples())
    lines = ["| SDK | where | field | kind | values | an unknown value, by the release's own type | probed by |",
             "|---|---|---|---|---|---|---|"]
    for sdk in sorted_versions(sub["sdk_version"]):
        sets = declared_sets(rows, family, sdk)
        for e in sets:
            check = check_for_set(e)
            target = f"#{_anchor(check)}" if own_page and check else _version_link(family, sdk, _anchor(check or ""))
            probe = f"[`{check}`]({target})" if check else "not probed (the stand-in has no message that carries it)"
            own = {"member": "a member carrying the raw value", "refused": "refused (ValueError)",
                   "plain str": "a plain str (the field is `Enum | str`)", "named member": "a named member"}.get(
                str(e.get("unknown")), "decided by the model (Literal or tag)")
            values = ", ".join(map(str, e.get("values") or []))
            lines.append(f"| {esc(sdk)} | {esc(e.get('where'))} `{esc(e.get('name'))}` | `{esc(e.get('path'))}` | "
                         f"{esc(e.get('kind'))} | {esc(values)} | {esc(own)} | {probe} |")
    return [*lines, ""] if len(lines) > 2 else ["No release's models were read yet.", ""]



def _detail(row: Any) -> dict[str, Any]:
    return row.detail if isinstance(row.detail, dict) else {}


def _short(value: Any) -> str:
    if isinstance(value, dict) and "kind" in value:
        member = "member" if value.get("kind") == "enum" else f"plain {value.get('kind')}"
        listed = "" if value.get("kind") != "enum" else (" (in the list)" if value.get("in_list") else
                                                          " (not in the list)")
        return f"{member} {value.get('value')!r}{listed}"
    return json.dumps(value, default=str)[:200]


def summary(row: Any) -> str:
    """One line: what the release did in this check."""
    d = _detail(row)
    message = str(esc_raw(row.error_message))
    if message.strip():
        return message.strip().splitlines()[0][:300]
    delivered = d.get("delivered") or d.get("unknown_event")
    if isinstance(delivered, dict):
        parts = [str(delivered.get("class"))]
        if delivered.get("raw_type"):
            parts.append(f"raw_type={delivered['raw_type']!r}")
        if isinstance(delivered.get("code"), dict):
            parts.append(f"code: {_short(delivered['code'])}")
        if delivered.get("new_field"):
            parts.append(f"new field kept: {delivered['new_field']!r}")
        return "delivered as " + ", ".join(parts)
    unknown = d.get("unknown")
    if isinstance(unknown, dict) and unknown.get("ok"):
        return f"returned a {_short(unknown.get('value'))}"
    if d.get("sent_sdk"):
        return f"sent sdk={json.dumps(d['sent_sdk'][0])}"
    if d.get("requests"):
        return f"{len(d['requests'])} REST calls, each with the header"
    if d.get("exports"):
        e = d["exports"]
        return f"SDK_NAME={e.get('SDK_NAME')!r}, SDK_VERSION={e.get('SDK_VERSION')!r}"
    if d.get("raised"):
        r = d["raised"]
        return f"raised {r.get('type')} (code {r.get('code')!r})"
    if d.get("sdk_raised"):
        return f"{len(d['sdk_raised'])} SDK-raised *ErrorCode enums, each refuses an unknown value"
    if "rejected" in d:
        return "nothing beyond the published contract"
    return str(d.get("note", ""))


def _version_link(family: str, sdk: str, anchor: str = "") -> str:
    return f"{family}/sdk-{sdk}.md{'#' + anchor if anchor else ''}"


def _anchor(check: str) -> str:
    return check.replace(".", "-")


def _grid(sub: pd.DataFrame, family: str, checks: tuple[Check, ...]) -> list[str]:
    lines = [sortable(["SDK", *(f'<th title="{esc(c.title)}">{esc(c.name)}</th>' for c in checks)], "cm-tolerance")]
    for sdk in sorted_versions(sub["sdk_version"]):
        part = {str(r.mutation): r for r in sub[sub["sdk_version"] == sdk].itertuples()}
        cells = []
        for c in checks:
            r = part.get(c.name)
            if r is None:
                cells.append("<td>·</td>")
                continue
            cells.append(f'<td data-sort="{esc(r.outcome)}" title="{esc(summary(r))}">'
                         f'<a href="{_version_link(family, sdk, _anchor(c.name))}">{badge(str(r.outcome))}</a>'
                         f"{flaky_mark(r)}</td>")
        lines.append(f'<tr><td><a href="{_version_link(family, sdk)}">{esc(sdk)}</a></td>{"".join(cells)}</tr>')
    lines += [TABLE_END, ""]
    return lines


def _paths(sub: pd.DataFrame, family: str, releases: dict[str, str | None]) -> list[str]:
    lines = ["| SDK | released | probed through | client class |", "|---|---|---|---|"]
    used: set[str] = set()
    for sdk in sorted_versions(sub["sdk_version"]):
        part = sub[sub["sdk_version"] == sdk]
        paths = {str(_detail(r).get("path") or "") for r in part.itertuples()} - {""}
        clients = {str((_detail(r).get("api") or {}).get("client") or "") for r in part.itertuples()} - {""}
        used |= paths
        lines.append(f"| [{esc(sdk)}]({_version_link(family, sdk)}) | {esc((releases.get(sdk) or '?')[:10])} | "
                     f"{' '.join(f'`{esc(p)}`' for p in sorted(paths)) or 'not measured'} | "
                     f"{' '.join(f'`{esc(c)}`' for c in sorted(clients)) or '-'} |")
    lines.append("")
    lines += [f"- `{esc(p)}`: {esc(PATHS[p])}." for p in sorted(used) if p in PATHS]
    return [*lines, ""]


def _strict_findings(sub: pd.DataFrame, family: str) -> list[str]:
    lines = [sortable(["SDK", "strict.session-start", "session-config: refused with a 422 for",
                       "what the application was told", "strict.data-channel", "data channel: frames dropped for"])]
    for sdk in sorted_versions(sub["sdk_version"]):
        part = {str(r.mutation): r for r in sub[sub["sdk_version"] == sdk].itertuples()}
        start, channel = part.get("strict.session-start"), part.get("strict.data-channel")
        if start is None and channel is None:
            continue

        def mark(row: Any, check: str, sdk: str = sdk) -> str:
            if row is None:
                return "·"
            return f'<a href="{_version_link(family, sdk, _anchor(check))}">{badge(str(row.outcome))}</a>'

        def keys(row: Any) -> str:
            if row is None or row.outcome not in ("kept", "broken"):
                return ""
            found = _detail(row).get("rejected") or []
            return "<br>".join(f"<code>{esc(f['message'])}</code>: {esc(', '.join(f['unknown']) or f['reason'])}"
                               for f in found) or "nothing"

        told = _detail(start).get("application_told", "") if start is not None else ""
        told_cell = esc(told[:300])
        lines.append(f"<tr><td>{esc(sdk)}</td><td>{mark(start, 'strict.session-start')}</td><td>{keys(start)}</td>"
                     f'<td class="cm-msg">{told_cell}</td><td>{mark(channel, "strict.data-channel")}</td>'
                     f"<td>{keys(channel)}</td></tr>")
    return [*lines, TABLE_END, ""]


def _promises(sub: pd.DataFrame, family: str) -> list[str]:
    lines = ["## Promise by promise", "",
             "Each check: what Cosmo's additive-evolution design promises, how the probe looks, and what every "
             "release did.", ""]
    for c in checks_in(sub):
        part = sort_by_version(sub[sub["mutation"] == c.name], "sdk_version")
        if part.empty:
            continue
        lines += [f"### {esc(c.title)} {{ #{_anchor(c.name)} }}", "", f"> {esc(c.promise)}", "",
                  f"How: {esc(c.how)} (check `{c.name}`)", "", "| SDK | outcome | what it did |", "|---|---|---|"]
        for r in part.itertuples():
            lines.append(f"| [{esc(r.sdk_version)}]({_version_link(family, str(r.sdk_version), _anchor(c.name))}) | "
                         f"{badge(str(r.outcome))} | {esc(summary(r)).replace('|', '&#124;')} |")
        lines.append("")
    return lines


def family_page(frame: pd.DataFrame, family: str, releases: dict[str, str | None]) -> str:
    fam = FAMILIES[family]
    sub = frame[frame["family"] == family]
    n = len(sorted_versions(sub["sdk_version"]))
    lines = [*WIDE, f"# {family}", "",
             f"{esc(fam.description)}: {n} releases × {len(checks_in(sub))} checks, {len(sub)} cells, each measured by "
             f"running the release against the stand-in (contract `{esc(fam.standin)}`, in "
             "`matrix/families/cosmo/contract.py`), started for that check alone. The stand-in is as strict as "
             "Cosmo's design says the real server is; for checks about something else it records what a strict "
             "server refuses and accepts it anyway, so a release that the strict server refuses is still measured "
             "(the refusals are the strictness checks).", "",
             f"![{family} checks]({'../assets/heatmap-' + family + '.png'}){{ .cm-heatmap }}", "",
             "Letters: S surfaced, I ignored, D downgraded, X lost, F fatal, K kept, B broken, - not applicable, "
             "H hang, C crashed, ! harness error.", "",
             "## How each release was probed", ""]
    lines += _paths(sub, family, releases)
    lines += ["## Tolerance", "", "Unknown message types, extra fields, malformed frames and unknown values of every "
              "server-authored enum. Hover a cell for what the release did; click it for the evidence.", ""]
    lines += _grid(sub, family, checks_in(sub, "tolerance"))
    lines += ["### Closed sets in what the server sends", "",
              "Read by the agent from each release's own models (the decoder's table of frame types, and what its "
              "REST calls return): every enum, `Literal` and discriminated-union tag a server-authored value lands "
              "in. The design names four such enums; every closed set found is probed the same way, with a value "
              "no release knows, and the `set.` checks above are the ones beyond those four.", ""]
    lines += _closed_sets(sub, family)
    lines += ["## Identity", "", "What every release says about itself, on the wire and in its API, and whether "
              "its own error codes stay closed.", ""]
    lines += _grid(sub, family, checks_in(sub, "identity"))
    lines += ["## Strict-server findings", "", "Keys beyond the published contract that a strict server refuses: "
              "findings about that release, not harness errors.", ""]
    lines += _strict_findings(sub, family)
    lines += _promises(sub, family)
    return "\n".join(lines) + "\n"


def _log(sources: Sources, rel: str | None) -> str:
    if not rel:
        return "<p>No stand-in log for this check.</p>"
    try:
        entries = [json.loads(x) for x in (sources.evidence(rel) or "").splitlines() if x.strip()]
    except ValueError:
        entries = []
    if not entries:
        return "<p>The stand-in log of this check is missing.</p>"
    shown = []
    for e in entries[:_LOG_LINES]:
        e = dict(e)
        if isinstance(e.get("headers"), dict):  # the header that matters has its own field
            e.pop("headers")
        shown.append(json.dumps(e, default=str)[:_MAX_TEXT])
    more = f"\n… {len(entries) - _LOG_LINES} more entries" if len(entries) > _LOG_LINES else ""
    return f'<pre class="cm-err">{esc(chr(10).join(shown) + more)}</pre>'


def version_page(frame: pd.DataFrame, family: str, sdk: str, sources: Sources) -> str:
    sub = {str(r.mutation): r for r in frame[(frame["family"] == family) & (frame["sdk_version"] == sdk)].itertuples()}
    fam = FAMILIES[family]
    paths = sorted({str(_detail(r).get("path") or "") for r in sub.values()} - {""})
    lines = [f"# {esc(fam.sdk_package)} {esc(sdk)}", "",
             f"Probed through `{esc(', '.join(paths) or '?')}`: "
             f"{esc('; '.join(PATHS.get(p, '') for p in paths))}.", "",
             "| check | outcome | what it did |", "|---|---|---|"]
    checks = checks_in(frame[(frame["family"] == family) & (frame["sdk_version"] == sdk)])
    for c in checks:
        r = sub.get(c.name)
        if r is not None:
            lines.append(f"| [{c.name}](#{_anchor(c.name)}) | {badge(str(r.outcome))} | "
                         f"{esc(summary(r)).replace('|', '&#124;')} |")
    lines.append("")
    lines += embed_badge(family, "sdk", sdk, f"{fam.sdk_package} {sdk}", f"cosmo/{family}/sdk-{sdk}/")
    lines += ["## Closed sets in what the server sends", "", *_closed_sets(
        frame[(frame["family"] == family) & (frame["sdk_version"] == sdk)], family, own_page=True)]
    for c in checks:
        r = sub.get(c.name)
        if r is None:
            continue
        d = _detail(r)
        evidence = {k: v for k, v in d.items() if k not in ("standin_log", "path", "path_text", "agent_stderr_tail",
                                                            "traceback")}
        lines += [f"## {esc(c.title)} {{ #{_anchor(c.name)} }}", "", f"{badge(str(r.outcome))} · `{c.name}` · "
                  f"{r.seconds} s", "", f"> {esc(c.promise)}", ""]
        if str(esc_raw(r.error_message)).strip():
            lines += [f'<pre class="cm-err">{esc(esc_raw(r.error_message))}</pre>', ""]
        lines += ["<details><summary>Evidence</summary>", "",
                  f'<pre class="cm-err">{esc(json.dumps(evidence, indent=1, default=str)[:6000])}</pre>', "",
                  "</details>", "", "<details><summary>What the stand-in received and sent</summary>", "",
                  _log(sources, d.get("standin_log")), "", "</details>", ""]
    return "\n".join(lines) + "\n"


def cosmo_pages(frame: pd.DataFrame, sources: Sources, releases: Releases, family: str) -> dict[str, str]:
    """Relative path -> page text: ``family``'s pages, and the index of every stand-in family's
    (the same page whichever family writes it)."""
    sub = standin_frame(frame)
    families = sorted(sub["family"].unique())
    pages: dict[str, str] = {"cosmo/index.md": "# Cosmo\n\n" + ("\n".join(
        f"- [{f}]({f}.md): {esc(FAMILIES[f].description)}" for f in families) or
        "No Cosmo results yet: run `compat-matrix run --family cosmo-python`.") + "\n"}
    for family in [f for f in families if f == family]:
        part = sub[sub["family"] == family]
        pages[f"cosmo/{family}.md"] = family_page(part, family, releases.get(family, {}).get("sdk", {}))
        for sdk in sorted_versions(part["sdk_version"]):
            pages[f"cosmo/{family}/sdk-{sdk}.md"] = version_page(part, family, sdk, sources)
    return pages
