"""Cells -> rows: provision both sides, run the probe, append the row.

Cells run on a thread pool (each probe is a subprocess, so threads are enough); cells are
ordered by CLI version so a CLI prefix is used by consecutive cells and can be evicted
when the run moves on. Install failures are recorded as ``uninstallable`` (the registry
no longer serves that version) or ``infra-error`` (our side; retried with backoff; never
a verdict), once per environment per run.
"""

from __future__ import annotations

import contextlib
import functools
import json
import socket
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from matrix.errors import InfraError, StorageError, UninstallableError
from matrix.execute import proc
from matrix.execute.aheadstart import AheadStarts
from matrix.execute.environment import Environment, evict, make_env, with_retries
from matrix.execute.forkserver import ForkServers
from matrix.execute.load import IdleShare, load_per_core
from matrix.execute.pool import Pool
from matrix.execute.schedule import Hold, Prefetcher, Slots, Uses, Window
from matrix.execute.scratch import Scratch
from matrix.families.base import Family
from matrix.families.payload import PayloadError, typed
from matrix.families.registry import FAMILIES
from matrix.families.rules import Rules
from matrix.model import NO_CLI, Cell, CellSettings, Outcome, Row
from matrix.pipeline.config import Plan
from matrix.store.results import Store
from matrix.versions import sort_key

__all__ = ["NO_CLI", "Cell", "Runner", "pending"]

T = TypeVar("T")
E = TypeVar("E", bound=Environment)

UNINSTALLABLE_TTL = 7 * 24 * 3600
# Never verdicts, so an incremental run measures them again: an infrastructure failure, or a
# cell our side could not judge (a shared tree modified, a CLI that answered for another).
RETRY_OUTCOMES = {Outcome.INFRA_ERROR.value, Outcome.HARNESS_ERROR.value}
# Runnable processes per core over the last minute beyond which a cell that timed out is
# not believed: a run at `jobs = 4` on 2 cores keeps about 2.5 per core; a history run with
# 6 jobs under perf while the test suite ran reached 18, and whole CLI columns of cells that
# work became hangs.
OVERLOADED_PER_CORE = 6.0
# A long cell gives its slot to another only while at least this share of the CPU is idle:
# then it is waiting, and another cell can use the core (a busy machine: it is computing).
IDLE_TO_PARK = 0.25


class _Evicted(Exception):
    """An environment went away between ensuring it and taking it for use."""


def pending(cells: Iterable[Cell], local: Iterable[Row], kept: Iterable[Row] = (), force: bool = False,
            stale: bool = False, families: Mapping[str, Family] = FAMILIES) -> list[Cell]:
    """The cells to measure: those with no row yet, and local infrastructure or harness errors
    (never verdicts; ``kept``, the committed history, holds none of the first), and releases a
    registry refused more than ``UNINSTALLABLE_TTL`` ago. A stale row (``Rules.stale``) counts as
    measured unless ``stale``; ``force``: every cell."""
    if force:
        return list(cells)
    now = datetime.now(UTC)

    def settled(r: Row) -> bool:
        return not (stale and _stale(r, families)) and not _refusal_expired(r, now)

    done = {r.key() for r in kept if settled(r)} | {r.key() for r in local
                                                    if r.outcome not in RETRY_OUTCOMES and settled(r)}
    return [c for c in cells if c.key() not in done]


def _stale(row: Row, families: Mapping[str, Family]) -> bool:
    """Measured by older rules its family's current ones would judge otherwise, or a harness
    error (``Rules.stale``)."""
    family = families.get(row.family)
    return (family.rules if family is not None else Rules()).stale(row)


def _refusal_expired(row: Row, now: datetime) -> bool:
    """An ``uninstallable`` row older than ``UNINSTALLABLE_TTL``: a registry that refused a
    version may serve it since (a refusal is about the registry, not the pair), so the next
    run asks again."""
    if row.outcome != Outcome.UNINSTALLABLE.value:
        return False
    try:
        at = datetime.fromisoformat(row.measured_at)
    except ValueError:
        return True  # no readable date: ask again rather than keep it forever
    return (now - (at if at.tzinfo else at.replace(tzinfo=UTC))).total_seconds() >= UNINSTALLABLE_TTL


# Which of a CLI release's cells go first (lower first); by default, none before another.
Precedence = Callable[[Cell], tuple[float, ...]]


def rank(cell: Cell, precedence: Precedence = lambda c: ()) -> tuple[Any, ...]:
    """By CLI release first, across families: each CLI is installed once, used by every cell that
    needs it (families of one product share their CLIs), and can then be evicted. Within one,
    by ``precedence`` (the run's: a release's later phase first, then the cells expected to take
    longest: a long cell started last is the run's tail), then by SDK release."""
    return sort_key(cell.cli_version), cell.family, precedence(cell), sort_key(cell.sdk_version)


def order(cells: Iterable[Cell], precedence: Precedence = lambda c: ()) -> list[Cell]:
    return sorted(cells, key=lambda c: rank(c, precedence))


class Runner:
    """Measures cells of any registered family: installs what they need (with retries, and a
    record of versions that can no longer be installed), evicts beyond the budget, schedules,
    and stores one row per cell. The family says which environments a cell needs and how to
    measure it (``matrix.families.base.Family``); the runner is its ``Context``."""

    def __init__(self, plan: Plan, store: Store, cache: Path, reaper: proc.Reaper,
                 on_row: Callable[[Row], None] = lambda r: None, through_shim: bool = False,
                 direct_cli: bool = False, artifacts: dict[tuple[str, str], Path] | None = None,
                 families: Mapping[str, Family] = FAMILIES) -> None:
        self.families = families  # who measures each cell: the installed families, or a test's
        # Candidates: (side, version label) -> the local build installed for that "release".
        self.artifacts = artifacts or {}
        self.through_shim = through_shim  # relay pair cells through a family's (non-mutating) shim
        # Give the SDK the CLI's own entry point, no launcher: shows a measurement is the SDK's
        # doing, not ours (without the launcher's log every such cell is a harness error).
        self.direct_cli = direct_cli
        self.overloaded_per_core = OVERLOADED_PER_CORE
        self.plan = plan
        self.store = store
        self.results = store.directory
        self.cache = cache
        self.reaper = reaper
        self.on_row = on_row
        self.envs = cache / "envs"
        self._scratch = Scratch(cache / "sandboxes")
        self.scratch = self._scratch.path
        self.logs = cache / "logs"
        t = plan.timeouts
        self.settings = CellSettings(t.probe, t.call, t.stop_grace, t.dead_cli, t.leak, plan.run.stops,
                                     plan.run.stops_max)
        self._failures: dict[tuple[str, str, str], Exception] = {}
        self._memo: dict[object, object] = {}
        self._lock = threading.Lock()
        self._key_locks: dict[object, threading.Lock] = {}
        self.env_seconds: dict[str, float] = {}
        self.warm = ForkServers(self.scratch, reaper, plan.run.warm_sdks)
        self.ahead = AheadStarts(self.scratch, plan.run.warm_sdks)
        self._uses: Uses | None = None  # during run(): which environments cells still need
        self._window: Window | None = None
        self.parked = 0
        self.kept = 0  # times a long cell kept its slot: no CPU to spare (see Slots)
        self.waited = 0  # times a cell gave its slot back while it only waited (see Hold.wait)
        self.widest = 0  # the most cells measured at once (see Slots.widen)
        self._held = threading.local()  # the slot of the cell this thread measures (run())
        self._ahead: threading.Thread | None = None  # ready_ahead's
        self._closing = threading.Event()

    # -- the Context a family measures with -----------------------------------------------

    def _key_lock(self, key: object) -> threading.Lock:
        with self._lock:
            return self._key_locks.setdefault(key, threading.Lock())

    def memo(self, key: object, make: Callable[[], T]) -> T:
        """``make()`` once per key for the run, whichever thread asks first (the others wait)."""
        with self._key_lock(("memo", key)):
            if key not in self._memo:
                self._memo[key] = make()
            return self._memo[key]  # type: ignore[return-value]

    def shared(self, key: object, make: Callable[[], T]) -> T:
        lock = self._key_lock(("memo", key))
        if not lock.acquire(blocking=False):
            hold: Hold | None = getattr(self._held, "hold", None)
            if hold is not None:
                hold.release()  # waiting on another cell's work is not work
            try:
                lock.acquire()
            finally:
                if hold is not None:
                    hold.renew()
        try:
            if key not in self._memo:
                self._memo[key] = make()
            return self._memo[key]  # type: ignore[return-value]
        finally:
            lock.release()

    def working(self) -> None:
        hold: Hold | None = getattr(self._held, "hold", None)
        if hold is not None:
            hold.renew()

    def waiting(self) -> None:
        hold: Hold | None = getattr(self._held, "hold", None)
        if hold is not None:
            hold.wait()

    def make(self, kind: type[E], side: str, package: str, version: str, **kw: Any) -> E:
        if (side, version) in self.artifacts:
            kw["artifact"] = self.artifacts[(side, version)]
        return make_env(kind, package, version, self.envs / side, install_timeout=self.plan.timeouts.install,
                        log_dir=self.logs, **kw)

    def _marker(self, env: Environment) -> Path:
        return self.cache / "uninstallable" / (env.location.name + f".{env.kind}.json")

    def ensure(self, env: Environment) -> None:
        key = (env.kind, env.package, env.version)
        with self._key_lock(key):
            if key in self._failures:
                raise self._failures[key]
            marker = self._marker(env)
            if marker.exists() and time.time() - marker.stat().st_mtime < UNINSTALLABLE_TTL:
                raise UninstallableError(env.package, env.version, json.loads(marker.read_text())["detail"])
            t0 = time.monotonic()
            try:
                built = with_retries(env.create, self.plan.run.install_retries)
            except StorageError:
                raise  # nowhere to keep what is measured: the run ends (not this release's failure)
            except UninstallableError as err:
                marker.parent.mkdir(parents=True, exist_ok=True)
                marker.write_text(json.dumps({"detail": err.detail, "at": time.time()}))
                self._failures[key] = err
                raise
            except InfraError as err:
                self._failures[key] = err
                raise
            if built:
                self.env_seconds[f"{env.package}=={env.version}"] = round(time.monotonic() - t0, 2)

    # -- cells ----------------------------------------------------------------------------

    def _infra_row(self, cell: Cell, outcome: Outcome, side: str, err: Exception | str) -> Row:
        message = f"{side}: {err}" if side else str(err)
        return Row(family=cell.family, sdk_version=cell.sdk_version, cli_version=cell.cli_version,
                   probe=cell.probe, mutation=cell.mutation, outcome=outcome,
                   error_type=type(err).__name__ if isinstance(err, Exception) else None,
                   error_message=message, detail={"side": side} if side else {},
                   harness_version=self.families[cell.family].rules.version(cell.probe),
                   measured_at=datetime.now(UTC).isoformat(timespec="seconds"),
                   host=socket.gethostname())

    def measure(self, cell: Cell, repeat: int = 1) -> Row | None:
        """Measure ``cell`` (``repeat`` times: a cell whose outcome differs between repeats
        is recorded as flaky, with every outcome seen) and record one row."""
        rows: list[Row] = []
        for _ in range(repeat):
            row = self._measure_once(cell)
            if row is None:
                return None  # interrupted: nothing recorded
            rows.append(row)
        row = rows[-1]
        if repeat > 1:
            seen = [r.outcome for r in rows]
            row = row.updated(repeats=seen, flaky=len(set(seen)) > 1)
        return self._record(row)

    def _environments(self, cell: Cell) -> tuple[Environment, Environment | None]:
        return self.families[cell.family].environments(cell, self.make)

    def _queued(self, cell: Cell, precedence: Precedence) -> _Queued:
        """``cell`` with the environments it needs, in its place in the run's order."""
        envs = [e for e in self._environments(cell) if e is not None] if cell.cli_version != NO_CLI else []
        return _Queued(cell, envs, rank(cell, precedence))

    def _measure_once(self, cell: Cell) -> Row | None:
        if self.reaper.cancelled:
            return None
        if cell.cli_version == NO_CLI:
            return self._infra_row(
                cell, Outcome.NOT_APPLICABLE, "", cell.why or "no CLI version in the matrix is compatible with this "
                                                           "SDK version")
        family = self.families[cell.family]
        sdk, other = family.environments(cell, self.make)
        needed = [("sdk", sdk)] + ([("cli", other)] if other is not None else [])
        for attempt in (1, 2):
            for side, env in needed:
                try:
                    self.ensure(env)
                except StorageError:
                    raise
                except UninstallableError as err:
                    return self._infra_row(cell, Outcome.UNINSTALLABLE, side, err)
                except InfraError as err:
                    return self._infra_row(cell, Outcome.INFRA_ERROR, side, err)
            if other is not None:
                budget = int(self.plan.run.cache_budget_gb * 1024**3)
                keep, first = self._eviction_hints(other.location)
                evict(self.envs / "cli", other.kind, budget, keep=keep, first=first)
            try:
                return self._probe(family, cell, sdk, other)
            except _Evicted:
                if attempt == 2:
                    return self._infra_row(
                        cell, Outcome.INFRA_ERROR, "harness", "an environment was evicted twice while in use")
        raise AssertionError("unreachable")

    def _prepare(self, cell: Cell, env: Environment) -> None:
        """Everything a cell would otherwise do first for ``env``: install it, then what its
        family prepares (a CLI's runtime and unpacked tree, a runtime, a warm import)."""
        self.ensure(env)
        with env.in_use():
            if env.is_ready():
                self.families[cell.family].prepare(cell, env, self)

    def _probe(self, family: Family, cell: Cell, sdk: Environment, other: Environment | None) -> Row | None:
        try:
            with sdk.in_use(), other.in_use() if other is not None else contextlib.nullcontext():
                if not (sdk.is_ready() and (other is None or other.is_ready())):
                    raise _Evicted  # removed between our check and our shared lock
                row = family.measure(cell, sdk, other, self)
        except StorageError:
            raise
        except InfraError as err:
            return self._infra_row(cell, Outcome.INFRA_ERROR, "harness", err)
        if self.reaper.cancelled:
            return None  # interrupted: the cell in flight is not recorded, never half-true
        if row.outcome == Outcome.HANG:
            return self._unless_overloaded(row)
        return row

    def _unless_overloaded(self, row: Row) -> Row:
        """A hang measured while the machine was starved of CPU is our side failing, not the
        SDK's verdict: recorded as an infrastructure error (measured again next run), with
        what the cell would have said."""
        load = load_per_core()
        if load <= self.overloaded_per_core:
            return row
        return row.updated(
            outcome=Outcome.INFRA_ERROR, error_type="Overloaded",
            error_message=f"the machine was overloaded ({load:.1f} runnable processes per core over the last "
                          "minute) when this cell timed out; not a verdict: measured again next run (lower "
                          "run.jobs, or stop what else is running)",
            detail={**row.detail, "overloaded": {"load_per_core": round(load, 1), "outcome": row.outcome,
                                                 "error_message": row.error_message}})

    def _record(self, row: Row) -> Row:
        """Store ``row`` as its family declares its rows (its payload, whether it stands for a
        pair or an SDK release): one that does not fit is the family's bug, recorded as a
        harness error (not a verdict) with what it carried."""
        if self.reaper.cancelled:
            return row
        try:
            row = typed(row, self.families)
        except PayloadError as err:
            unfit = row.model_copy(update={
                "outcome": Outcome.HARNESS_ERROR, "error_type": "PayloadError", "error_message": str(err),
                "payload": {}, "detail": {**row.detail, "payload": row.payload, "outcome": row.outcome}})
            row = typed(unfit, self.families)
        self.store.append(row)
        self.on_row(row)
        return row

    def ready_ahead(self, cells: list[Cell], count: int) -> None:
        """Prepare, in a thread of its own, what the first ``count`` of ``cells`` (in the run's
        order) need where it is installed already (a warm import, a CLI's runtime): while the
        run still reads its history and plans, the other core readies its first cells. Nothing
        is installed here (the plan may want none of it), and a failure is left to the cell
        that meets it."""
        firsts: dict[Path, tuple[Cell, Environment]] = {}
        for cell in order(cells)[:count]:
            if cell.cli_version != NO_CLI:
                for env in self._environments(cell):
                    if env is not None:
                        firsts.setdefault(env.location, (cell, env))

        def ready() -> None:
            for cell, env in firsts.values():
                if self.reaper.cancelled or self._closing.is_set():
                    return
                with contextlib.suppress(Exception):
                    if env.is_ready():
                        with env.in_use():
                            if env.is_ready():
                                self.families[cell.family].prepare(cell, env, self)
        self._ahead = threading.Thread(target=ready, name="ready-ahead", daemon=True)
        self._ahead.start()

    def close(self) -> None:
        """End the warm servers (they would also end when we do: their input closes) and
        remove this run's sandboxes."""
        self._closing.set()
        if self._ahead is not None:
            self._ahead.join()  # a server it starts after this would outlive the run
        self.warm.close()
        self.ahead.close()
        self._scratch.release()

    def _eviction_hints(self, current: Path) -> tuple[set[Path], set[Path]]:
        """CLIs to keep (this cell's, and those installed for the next cells) and CLIs to
        evict first (no cell of this run needs them any more)."""
        if self._uses is None or self._window is None:
            return {current}, set()
        keep = {current} | {p for p in self._window.open() if isinstance(p, Path)}
        return keep, {p for p in self._uses.done() if isinstance(p, Path)}

    def run(self, cells: list[Cell], jobs: int, repeat: int = 1, keep_warm: bool = False,
            follow: Callable[[Row], list[Cell]] | None = None, most: int | None = None,
            precedence: Precedence = lambda c: ()) -> list[Row]:
        """Measure ``cells``, and the cells ``follow`` says each recorded row makes measurable
        (the next phase of its SDK release), in the same run: they go ahead of the cells of
        later CLI releases. ``jobs`` cells at once, up to ``most`` while the CPU sits idle
        (``Slots.widen``); ``precedence``: which cells of a CLI release go first (``rank``).
        ``keep_warm``: leave the warm servers for a next run (the caller then calls
        ``close``)."""
        ordered = [self._queued(c, precedence) for c in order(cells, precedence)]
        clis = list(dict.fromkeys(q.cli for q in ordered if q.cli is not None))
        self._uses = uses = Uses([q.keys for q in ordered])
        self._window = window = Window(clis, uses, self.plan.run.install_ahead)
        steps: list[tuple[int, Callable[[], None]]] = []
        seen: set[Path] = set()
        for q in ordered:
            cli_at = window.index.get(q.cli, 0) if q.cli is not None else 0
            for env in q.envs:
                if env.location not in seen:
                    seen.add(env.location)
                    steps.append((cli_at, functools.partial(self._prepare, q.cell, env)))
        prefetch = Prefetcher(steps, self.plan.run.install_ahead, window.reached, lambda: self.reaper.cancelled)
        idle = IdleShare()
        slots = Slots(jobs, self.plan.run.park_after, may_park=lambda: idle() >= IDLE_TO_PARK, most=most)
        finished = threading.Event()

        def widen() -> None:
            while not finished.wait(1.0):
                slots.widen(idle())
        rows: list[Row] = []
        lock = threading.Lock()

        def queued(cell: Cell) -> tuple[Any, _Queued]:
            """A cell added by ``follow``: what it needs is counted before the cell that made it
            gives up its own (a CLI they share is never evicted in between); an environment no
            cell of the run needed before is prepared by the cell itself."""
            q = self._queued(cell, precedence)
            uses.needed(q.keys)
            with lock:
                fresh = [e for e in q.envs if e.location not in seen]
                seen.update(e.location for e in fresh)
            return q.rank, replace(q, prepare=fresh)

        def one(item: _Queued) -> list[tuple[Any, _Queued]]:
            cell = item.cell
            if item.cli is not None and item.cli in window.index:
                window.started(item.cli)
            try:
                for env in item.prepare:
                    with contextlib.suppress(Exception):  # a failure is the cell's to meet and record
                        self._prepare(cell, env)
                try:
                    with slots.hold(item.rank) as hold:
                        self._held.hold = hold
                        row = self.measure(cell, repeat)
                except StorageError:
                    raise  # nowhere to keep what is measured: the run ends, cells in flight are not recorded
                except Exception as err:  # our bug: this cell says so, the others are still measured
                    row = self._infra_row(cell, Outcome.HARNESS_ERROR, "harness", err)
                    trace = traceback.format_exc()[-4000:]
                    row = self._record(row.model_copy(update={"detail": {**row.detail, "traceback": trace}}))
                finally:
                    self._held.hold = None
                if row is None:
                    return []
                with lock:
                    rows.append(row)
                return [queued(c) for c in follow(row)] if follow is not None and not self.reaper.cancelled else []
            finally:
                uses.finished(item.keys)
                prefetch.poke()

        # More threads than slots: a parked cell keeps its thread while the next one works.
        pool = Pool(jobs * 3, one, on_error=self.reaper.kill_all)
        for q in ordered:
            pool.add(q.rank, q)
        prefetch.start()
        widener = threading.Thread(target=widen, name="widen", daemon=True)
        if most is not None and most > jobs:
            widener.start()
        closing = contextlib.nullcontext() if keep_warm else contextlib.closing(self)
        with closing:
            try:
                pool.run()
            finally:
                finished.set()
                prefetch.close()
                self.parked += slots.parked
                self.kept += slots.kept
                self.waited += slots.waited
                self.widest = max(self.widest, slots.widest)
                self._uses = self._window = None
        return rows


@dataclass(frozen=True)
class _Queued:
    cell: Cell
    envs: list[Environment]  # both sides' (none for a cell with no CLI to run against)
    rank: tuple[Any, ...]  # its place in the run's order, also in the wait for a CPU slot
    prepare: list[Environment] = field(default_factory=list)  # installed and prepared by the cell itself

    @property
    def keys(self) -> list[Path]:
        """The environments it holds while measured (evicted last)."""
        return [e.location for e in self.envs]

    @property
    def cli(self) -> Path | None:
        return self.envs[1].location if len(self.envs) > 1 else None
