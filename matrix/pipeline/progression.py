"""Each SDK release through its family's phases as soon as its own cells allow.

A family plans a phase of one SDK release from that release's rows alone (``Family.plan``), so
a run need not wait for a phase to end for every release before it starts the next: when the
last cell of a release's phase is recorded, that release's next phase is planned and queued,
while other releases are still in the phase before. The cores stay busy where a phase barrier
left them idle while its last cells waited out their timeouts (the measured cost: issue 31's
figures on the Performance page).

A phase is planned again after it measured (a family may plan from what it just measured: a
control that failed moves its checks to another CLI release); each round of a phase measures
only cells no earlier round of it tried, and a release leaves a phase when a round finds
nothing new, as a run did phase by phase.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from matrix.model import Cell, Row
from matrix.pipeline.planning import Resolved
from matrix.versions import sort_key

__all__ = ["Progression"]

Key = tuple[str, str, str, str, str]
# The cells of a plan still to measure, given the local rows and the history's (``pending``).
Todo = Callable[[list[Cell], list[Row], list[Row]], list[Cell]]


@dataclass
class _Release:
    resolved: Resolved
    sdk: str
    phase: int = 0  # index into the run's phases: the one it is in
    tried: set[Key] = field(default_factory=set)  # cells of that phase already given to the run
    waiting: int = 0  # its cells being measured


@dataclass
class _Rows:
    kept: list[Row] = field(default_factory=list)  # the history's
    local: list[Row] = field(default_factory=list)  # this and earlier local runs'

    def merged(self) -> list[Row]:
        """A newer local row of a cell wins over the history's."""
        rows = {r.slot(): r for r in self.kept}
        for r in self.local:
            if r.replaces(rows.get(r.slot())):
                rows[r.slot()] = r
        return list(rows.values())


class Progression:
    """Which cells a run measures next. ``start`` gives every release's first cells to measure;
    ``measured`` takes each recorded row and gives the cells it makes measurable (none until
    the last cell of its release's round is in)."""

    def __init__(self, resolved: list[Resolved], phases: list[str], kept: list[Row], local: list[Row],
                 chosen: Callable[[Resolved, list[Cell]], list[Cell]], todo: Todo) -> None:
        self._phases = phases
        self._chosen = chosen
        self._todo = todo
        self._rows: dict[tuple[str, str], _Rows] = {}
        for r in kept:
            self._rows.setdefault((r.family, r.sdk_version), _Rows()).kept.append(r)
        for r in local:
            self._rows.setdefault((r.family, r.sdk_version), _Rows()).local.append(r)
        self._releases = {(r.family, sdk): _Release(r, sdk) for r in resolved for sdk in r.sdk_versions}
        # What a cell took against the newest other release it was measured with: to start the
        # long ones first (a guess for the order only; no verdict reads it).
        self._took: dict[tuple[str, str, str, str], tuple[Any, float]] = {}
        for r in kept:
            key, newest = (r.family, r.sdk_version, r.probe, r.mutation), sort_key(r.cli_version)
            if key not in self._took or self._took[key][0] < newest:
                self._took[key] = (newest, r.seconds)
        self._phase_of: dict[Key, str] = {}
        self.planned: Counter[str] = Counter()  # per phase: cells planned in the first round
        self.queued: Counter[str] = Counter()  # per phase: cells given to the run
        self._lock = threading.Lock()

    def start(self) -> list[Cell]:
        with self._lock:
            return [c for release in self._releases.values() for c in self._advance(release)]

    def expected(self, cell: Cell) -> float:
        """Seconds the cell took against the newest other release it was measured with (0: never)."""
        return self._took.get((cell.family, cell.sdk_version, cell.probe, cell.mutation), (None, 0.0))[1]

    def precedence(self, cell: Cell) -> tuple[float, ...]:
        """Which cells go first (lower first): a release's later phase, so a release that
        started is finished (its cells of the phase before are all in); then the longest."""
        name = self.phase_of_cell(cell)
        return -(self._phases.index(name) if name in self._phases else 0), -self.expected(cell)

    def phase_of(self, row: Row) -> str:
        return self._phase_of.get(row.key(), row.probe)

    def phase_of_cell(self, cell: Cell) -> str:
        return self._phase_of.get(cell.key(), cell.probe)

    def measured(self, row: Row) -> list[Cell]:
        with self._lock:
            rows = self._rows.setdefault((row.family, row.sdk_version), _Rows())
            rows.local.append(row)
            release = self._releases.get((row.family, row.sdk_version))
            if release is None or row.key() not in release.tried:
                return []
            release.waiting -= 1
            return self._advance(release) if release.waiting == 0 else []

    def _advance(self, release: _Release) -> list[Cell]:
        """The release's next round of cells: a new round of its phase, else the first of a later
        phase that has any; none when it has passed its last phase."""
        rows = self._rows.get((release.resolved.family, release.sdk), _Rows())
        while release.phase < len(self._phases):
            name = self._phases[release.phase]
            planned = self._chosen(release.resolved, release.resolved.cells(name, rows.merged(), release.sdk))
            todo = [c for c in self._todo(planned, rows.local, rows.kept) if c.key() not in release.tried]
            if not release.tried:
                self.planned[name] += len(planned)
            if planned and todo:
                release.tried |= {c.key() for c in todo}
                release.waiting = len(todo)
                self._phase_of.update((c.key(), name) for c in todo)
                self.queued[name] += len(todo)
                return todo
            release.phase += 1
            release.tried = set()
        return []
