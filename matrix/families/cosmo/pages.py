"""Site pages for families whose other side is our stand-in (Cosmo): the tolerance matrix
(versions x checks), the identity checks, the strict-server findings, each promise of
Cosmo's additive-evolution design next to what every release does, and one page per release with the evidence and
the stand-in's log of every check. Each page is plain data (``*_page_data``) rendered by its
template in ``templates/``, whose autoescaping keeps what a release or its agent reported text
on our pages."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pandas as pd

from matrix.families.base import Family, Picture, SiteView
from matrix.families.cosmo.checks import CHECKS, COSMO_RULES, SET_PREFIX, Check, check_for_set, declared_sets, set_check
from matrix.families.cosmo.probe import PATHS
from matrix.markup import embed_badge, esc_raw
from matrix.model import Outcome
from matrix.render import renderer
from matrix.store.dataset import Sources
from matrix.versions import sort_by_version, sorted_versions

__all__ = ["STANDIN_CHECKS", "closed_set_rows", "cosmo_pages", "cosmo_pictures", "family_page", "family_page_data",
           "standin_frame", "version_page", "version_page_data"]

STANDIN_CHECKS = [c.name for c in CHECKS]
_LOG_LINES = 80
_MAX_TEXT = 3000

render = renderer(__package__)


def standin_frame(frame: pd.DataFrame, families: list[str]) -> pd.DataFrame:
    """The rows of ``families``, for checks that still exist (named, or a closed set's)."""
    known = frame["mutation"].isin(STANDIN_CHECKS) | frame["mutation"].str.startswith(SET_PREFIX)
    return frame[frame["family"].isin(families) & known]


def checks_in(sub: pd.DataFrame, probe: str | None = None) -> tuple[Check, ...]:
    """The named checks, then the closed-set checks measured in ``sub``."""
    sets = tuple(set_check(m) for m in sorted(set(sub["mutation"])) if str(m).startswith(SET_PREFIX))
    return tuple(c for c in (*CHECKS, *sets) if probe is None or c.probe == probe)


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


_UNKNOWN_VALUE = {"member": "a member carrying the raw value", "refused": "refused (ValueError)",
                  "plain str": "a plain str (the field is `Enum | str`)", "named member": "a named member"}


@dataclass(frozen=True)
class ClosedSet:
    """One closed set a release's models declare in what the server sends, as its agent read them."""

    sdk: str
    where: str
    name: str
    path: str
    kind: str
    values: str
    unknown: str  # what the release makes of a value the set does not name
    check: str | None  # the check that probes it; None: the stand-in has no message that carries it
    link: str  # to that check's evidence


def _closed_set(e: dict[str, Any], family: str, sdk: str, own_page: bool) -> ClosedSet:
    check = check_for_set(e)
    link = f"#{_anchor(check)}" if own_page and check else _version_link(family, sdk, _anchor(check or ""))
    return ClosedSet(sdk=sdk, where=esc_raw(e.get("where")), name=esc_raw(e.get("name")), path=esc_raw(e.get("path")),
                     kind=esc_raw(e.get("kind")), values=", ".join(map(str, e.get("values") or [])),
                     unknown=_UNKNOWN_VALUE.get(str(e.get("unknown")), "decided by the model (Literal or tag)"),
                     check=check, link=link)


def closed_set_rows(sub: pd.DataFrame, family: str, own_page: bool = False) -> list[ClosedSet]:
    """Every release's closed sets in what the server sends, by release; ``own_page``: for the
    release's own page, where each check's evidence is an anchor away."""
    rows = list(sub.itertuples())
    return [_closed_set(e, family, sdk, own_page)
            for sdk in sorted_versions(sub["sdk_version"]) for e in declared_sets(rows, family, sdk)]


@dataclass(frozen=True)
class GridCheck:
    name: str
    title: str


@dataclass(frozen=True)
class GridCell:
    """One check of one release; ``flaky``, ``repeats`` and ``stale`` are what the flaky and
    stale marks read."""

    outcome: str
    summary: str  # what the release did, one line
    link: str  # to its evidence
    flaky: bool
    repeats: list[str]
    stale: str


@dataclass(frozen=True)
class GridRow:
    sdk: str
    link: str  # to the release's page
    cells: list[GridCell | None]  # by the grid's checks; None: not measured


@dataclass(frozen=True)
class Grid:
    checks: list[GridCheck]
    rows: list[GridRow]


def _grid_cell(r: Any, family: str, sdk: str, check: str) -> GridCell:
    return GridCell(outcome=str(r.outcome), summary=summary(r), link=_version_link(family, sdk, _anchor(check)),
                    flaky=r.flaky is True, repeats=[str(o) for o in (r.repeats or [])],
                    stale=COSMO_RULES.note(r))


def grid_data(sub: pd.DataFrame, family: str, checks: tuple[Check, ...]) -> Grid:
    rows = []
    for sdk in sorted_versions(sub["sdk_version"]):
        part = {str(r.mutation): r for r in sub[sub["sdk_version"] == sdk].itertuples()}
        rows.append(GridRow(sdk=sdk, link=_version_link(family, sdk),
                            cells=[_grid_cell(part[c.name], family, sdk, c.name) if c.name in part else None
                                   for c in checks]))
    return Grid(checks=[GridCheck(c.name, c.title) for c in checks], rows=rows)


@dataclass(frozen=True)
class ProbedPath:
    """How one release was driven."""

    sdk: str
    link: str  # to the release's page
    released: str  # its date, "?" when unknown
    paths: list[str]
    clients: list[str]  # the client classes it was driven through


def _probed_path(part: pd.DataFrame, family: str, sdk: str, releases: dict[str, str | None]) -> ProbedPath:
    paths = {str(_detail(r).get("path") or "") for r in part.itertuples()} - {""}
    clients = {str((_detail(r).get("api") or {}).get("client") or "") for r in part.itertuples()} - {""}
    return ProbedPath(sdk=sdk, link=_version_link(family, sdk), released=(releases.get(sdk) or "?")[:10],
                      paths=sorted(paths), clients=sorted(clients))


@dataclass(frozen=True)
class Rejection:
    """What a strict server refuses in one message of a release."""

    message: str
    keys: str  # the unknown keys, or why it refused


@dataclass(frozen=True)
class StrictCheck:
    outcome: str
    link: str  # to its evidence
    rejected: list[Rejection] | None  # None: the outcome says nothing about keys (not kept, not broken)


@dataclass(frozen=True)
class StrictRow:
    sdk: str
    session_start: StrictCheck | None  # None: not measured
    told: str  # what the application was told when its session-config was refused
    data_channel: StrictCheck | None


def _strict_check(row: Any, family: str, sdk: str, check: str) -> StrictCheck | None:
    if row is None:
        return None
    rejected = None
    if row.outcome in (Outcome.KEPT, Outcome.BROKEN):
        rejected = [Rejection(str(f["message"]), ", ".join(f["unknown"]) or str(f["reason"]))
                    for f in _detail(row).get("rejected") or []]
    return StrictCheck(outcome=str(row.outcome), link=_version_link(family, sdk, _anchor(check)), rejected=rejected)


def strict_rows(sub: pd.DataFrame, family: str) -> list[StrictRow]:
    """The strict-server findings of every release measured by either strictness check."""
    rows = []
    for sdk in sorted_versions(sub["sdk_version"]):
        part = {str(r.mutation): r for r in sub[sub["sdk_version"] == sdk].itertuples()}
        start, channel = part.get("strict.session-start"), part.get("strict.data-channel")
        if start is None and channel is None:
            continue
        told = str(_detail(start).get("application_told", "")) if start is not None else ""
        rows.append(StrictRow(sdk=sdk, session_start=_strict_check(start, family, sdk, "strict.session-start"),
                              told=told[:300], data_channel=_strict_check(channel, family, sdk, "strict.data-channel")))
    return rows


@dataclass(frozen=True)
class Verdict:
    """What one release did in one check."""

    check: str
    anchor: str
    sdk: str
    link: str  # to its evidence
    outcome: str
    summary: str


@dataclass(frozen=True)
class Promise:
    """One check: the promise of the design, how the probe looks, and what every release did."""

    name: str
    anchor: str
    title: str
    promise: str
    how: str
    verdicts: list[Verdict]


def _verdict(r: Any, family: str, check: str) -> Verdict:
    sdk = str(r.sdk_version)
    return Verdict(check=check, anchor=_anchor(check), sdk=esc_raw(r.sdk_version),
                   link=_version_link(family, sdk, _anchor(check)), outcome=str(r.outcome), summary=summary(r))


def promises(sub: pd.DataFrame, family: str) -> list[Promise]:
    found = []
    for c in checks_in(sub):
        part = sort_by_version(sub[sub["mutation"] == c.name], "sdk_version")
        if not part.empty:
            found.append(Promise(name=c.name, anchor=_anchor(c.name), title=c.title, promise=c.promise, how=c.how,
                                 verdicts=[_verdict(r, family, c.name) for r in part.itertuples()]))
    return found


@dataclass(frozen=True)
class FamilyPage:
    family: str
    description: str
    releases: int
    checks: int
    cells: int
    contract: str  # the stand-in's
    probed: list[ProbedPath]
    paths: list[tuple[str, str]]  # every path some release was probed through, and what it is
    tolerance: Grid
    closed_sets: list[ClosedSet]
    identity: Grid
    strict: list[StrictRow]
    promises: list[Promise]


def family_page_data(frame: pd.DataFrame, fam: Family, releases: dict[str, str | None]) -> FamilyPage:
    """``fam``'s page from its rows; ``releases``: SDK version -> release date."""
    family = fam.name
    sub = frame[frame["family"] == family]
    probed = [_probed_path(sub[sub["sdk_version"] == sdk], family, sdk, releases)
              for sdk in sorted_versions(sub["sdk_version"])]
    used = sorted({p for row in probed for p in row.paths})
    return FamilyPage(family=family, description=fam.description, releases=len(probed), checks=len(checks_in(sub)),
                      cells=len(sub), contract=esc_raw(fam.standin), probed=probed,
                      paths=[(p, PATHS[p]) for p in used if p in PATHS],
                      tolerance=grid_data(sub, family, checks_in(sub, "tolerance")),
                      closed_sets=closed_set_rows(sub, family),
                      identity=grid_data(sub, family, checks_in(sub, "identity")),
                      strict=strict_rows(sub, family), promises=promises(sub, family))


def family_page(frame: pd.DataFrame, fam: Family, releases: dict[str, str | None]) -> str:
    return render("family.md", page=family_page_data(frame, fam, releases))


@dataclass(frozen=True)
class StandinLog:
    text: str  # what the stand-in received and sent, one JSON entry a line ("" without any)
    absent: str  # why there is none


def standin_log(sources: Sources, rel: str | None) -> StandinLog:
    if not rel:
        return StandinLog("", "No stand-in log for this check.")
    try:
        entries = [json.loads(x) for x in (sources.evidence(rel) or "").splitlines() if x.strip()]
    except ValueError:
        entries = []
    if not entries:
        return StandinLog("", "The stand-in log of this check is missing.")
    shown = []
    for e in entries[:_LOG_LINES]:
        e = dict(e)
        if isinstance(e.get("headers"), dict):  # the header that matters has its own field
            e.pop("headers")
        shown.append(json.dumps(e, default=str)[:_MAX_TEXT])
    more = f"\n… {len(entries) - _LOG_LINES} more entries" if len(entries) > _LOG_LINES else ""
    return StandinLog("\n".join(shown) + more, "")


@dataclass(frozen=True)
class CheckEvidence:
    """One check on a release's page, with everything it left behind."""

    name: str
    anchor: str
    title: str
    promise: str
    outcome: str
    seconds: str
    error: str
    evidence: str  # the row's detail as JSON, less what has its own place
    log: StandinLog


_NOT_EVIDENCE = ("standin_log", "path", "path_text", "agent_stderr_tail", "traceback")


def _check_evidence(c: Check, r: Any, sources: Sources) -> CheckEvidence:
    d = _detail(r)
    evidence = {k: v for k, v in d.items() if k not in _NOT_EVIDENCE}
    error = esc_raw(r.error_message)
    return CheckEvidence(name=c.name, anchor=_anchor(c.name), title=c.title, promise=c.promise, outcome=str(r.outcome),
                         seconds=f"{r.seconds}", error=error if error.strip() else "",
                         evidence=json.dumps(evidence, indent=1, default=str)[:6000],
                         log=standin_log(sources, d.get("standin_log")))


@dataclass(frozen=True)
class VersionPage:
    package: str
    sdk: str
    paths: str  # the paths it was probed through
    path_text: str  # what they are
    verdicts: list[Verdict]
    badge: list[str]  # Markdown lines of our own making (markup.embed_badge), with a link in them
    closed_sets: list[ClosedSet]
    checks: list[CheckEvidence]


def version_page_data(frame: pd.DataFrame, fam: Family, sdk: str, sources: Sources) -> VersionPage:
    """One release's page: every check it was measured by, with the evidence."""
    family = fam.name
    part = frame[(frame["family"] == family) & (frame["sdk_version"] == sdk)]
    sub = {str(r.mutation): r for r in part.itertuples()}
    paths = sorted({str(_detail(r).get("path") or "") for r in sub.values()} - {""})
    measured = [(c, sub[c.name]) for c in checks_in(part) if c.name in sub]
    return VersionPage(package=esc_raw(fam.sdk_package), sdk=sdk, paths=", ".join(paths) or "?",
                       path_text="; ".join(PATHS.get(p, "") for p in paths),
                       verdicts=[_verdict(r, family, c.name) for c, r in measured],
                       badge=embed_badge(family, "sdk", sdk, f"{fam.sdk_package} {sdk}", f"cosmo/{family}/sdk-{sdk}/"),
                       closed_sets=closed_set_rows(part, family, own_page=True),
                       checks=[_check_evidence(c, r, sources) for c, r in measured])


def version_page(frame: pd.DataFrame, fam: Family, sdk: str, sources: Sources) -> str:
    return render("version.md", page=version_page_data(frame, fam, sdk, sources))


def kin(view: SiteView, kind: type) -> list[str]:
    """The stand-in families of ``kind``."""
    return [f for f, fam in view.families.items() if isinstance(fam, kind) and fam.standin]


def cosmo_pages(view: SiteView, fam: Family, kind: type) -> dict[str, str]:
    """Relative path -> page text: ``fam``'s pages, and the index of every stand-in family of
    ``kind``'s (the same page whichever family writes it)."""
    sub = standin_frame(view.frame, kin(view, kind))
    families = sorted(sub["family"].unique())
    pages = {"cosmo/index.md": render("cosmo-index.md",
                                      families=[(f, view.families[f].description) for f in families])}
    if fam.name in families:
        part = sub[sub["family"] == fam.name]
        pages[f"cosmo/{fam.name}.md"] = family_page(part, fam, view.releases.get(fam.name, {}).get("sdk", {}))
        for sdk in sorted_versions(part["sdk_version"]):
            pages[f"cosmo/{fam.name}/sdk-{sdk}.md"] = version_page(part, fam, sdk, view.sources)
    return pages


def cosmo_pictures(view: SiteView, fam: Family, kind: type) -> list[Picture]:
    """The grid of every check of every release, checks in their order."""
    part = standin_frame(view.frame, kin(view, kind))
    part = part[part["family"] == fam.name]
    if part.empty:
        return []
    present = set(part["mutation"])
    return [Picture(f"heatmap-{fam.name}.png", part, f"{fam.name}: checks", columns="mutation", xlabel="check",
                    order=[c.name for c in checks_in(part) if c.name in present])]
