"""A Copilot family's session pages: the grid of its session cells (one real conversation per
pair that connects), and its events, as MDN's compatibility tables show features: for each
event type the CLI sent in the scripted turns, the first CLI release that sent it, and which
SDK releases delivered it typed, as their unknown, missed it, or failed on it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from matrix.families.base import LETTERS, Family, SiteView
from matrix.families.copilot.payload import SESSION
from matrix.families.copilot.render import render
from matrix.families.copilot.session.model_standin import TURNS
from matrix.families.copilot.session.verdict import DELIVERIES
from matrix.model import Outcome
from matrix.present.grid import Grid, first_line, grid_of
from matrix.versions import sort_key, sorted_versions

__all__ = ["EventRow", "SessionPage", "event_rows", "session_label", "session_pages"]

# A session cell's letter: none for one that worked cleanly.
_LETTER = {Outcome.COMPATIBLE: "", Outcome.SURFACED: "S", Outcome.DEGRADED: "d", Outcome.LOST: "X"}
# How an SDK release handed an event type over, worst first (a release's word for a type is
# the worst it did with it in any of its sessions).
_DELIVERY = ("fails", *reversed(DELIVERIES))


def session_label(rec: Mapping[Any, Any]) -> str:
    outcome = str(rec["outcome"])
    return _LETTER[Outcome(outcome)] if outcome in {o.value for o in _LETTER} else LETTERS.get(outcome, "")


def _runs(versions: list[str], axis: list[str]) -> str:
    """``versions`` as runs of consecutive releases of ``axis`` ("0.1.10–0.1.14, 1.0.0")."""
    at = {v: i for i, v in enumerate(axis)}
    picked = sorted(versions, key=lambda v: at[v])
    runs: list[list[str]] = []
    for v in picked:
        if runs and at[v] == at[runs[-1][-1]] + 1:
            runs[-1].append(v)
        else:
            runs.append([v])
    return ", ".join(r[0] if len(r) == 1 else f"{r[0]}–{r[-1]}" for r in runs)


@dataclass(frozen=True)
class EventRow:
    type: str
    first_cli: str  # the first CLI release (by version) whose sessions sent it
    clis: int  # how many CLI releases sent it
    by_delivery: list[tuple[str, str]]  # (typed | unknown | missed | fails, the SDK releases, as runs)


def event_rows(cells: Sequence[Mapping[Any, Any]]) -> list[EventRow]:
    """Every event type the CLI sent in the family's sessions (``cells``: its session rows)."""
    sdks = sorted_versions(list({str(c["sdk_version"]) for c in cells}))
    sent_by: dict[str, set[str]] = {}
    said: dict[str, dict[str, str]] = {}  # type -> sdk -> worst delivery
    for c in cells:
        events = c.get("events")
        if not isinstance(events, Mapping):
            continue
        failed = str(c.get("error_message") or "") if c["outcome"] in (Outcome.CRASHED, Outcome.HANG) else ""
        for kind, how in events.items():
            sent_by.setdefault(kind, set()).add(str(c["cli_version"]))
            how = "fails" if kind in failed else str(how)
            mine = said.setdefault(kind, {})
            old = mine.get(str(c["sdk_version"]))
            if old is None or _DELIVERY.index(how) < _DELIVERY.index(old):
                mine[str(c["sdk_version"])] = how
    rows = []
    for kind, clis in sent_by.items():
        first = min(clis, key=sort_key)
        by = [(how, _runs([s for s, h in said[kind].items() if h == how], sdks)) for how in _DELIVERY]
        rows.append(EventRow(kind, first, len(clis), [(h, r) for h, r in by if r]))
    return sorted(rows, key=lambda r: (sort_key(r.first_cli), r.type))


@dataclass(frozen=True)
class SessionPage:
    family: str
    description: str
    cells: int
    counts: list[tuple[str, int]]  # outcome -> cells
    routes: list[tuple[str, int]]  # how the model calls reached the stand-in -> cells
    turns: list[tuple[str, str]]  # each scripted turn and what it asks
    failing: list[tuple[str, int]]  # the scripted turn that did not hold -> cells
    grid: Grid
    events: list[EventRow]


def _page(view: SiteView, fam: Family) -> SessionPage | None:
    frame = view.frame
    mine = frame[(frame["family"] == fam.name) & (frame["probe"] == SESSION)]
    if mine.empty:
        return None
    cells = mine.to_dict("records")
    counts = Counter(str(c["outcome"]) for c in cells)
    routes = Counter(str(c.get("route") or "none") for c in cells if c["outcome"] != Outcome.NOT_APPLICABLE
                     or c.get("error_type") == "NoLocalRoute")
    failing = Counter(str(t.get("name")) for c in cells for t in (c.get("turns") or [])
                      if isinstance(t, Mapping) and not t.get("held"))
    grid = grid_of(view.rows, view.releases, fam.name, session_label, first_line, probe=SESSION, anchor="session-cli-")
    return SessionPage(family=fam.name, description=fam.description, cells=len(cells),
                       counts=sorted(counts.items(), key=lambda kv: -kv[1]), routes=sorted(routes.items()),
                       turns=[(t.name, t.what) for t in TURNS.values()], failing=sorted(failing.items()),
                       grid=grid, events=event_rows(cells))


def session_pages(view: SiteView, fam: Family) -> dict[str, str]:
    """``matrix/<family>-session.md`` and ``matrix/<family>-events.md`` (none without sessions)."""
    page = _page(view, fam)
    if page is None:
        return {}
    return {f"matrix/{fam.name}-session.md": render("session.md", page=page),
            f"matrix/{fam.name}-events.md": render("events.md", page=page)}
