"""Work on a fixed set of threads, in rank order, where finishing one item may add others.

A run's cells are not all known at its start: a cell's row can make the next phase of its SDK
release measurable (a session needs the handshake's verdict). Those cells join the queue as
soon as they can be planned, ranked among the cells still waiting (the same CLI release goes
before a later one), instead of waiting behind a whole phase. A queue in submission order would
run them only after every cell queued before them; a phase barrier would leave the cores idle
while its last cells wait out their timeouts.
"""

from __future__ import annotations

import itertools
import queue
import threading
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

__all__ = ["Pool"]

T = TypeVar("T")

# How often the waiting thread wakes to notice an interrupt (Ctrl-C reaches only it).
_POLL = 0.5
_WORK, _STOP = 0, 1


class Pool(Generic[T]):
    """``work(item)`` on ``threads`` threads, lowest rank first; what it returns is added,
    ranked. ``run`` returns when no item is left, or raises the first error any item raised
    (the items not started are dropped, ``on_error`` is called to end those in flight)."""

    def __init__(self, threads: int, work: Callable[[T], Iterable[tuple[Any, T]]],
                 on_error: Callable[[], None] = lambda: None) -> None:
        self._threads = threads
        self._work = work
        self._on_error = on_error
        self._queue: queue.PriorityQueue[tuple[int, Any, int, T | None]] = queue.PriorityQueue()
        self._order = itertools.count()  # ties in rank keep the order they were added in
        self._left = 0
        self._error: BaseException | None = None
        self._closed = False
        self._done = threading.Condition()

    def add(self, rank: Any, item: T) -> None:
        with self._done:
            if self._closed:
                return
            self._left += 1
        self._queue.put((_WORK, rank, next(self._order), item))

    def run(self) -> None:
        workers = [threading.Thread(target=self._serve, name=f"pool-{i}", daemon=True) for i in range(self._threads)]
        for w in workers:
            w.start()
        try:
            with self._done:
                while self._left and self._error is None:
                    self._done.wait(_POLL)
                if self._error is not None:
                    raise self._error
        except BaseException:
            self._on_error()
            raise
        finally:
            with self._done:
                self._closed = True
            self._drain()
            for _ in workers:
                self._queue.put((_STOP, 0, next(self._order), None))
            for w in workers:
                w.join()

    def _drain(self) -> None:
        while True:
            try:
                self._queue.get_nowait()
            except queue.Empty:
                return

    def _serve(self) -> None:
        while True:
            kind, _, _, item = self._queue.get()
            if kind == _STOP:
                return
            assert item is not None
            try:
                more = list(self._work(item)) if not self._closed else []
            except BaseException as err:  # handed to the waiting thread, which raises it
                with self._done:
                    self._error = self._error or err
                    self._closed = True
                    self._left -= 1
                    self._done.notify_all()
                continue
            for rank, follow in more:
                self.add(rank, follow)
            with self._done:
                self._left -= 1
                self._done.notify_all()
