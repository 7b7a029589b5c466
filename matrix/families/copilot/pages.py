"""Site pages for the tolerance checks: a matrix per family (SDK versions x rules) and one
page per SDK release with a section per rule (anchored by the rule's name) holding the
transcript the shim recorded (what the SDK sent, what the CLI answered, what the shim
injected). Each page is plain data (``*_page_data``) rendered by its template in
``templates/``, whose autoescaping keeps what an SDK or CLI sent text on our pages."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pandas as pd

from matrix.families.base import Family, SiteView
from matrix.families.copilot.render import render
from matrix.families.copilot.rules import COPILOT_RULES
from matrix.families.copilot.shim import CONTROL_DESCRIPTIONS, RULES, control_of
from matrix.families.copilot.targets import works
from matrix.markup import esc_raw, yes_no
from matrix.model import NO_CLI, Outcome
from matrix.store.dataset import Sources
from matrix.versions import sort_by_version, sort_key, sorted_versions

__all__ = ["cell_page_data", "contract_data", "matrix_page", "matrix_page_data", "release_page_data", "tolerance_pages"]

_MAX_MESSAGE = 4000



def _release_slug(sdk: str) -> str:
    return f"sdk-{sdk}"


@dataclass(frozen=True)
class Rule:
    name: str
    category: str
    description: str


@dataclass(frozen=True)
class RuleCell:
    """One rule's run for one SDK version; ``flaky``, ``repeats`` and ``stale`` are what the flaky
    and stale marks read."""

    outcome: str
    link: str  # from the family's page to the cell's section of its release's page
    flaky: bool
    repeats: list[str]
    stale: str


@dataclass(frozen=True)
class SdkRow:
    sdk: str
    cli: str  # the CLI version(s) its rules were judged against
    controls: list[RuleCell | None]  # by CONTROL_DESCRIPTIONS: the control where the rules were judged
    cells: list[RuleCell | None]  # by the page's rules; None: not measured


@dataclass(frozen=True)
class MatrixPage:
    family: str
    controls: list[Rule]
    rules: list[Rule]
    rows: list[SdkRow]

    @property
    def columns(self) -> list[str]:
        return [r.name for r in (*self.controls, *self.rules)]


def _anchor(name: str) -> str:
    """A section's anchor: a rule's name, or ``control@CLI`` for a control run against a CLI."""
    return name.replace("@", "-at-")


def _tolerance(frame: pd.DataFrame, family: str) -> pd.DataFrame:
    return frame[(frame["probe"] == "tolerance") & (frame["family"] == family)]


def _rule_cell(r: Any, family: str, sdk: str, anchor: str | None = None) -> RuleCell:
    return RuleCell(outcome=str(r.outcome), link=f"{family}/{_release_slug(sdk)}.md#{_anchor(anchor or r.mutation)}",
                    flaky=r.flaky is True, repeats=[str(o) for o in (r.repeats or [])],
                    stale=COPILOT_RULES.note(r))


_CONTROL_KINDS = {"result.control": "handshake results, notifications and requests",
                  "event.control": "events of a live session", "history.control": "a session's stored events"}


def _judged_at(part: pd.DataFrame) -> dict[str, str]:
    """Control -> the CLI its rules were judged against (``NO_CLI`` where none could be)."""
    out: dict[str, str] = {}
    for r in part[["mutation", "cli_version"]].itertuples():
        if str(r.mutation) in RULES:
            out.setdefault(control_of(str(r.mutation)), str(r.cli_version))
    return out


def matrix_page_data(frame: pd.DataFrame, family: str) -> MatrixPage:
    """Every SDK version of ``family`` against every shim rule it was measured with, and the
    control of each kind of rule where its rules were judged."""
    sub = _tolerance(frame, family)
    present = set(sub["mutation"])
    rules = [r for r in RULES if r in present]
    controls = [c for c in CONTROL_DESCRIPTIONS if c in present]
    rows = []
    for sdk in sorted_versions(sub["sdk_version"]):
        part = sub[sub["sdk_version"] == sdk]
        at = _judged_at(part)
        by_rule = {str(r.mutation): r for r in part.itertuples() if str(r.mutation) in RULES}
        by_control = {(str(r.mutation), str(r.cli_version)): r for r in part.itertuples()
                      if str(r.mutation) in CONTROL_DESCRIPTIONS}
        clis = list(dict.fromkeys(at.values()))
        rows.append(SdkRow(
            sdk=sdk, cli=", ".join(clis) if clis else "–",
            controls=[_rule_cell(by_control[(c, at[c])], family, sdk, f"{c}@{at[c]}")
                      if (c, at.get(c)) in by_control else None for c in controls],
            cells=[_rule_cell(by_rule[rule], family, sdk) if rule in by_rule else None for rule in rules]))
    return MatrixPage(family=family, rows=rows,
                      controls=[Rule(c, "control", CONTROL_DESCRIPTIONS[c]) for c in controls],
                      rules=[Rule(r, RULES[r].category, RULES[r].description) for r in rules])


def matrix_page(frame: pd.DataFrame, family: str) -> str:
    return render("tolerance.md", page=matrix_page_data(frame, family))


@dataclass(frozen=True)
class ContractRow:
    """One SDK version's failed start, graded against the failure contract; a grade is None
    where the probe could not tell."""

    sdk: str
    cli: str
    outcome: str
    cli_terminated: bool | None
    gone_after: float | None  # seconds after start failed
    queued_rejected: bool | None
    settled_after: float | None  # seconds after start failed
    no_files_written: bool | None
    files: str
    answer: str  # the queued call's: "resolved", or the first line of its error


def _seconds(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) else None


def _contract_row(r: Any) -> ContractRow:
    c: dict[str, Any] = (r.detail or {}).get("contract", {}) if isinstance(r.detail, dict) else {}
    queued = c.get("queued_call") or {}
    answer = "resolved" if queued.get("ok") else (esc_raw(queued.get("error")).splitlines() or [""])[0]
    return ContractRow(sdk=esc_raw(r.sdk_version), cli=esc_raw(r.cli_version), outcome=str(r.outcome),
                       cli_terminated=yes_no(c.get("cli_terminated")), gone_after=_seconds(c.get("cli_gone_after_s")),
                       queued_rejected=yes_no(c.get("queued_call_rejected")),
                       settled_after=_seconds(c.get("queued_settled_after_start_s")),
                       no_files_written=yes_no(c.get("no_files_written")),
                       files=", ".join(c.get("files_written") or []), answer=answer[:400])


def contract_data(frame: pd.DataFrame, family: str) -> list[ContractRow]:
    """The pairs whose handshake failed as it should, by SDK version."""
    sub = sort_by_version(frame[(frame["probe"] == "contract") & (frame["family"] == family)], "sdk_version")
    return [_contract_row(r) for r in sub.itertuples()]


def contract_section(frame: pd.DataFrame, family: str) -> str:
    """The failure contract of the Copilot SDK's version negotiation design, on the pairs whose
    handshake failed as it should ("" without any)."""
    rows = contract_data(frame, family)
    return render("contract.md", rows=rows) if rows else ""


@dataclass(frozen=True)
class TranscriptEntry:
    t: str  # seconds since the shim started
    direction: str  # sdk->cli, cli->sdk, shim->sdk
    note: str
    text: str  # the message, shortened


def _entry(e: dict[str, Any]) -> TranscriptEntry:
    body = e.get("msg", e.get("raw", ""))
    text = json.dumps(body, indent=1, default=str) if not isinstance(body, str) else body
    if len(text) > _MAX_MESSAGE:
        text = text[:_MAX_MESSAGE] + f"\n… ({len(text) - _MAX_MESSAGE} more characters)"
    return TranscriptEntry(t=esc_raw(e.get("t")), direction=str(e.get("dir", "")),
                           note=str(e["note"]) if e.get("note") else "", text=text)


def transcript_entries(text: str | None) -> list[TranscriptEntry]:
    """The shim's transcript (JSON lines); none when it is missing or unreadable."""
    try:
        entries = [json.loads(line) for line in (text or "").splitlines() if line.strip()]
    except ValueError:
        return []
    return [_entry(e) for e in entries]


@dataclass(frozen=True)
class CellPage:
    sdk: str
    cli: str
    rule: str
    anchor: str  # the section's: the rule's name, or ``control-at-CLI`` for a control
    description: str  # the rule's ("" for a rule the shim no longer has)
    outcome: str
    applied: str  # what the shim did, "nothing" when it did nothing
    error: str
    evidence: list[str]  # what the SDK left: asyncio exception handler, logs
    observed: str  # what the application was handed, as JSON
    transcript: list[TranscriptEntry] | None  # None: the cell has none; []: it has one, empty or unreadable


def _batch_note(batch: Any) -> str:
    """Which rules shared the run a verdict came from (a batch: one CLI start for them all)."""
    if not isinstance(batch, list) or not batch:
        return ""
    return f" (in one run with {', '.join(map(str, batch))})"


def cell_page_data(row: Any, sources: Sources) -> CellPage:
    """One tolerance cell (a row of the results' ``itertuples()``) and its transcript."""
    detail: dict[str, Any] = row.detail if isinstance(row.detail, dict) else {}
    rule = RULES.get(str(row.mutation))
    control = CONTROL_DESCRIPTIONS.get(str(row.mutation))
    observed = detail.get("observed")
    transcript = detail.get("transcript")
    evidence = detail.get("loop_errors") or detail.get("evidence") or []
    return CellPage(
        sdk=esc_raw(row.sdk_version), cli=esc_raw(row.cli_version), rule=esc_raw(row.mutation),
        anchor=_anchor(f"{row.mutation}@{row.cli_version}" if control else str(row.mutation)),
        description=rule.description if rule else (f"Control, against CLI {row.cli_version}: {control}" if control
                                                    else ""), outcome=str(row.outcome),
        applied=("; ".join(detail.get("applied") or []) or "nothing") + _batch_note(detail.get("batch")),
        error=esc_raw(row.error_message),
        evidence=[esc_raw(e) for e in evidence[:5]],
        observed=json.dumps(observed, indent=1, default=str)[:6000] if observed else "",
        transcript=transcript_entries(sources.evidence(transcript)) if transcript else None)


@dataclass(frozen=True)
class Choice:
    """Where one kind of rule of an SDK release was judged, and why there."""

    kind: str  # what its rules look at
    control: str
    cli: str  # "none" where no CLI could be
    outcome: str  # its control's outcome there ("" where none ran there)
    anchor: str  # its control's section there ("" where none ran there)
    why: str


@dataclass(frozen=True)
class ReleasePage:
    """Every tolerance check of one SDK release, each a section anchored by its rule's name,
    then every control run, and where each kind of rule was judged and why."""

    family: str
    package: str
    sdk: str
    choices: list[Choice]
    cells: list[CellPage]
    controls: list[CellPage]


def _first_line(text: object) -> str:
    return (esc_raw(text).strip().splitlines() or [""])[0][:200]


def _choice(control: str, rows: pd.DataFrame, working: list[str]) -> Choice:
    """Why a kind of rule was judged where it was: its control passed there, and each newer CLI
    the SDK works with either failed it or came after its rules were first measured."""
    rules = rows[rows["mutation"].isin([r for r in RULES if control_of(r) == control])]
    tried = sort_by_version(rows[rows["mutation"] == control], "cli_version")
    at = str(rules["cli_version"].iloc[0]) if not rules.empty else ""
    kind = _CONTROL_KINDS[control]
    if not at:
        return Choice(kind, control, "–", "", "", "not measured")
    if at == NO_CLI:
        return Choice(kind, control, "none", "", "", _first_line(rules["error_message"].iloc[0]))
    here = tried[tried["cli_version"] == at]
    outcome = str(here["outcome"].iloc[0]) if not here.empty else ""
    failed = [f"{r.cli_version} ({_first_line(r.error_message) or str(r.outcome)})"
              for r in tried[["cli_version", "error_message", "outcome"]].itertuples()
              if r.outcome not in (Outcome.PASSED.value, Outcome.NOT_APPLICABLE.value)]
    newest = working[-1] if working else ""
    if at == newest:
        why = "the newest CLI release this SDK release works with"
    elif failed:
        why = "the newest CLI release it works with whose control passes: its control failed against " + \
              ", ".join(failed)
    else:
        why = (f"the CLI release its checks were first measured against, kept so that a new CLI release does not move "
               f"them (the newest it works with is {newest or 'none'})")
    if outcome and outcome != Outcome.PASSED.value:
        why += f"; the control there is {outcome}"
    return Choice(kind, control, at, outcome, _anchor(f"{control}@{at}") if outcome else "", why)


def release_page_data(rows: pd.DataFrame, sources: Sources, fam: Family, sdk: str,
                      handshakes: pd.DataFrame | None = None) -> ReleasePage:
    """``handshakes``: the SDK release's handshake rows (what it works with)."""
    order = {rule: i for i, rule in enumerate(RULES)}
    pages = [cell_page_data(r, sources) for r in rows.itertuples()]
    cells = sorted((c for c in pages if c.rule in RULES or c.rule not in CONTROL_DESCRIPTIONS),
                   key=lambda c: (order.get(c.rule, len(order)), c.rule))
    kinds = list(CONTROL_DESCRIPTIONS)
    newest_first = sorted((c for c in pages if c.rule in CONTROL_DESCRIPTIONS), key=lambda c: sort_key(c.cli),
                          reverse=True)
    controls = sorted(newest_first, key=lambda c: kinds.index(c.rule))
    working = [] if handshakes is None else sorted_versions([str(t.cli_version) for t in handshakes.itertuples()
                                                             if works(t)])
    present = set(rows["mutation"])
    choices = [_choice(c, rows, working) for c in kinds if c in present or any(
        control_of(r) == c for r in present if r in RULES)]
    return ReleasePage(family=fam.name, package=fam.sdk_package, sdk=sdk, choices=choices, cells=cells,
                       controls=controls)


def tolerance_pages(view: SiteView, fam: Family, kind: type) -> dict[str, str]:
    """Relative path -> page text: ``fam``'s tolerance pages, and the index of every family of
    ``kind``'s (the same page whichever family writes it)."""
    pages: dict[str, str] = {}
    frame, sources, family = view.frame, view.sources, fam.name
    mine = [f for f, other in view.families.items() if isinstance(other, kind) and not other.standin]
    tol = frame[(frame["probe"] == "tolerance") & frame["family"].isin(mine)]
    families = sorted(tol["family"].unique())
    pages["tolerance/index.md"] = render("tolerance-index.md", families=families)
    if family in families:
        pages[f"tolerance/{family}.md"] = matrix_page(frame, family) + "\n" + contract_section(frame, family)
        for sdk, rows in tol[tol["family"] == family].groupby("sdk_version"):
            hs = view.rows.of_sdk(family, "handshake", str(sdk))
            pages[f"tolerance/{family}/{_release_slug(str(sdk))}.md"] = \
                render("release.md", page=release_page_data(rows, sources, fam, str(sdk), hs))
    return pages
