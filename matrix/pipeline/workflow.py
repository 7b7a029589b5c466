"""A run, as an explicit sequence of steps (nox's ``workflow.execute`` is the model):
config -> store -> releases -> plan and measure, phase by phase -> report. Each step takes
the run's state and returns it; a test can run a prefix of them. What a person sees of it
goes through a ``Reporter`` the command gives (the pipeline prints nothing itself)."""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from matrix.ecosystems.discovery import Discovery
from matrix.errors import EXIT_INFRA
from matrix.execute import proc
from matrix.execute.cache import cache_root
from matrix.execute.lock import holding
from matrix.families.base import Family
from matrix.families.registry import FAMILIES, open_sources
from matrix.model import Cell, Outcome, Row
from matrix.pipeline.candidates import Candidate, with_candidates
from matrix.pipeline.config import Plan
from matrix.pipeline.planning import Resolved, only_new, phases, resolve
from matrix.pipeline.progression import Progression
from matrix.pipeline.runner import IDLE_TO_PARK, Runner, pending
from matrix.pipeline.shard import Shard
from matrix.store.dataset import Sources
from matrix.store.listed import LISTED, listed_of
from matrix.store.results import Releases, Store, load_releases, merge_releases, save_releases

__all__ = ["STEPS", "Reporter", "RunRequest", "RunState", "execute"]


class Reporter(Protocol):
    """What a run tells the person running it."""

    def warn(self, text: str) -> None: ...

    def info(self, text: str) -> None: ...

    def phase(self, name: str, todo: int) -> None:
        """A phase has ``todo`` more cells to measure (it is told again as releases reach it)."""
        ...

    def row(self, row: Row, phase: str) -> None:
        """A cell of ``phase`` was measured."""
        ...

    def report(self, rows: list[Row]) -> None:
        """The matrix of the cells this run measured, at its end (the whole matrix is
        `compat-matrix report`: printing it again after every run took longer than a cell)."""
        ...


@dataclass(frozen=True)
class RunRequest:
    plan: Plan
    results: Path
    data: Path | None  # the committed history, when there is one
    families: list[str] = field(default_factory=list)
    sdk: list[str] = field(default_factory=list)
    cli: list[str] = field(default_factory=list)
    probes: list[str] = field(default_factory=list)
    jobs: int | None = None
    force: bool = False
    stale: bool = False
    repeat: int = 1
    new: bool = False  # measure only releases neither the history nor an earlier run has
    refresh: bool = False  # ask the registries now
    shard: Shard | None = None
    wait: bool = False
    candidates: list[Candidate] = field(default_factory=list)  # local builds measured as releases
    # Who measures: the installed families (a test gives its own, at the family boundary).
    with_families: Mapping[str, Family] = field(default_factory=lambda: FAMILIES)


@dataclass
class RunState:
    request: RunRequest
    ui: Reporter
    store: Store
    sources: Sources
    kept: list[Row] = field(default_factory=list)  # the committed history
    resolved: list[Resolved] = field(default_factory=list)
    # The releases the history and earlier runs had before this run stored its own lists.
    known: Releases = field(default_factory=dict)
    measured: list[Row] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)
    runner: Runner | None = None


def prepare_store(state: RunState) -> RunState:
    """Processes a killed run left, a torn last row."""
    for leftover in proc.sweep_orphans():
        state.ui.warn(f"killed a process left by a run that was killed: {leftover[:200]}")
    repaired = state.store.repair()
    if repaired:
        state.ui.warn(repaired)
    return state


def resolve_releases(state: RunState) -> RunState:
    """What the registries have (asked now with --new or --refresh) and what the config selects;
    the selected releases' dates are stored beside the rows."""
    req = state.request
    discovery = Discovery(cache_root() / "discovery", req.plan.run.discovery_ttl_hours * 3600, req.new or req.refresh)
    state.resolved = with_candidates(resolve(req.plan, discovery, req.families, req.sdk, req.cli, req.probes),
                                     req.candidates)
    for w in discovery.warnings:
        state.ui.warn(w)
    state.known = _measured_here(state)  # before this run stores its own lists
    # What the registries listed, whatever this run selected: the site lists what is not measured.
    candidates = {c.label for c in req.candidates}
    save_releases(state.store.directory, {
        r.family: {"sdk": {x.version: x.released_at for x in r.sdk_releases if x.version in r.sdk_versions},
                   "cli": {x.version: x.released_at for x in r.cli_releases if x.version in r.cli_versions},
                   f"sdk{LISTED}": listed_of(x for x in r.sdk_releases if x.version not in candidates),
                   **({f"cli{LISTED}": listed_of(x for x in r.cli_releases if x.version not in candidates)}
                      if r.cli_releases else {})}
        for r in state.resolved})
    return state


def ready_ahead(state: RunState) -> RunState:
    """The run's Runner, and what its first cells need readied while the history is read (a
    second of one core, the other idle): a warm import, a CLI's runtime, where installed. Not
    for ``--new``: which releases are new is known only from the history."""
    req = state.request
    state.runner = Runner(req.plan, state.store, cache_root(), proc.Reaper(),
                          artifacts={(c.side, c.label): c.artifact.path for c in req.candidates},
                          families=req.with_families)
    if not req.new:
        first = phases(state.resolved)[:1]
        cells = [c for r in state.resolved for name in first for c in r.in_shard(r.cells(name, []), req.shard)]
        state.runner.ready_ahead(cells, req.jobs or req.plan.run.jobs)
    return state


def read_history(state: RunState) -> RunState:
    """The history to plan against: one version of it for the whole run, verified once
    (Sources keeps it): the plan, the releases known and the report all read the same rows."""
    req = state.request
    dataset = state.sources.dataset()
    if dataset is not None:
        state.kept = dataset.read()[0]
    for w in state.sources.local_rows()[1]:
        state.ui.warn(w)
    state.known = known = merge_releases(dataset.releases() if dataset is not None else {}, state.known)
    if req.new:
        fresh = {r.family: [*(v for v in r.sdk_versions if v not in known.get(r.family, {}).get("sdk", {})),
                            *(v for v in r.cli_versions if not r.standin
                              and v not in known.get(r.family, {}).get("cli", {}))] for r in state.resolved}
        state.ui.info("new releases: " + ("; ".join(f"{f}: {' '.join(v)}" for f, v in fresh.items() if v)
                                          or "none since the last run"))
    return state


def _measured_here(state: RunState) -> Releases:
    """The releases an earlier local run measured at least one cell of (one it only selected,
    then was stopped, is still new to ``--new``); the history's are added once it is read."""
    known: Releases = {}
    local, _ = state.store.read()
    seen = {(r.family, side, v) for r in local for side, v in (("sdk", r.sdk_version), ("cli", r.cli_version))}
    for family, sides in load_releases(state.store.directory).items():
        for side, versions in sides.items():
            mine = {v: d for v, d in versions.items() if (family, side, v) in seen}
            known.setdefault(family, {}).setdefault(side, {}).update(mine)
    return known


def measure(state: RunState) -> RunState:
    """Every phase of every selected release, only the cells no row has yet (``pending``): each
    SDK release moves to its next phase as soon as its own cells of the one before are in (a
    later phase is planned from the rows of those before: ``Progression``)."""
    req = state.request
    known = state.known  # read before this run stored its lists: its own releases are new
    jobs = req.jobs or req.plan.run.jobs
    # --jobs fixes the number; the config's jobs may grow while cells wait (Slots.widen).
    most = req.plan.run.jobs_when_idle if req.jobs is None else None

    def chosen(r: Resolved, cells: list[Cell]) -> list[Cell]:
        cells = r.in_shard(cells, req.shard)
        return only_new(cells, known, r.standin, r.cli_versions) if req.new else cells

    def todo(cells: list[Cell], local: list[Row], kept: list[Row]) -> list[Cell]:
        return pending(cells, local, kept, req.force or req.repeat > 1, req.stale, req.with_families)

    local, _ = state.store.read()
    progress = Progression(state.resolved, phases(state.resolved), state.kept, local, chosen, todo)

    def recorded(row: Row) -> None:
        state.ui.row(row, progress.phase_of(row))

    def follow(row: Row) -> list[Cell]:
        cells = progress.measured(row)
        _tell(state.ui, progress, cells)
        return cells

    runner = state.runner or ready_ahead(state).runner
    assert runner is not None
    runner.on_row = recorded
    first = progress.start()
    for name in phases(state.resolved):
        if progress.planned[name]:
            state.ui.info(f"{name}: {progress.planned[name]} cells planned, "
                          f"{progress.planned[name] - progress.queued[name]} already measured, "
                          f"{progress.queued[name]} to measure now with {jobs} jobs")
    _tell(state.ui, progress, first)
    started = time.monotonic()
    with contextlib.closing(runner):
        if first:
            state.measured.extend(runner.run(first, jobs, req.repeat, keep_warm=True, follow=follow, most=most,
                                             precedence=progress.precedence))
    done = Counter(progress.phase_of(r) for r in state.measured)
    if state.measured:
        state.ui.info(f"{', '.join(f'{name} {done[name]}' for name in phases(state.resolved) if done[name])} "
                      f"cells in {time.monotonic() - started:.1f}s, each SDK release's phases as soon as "
                      "its cells allowed")
    return state


def _tell(ui: Reporter, progress: Progression, cells: list[Cell]) -> None:
    for name, n in Counter(progress.phase_of_cell(c) for c in cells).items():
        ui.phase(name, n)


def summarize(state: RunState) -> RunState:
    req, rows, runner = state.request, state.measured, state.runner
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.outcome] = counts.get(row.outcome, 0) + 1
    state.ui.info(f"measured {len(rows)} cells in {time.monotonic() - state.started:.1f}s: "
                  + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if req.repeat > 1:
        flaky = [r for r in rows if r.flaky]
        state.ui.info(f"flaky: {len(flaky)} of {len(rows)} cells changed outcome across {req.repeat} repeats"
                      + "".join(f"\n  {r.family} {r.probe} {r.mutation} sdk {r.sdk_version} × {r.cli_version}: "
                                f"{' / '.join(r.repeats)}" for r in flaky))
    if runner is not None:
        if runner.warm.started:
            state.ui.info(f"warm starts: {runner.warm.started} SDK releases imported once each "
                          f"({runner.warm.started_seconds:.1f}s in all)")
        for where, why in runner.warm.refused().items():
            state.ui.info(f"cold starts for {where.parent.parent.name}: {why}")
        if runner.ahead.used:
            state.ui.info(f"ahead starts: {runner.ahead.used} agents started before their cells, the SDK imported "
                          f"({runner.ahead.started} started)")
        for label, why in runner.ahead.refused().items():
            state.ui.info(f"no ahead starts for {label}: {why[:300]}")
        if runner.parked:
            state.ui.info(f"parked: {runner.parked} cells still waiting after {req.plan.run.park_after:.0f}s "
                          "gave their CPU slot to the next cell")
        if runner.waited:
            state.ui.info(f"waiting: {runner.waited} times a cell gave its CPU slot to the next while it only "
                          "waited for what the SDK started to be gone (timeouts.leak)")
        if runner.widest > (req.jobs or req.plan.run.jobs):
            state.ui.info(f"widened: up to {runner.widest} cells at once while the CPU sat idle (jobs_when_idle)")
        if runner.kept:
            state.ui.info(f"kept: {runner.kept} times a long cell kept its slot, the CPU busy (less than "
                          f"{IDLE_TO_PARK:.0%} idle): it was computing, not waiting")
        if runner.env_seconds:
            state.ui.info("installs: " + ", ".join(f"{k} {v}s" for k, v in sorted(runner.env_seconds.items())))
    state.ui.report(rows)
    return state


STEPS: tuple[Callable[[RunState], RunState], ...] = (prepare_store, resolve_releases, ready_ahead, read_history,
                                                     measure, summarize)


def execute(request: RunRequest, ui: Reporter, steps: tuple[Callable[[RunState], RunState], ...] = STEPS) -> int:
    """Run ``steps`` in order holding the results directory (one run at a time). Exit 0, or 3
    when some cell was an infrastructure error (shown as such, re-measured next run)."""
    store = Store(request.results)
    store.check_writable()
    with holding(store.directory, wait=request.wait):
        state = RunState(request, ui, store, open_sources(store.directory, request.data))
        try:
            for step in steps:
                state = step(state)
        finally:
            if state.runner is not None:
                state.runner.close()  # a step that failed after ready_ahead: no warm server outlives it
    infra = any(r.outcome == Outcome.INFRA_ERROR.value for r in state.measured)
    return EXIT_INFRA if infra else 0
