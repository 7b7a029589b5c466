"""How a run uses the machine: cells hold a CPU slot only while they work, installs run
ahead of the cells on a thread of their own, and each CLI is released once its last cell
is done.

A cell that is still running after ``park_after`` seconds is most likely waiting (an SDK on
its own 30 s timeout, a CLI that never answers): it gives its slot to the next cell and
finishes parked, but only while the machine has CPU to spare (``may_park``). On a machine
whose cores are all busy a long cell is computing, starved, and starting another beside it
would starve both: it keeps its slot and asks again shortly. Without that check a busy run
fed itself (every starved cell parked, every parked cell let one more in: 12 CLIs and a load
of 20 on 2 cores, seen 2026-12-02). Cells keep their timeouts and verdicts; only the overlap
changes.

Waiting shorter than ``park_after`` is the common kind (an SDK that refused a CLI waits out
its own thread joins, then ``timeouts.leak`` for the CLI to go): the run takes one more cell
in flight each second the CPU sat idle with every slot taken, up to ``run.jobs_when_idle``,
and gives them back as the CPU fills (``Slots.widen``).
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections import Counter
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

__all__ = ["Hold", "Prefetcher", "Slots", "Uses", "Window"]


# How soon a cell that could not park (the machine busy) asks again.
RETRY_PARK = 2.0
# Idle shares of the CPU over a second above which a run takes one more cell in flight, and
# below which it gives one back (Slots.widen).
WIDEN_IDLE = 0.30
NARROW_IDLE = 0.10


class Slots:
    """The CPU slots of a run: ``jobs`` cells work at once, and up to ``most`` while the machine
    sits idle (``widen``): cells that wait on a timeout leave the cores to others."""

    def __init__(self, jobs: int, park_after: float, may_park: Callable[[], bool] = lambda: True,
                 retry_park: float = RETRY_PARK, most: int | None = None) -> None:
        self._least = jobs
        self._most = max(most or jobs, jobs)
        self._limit = jobs
        self._busy = 0  # slots held
        self._waiting: list[tuple[int, Any, int]] = []  # the tickets of the cells waiting for one
        self._order = itertools.count()
        self._turn = threading.Condition()
        self._park_after = park_after
        self._may_park = may_park
        self._retry_park = retry_park
        self.parked = 0  # cells that gave their slot back while still running (for the summary)
        self.kept = 0  # times a long cell kept its slot because the machine was busy
        self.waited = 0  # times a cell gave its slot back because it said it only waits (Hold.wait)
        self.widest = jobs  # the most slots there were at once (for the summary)
        self._lock = threading.Lock()

    def acquire(self, resuming: bool = False, rank: Any = ()) -> None:
        """A slot, in turn: first a cell that parked and has more work (``resuming``: a started
        cell finished sooner shortens the run's tail, and its later phases wait for it), then
        the cell of the lowest ``rank`` (the run's order: cells added while it goes, a later
        phase of a release, go before later CLI releases), then first come."""
        with self._turn:
            ticket = (0 if resuming else 1, () if resuming else rank, next(self._order))
            self._waiting.append(ticket)
            try:
                while self._busy >= self._limit or min(self._waiting) != ticket:
                    self._turn.wait()
            finally:
                self._waiting.remove(ticket)
            self._busy += 1
            self._turn.notify_all()  # the next in turn may fit too

    def try_acquire(self) -> bool:
        with self._turn:
            if self._busy >= self._limit:
                return False
            self._busy += 1
            return True

    def release(self) -> None:
        with self._turn:
            self._busy -= 1
            self._turn.notify_all()  # whichever waiter's turn it is: a resuming cell first

    def widen(self, idle: float) -> None:
        """Given the share of the CPU idle over the last second: one slot more while at least
        ``WIDEN_IDLE`` of it was idle with every slot taken (the cells in flight are waiting),
        one fewer, down to ``jobs``, while less than ``NARROW_IDLE`` was (they compute). A
        step a second: a burst of starts shows in the next reading before the next step."""
        with self._turn:
            if idle >= WIDEN_IDLE and self._busy >= self._limit and self._limit < self._most:
                self._limit += 1
                self.widest = max(self.widest, self._limit)
                self._turn.notify_all()
            elif idle < NARROW_IDLE and self._limit > self._least:
                self._limit -= 1

    @contextmanager
    def hold(self, rank: Any = ()) -> Iterator[Hold]:
        hold = Hold(self, rank)
        hold.renew()
        try:
            yield hold
        finally:
            hold.release()


class Hold:
    """One cell's claim on a slot. A cell whose work comes in units (a cell whose stop is
    measured several times) renews it before each unit: a parked cell waits for a free slot
    again, so its next unit never runs beside ``jobs`` others."""

    def __init__(self, slots: Slots, rank: Any = ()) -> None:
        self._slots = slots
        self._rank = rank
        self._held = False
        self._started = False  # it held a slot before: a renewal resumes a cell
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()

    def _give_back(self, parked: bool) -> None:
        with self._lock:
            if not self._held:
                return
            self._held = False
            if parked:
                with self._slots._lock:
                    self._slots.parked += 1
        self._slots.release()

    def _arm(self, after: float | None = None) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = threading.Timer(self._slots._park_after if after is None else after, self._park)
        self._timer.daemon = True
        self._timer.start()

    def _park(self) -> None:
        if self._slots._may_park():
            self._give_back(True)
            return
        with self._lock:
            if not self._held:
                return
            with self._slots._lock:
                self._slots.kept += 1
            self._arm(self._slots._retry_park)

    def renew(self) -> None:
        with self._lock:
            if self._held:
                self._arm()
                return
        self._slots.acquire(resuming=self._started, rank=self._rank)
        with self._lock:
            self._held = self._started = True
            self._arm()

    def release(self) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
        self._give_back(False)

    def wait(self) -> None:
        """The cell only waits now (out a timeout of its own, using no CPU): its slot goes to
        the next cell at once, and ``renew`` takes one again before any more work."""
        with self._slots._lock:
            self._slots.waited += 1
        self.release()


class Uses:
    """How many cells of the run still need each environment; ``done`` says which need
    none any more (the first to evict)."""

    def __init__(self, needs: Sequence[Sequence[Hashable]]) -> None:
        self._left: Counter[Hashable] = Counter(k for keys in needs for k in keys)
        self._lock = threading.Lock()

    def needed(self, keys: Sequence[Hashable]) -> None:
        """A cell added while the run goes on needs ``keys`` too."""
        with self._lock:
            self._left.update(keys)

    def finished(self, keys: Sequence[Hashable]) -> None:
        with self._lock:
            self._left.subtract(keys)

    def done(self) -> set[Hashable]:
        with self._lock:
            return {k for k, n in self._left.items() if n <= 0}

    def pending(self) -> set[Hashable]:
        with self._lock:
            return {k for k, n in self._left.items() if n > 0}


class Window:
    """Where the run is along its CLI releases (in run order): the newest one a cell has
    started (cells of older ones may still be running, parked) and the ``ahead`` after it,
    which installs may fill. Every CLI still needed up to there stays on disk."""

    def __init__(self, clis: Sequence[Hashable], uses: Uses, ahead: int) -> None:
        self.index = {c: i for i, c in enumerate(clis)}
        self._uses = uses
        self._ahead = ahead
        self._reached = 0
        self._lock = threading.Lock()

    def started(self, cli: Hashable) -> None:
        with self._lock:
            self._reached = max(self._reached, self.index.get(cli, 0))

    def reached(self) -> int:
        with self._lock:
            return self._reached

    def open(self) -> set[Hashable]:
        """CLIs still needed that are within reach: the ones to keep on disk."""
        edge = self.reached() + self._ahead
        return {k for k in self._uses.pending() if self.index.get(k, edge + 1) <= edge}


class Prefetcher:
    """Installs environments in the order cells first need them, at most ``ahead`` CLI
    versions beyond the newest CLI a cell has started (disk stays bounded). A failure is
    left for the cell to meet: the runner remembers it and records it there."""

    def __init__(self, steps: Sequence[tuple[int, Callable[[], None]]], ahead: int,
                 reach: Callable[[], int], stop: Callable[[], bool]) -> None:
        self._steps = steps  # (index of the CLI in run order, install action)
        self._ahead = ahead
        self._reach = reach
        self._stop = stop
        self._wake = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._work, name="prefetch", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def poke(self) -> None:
        with self._wake:
            self._wake.notify_all()

    def close(self) -> None:
        with self._wake:
            self._closed = True
            self._wake.notify_all()
        self._thread.join()

    def _work(self) -> None:
        for cli_index, install in self._steps:
            with self._wake:
                while not self._closed and cli_index > self._reach() + self._ahead:
                    self._wake.wait(timeout=1.0)
                if self._closed or self._stop():
                    return
            # A failure is remembered by the runner; the cell that needs it records it.
            with contextlib.suppress(Exception):
                install()
