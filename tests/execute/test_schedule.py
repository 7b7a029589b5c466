"""The run's scheduling: CPU slots that waiting cells give back, installs ahead of the
cells within a window, and which environments no cell needs any more."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from matrix.execute.environment import FINGERPRINT, evict
from matrix.execute.load import IdleShare
from matrix.execute.schedule import Prefetcher, Slots, Uses, Window


def test_a_cell_that_waits_past_park_after_gives_its_slot_to_the_next() -> None:
    slots = Slots(jobs=1, park_after=0.2)
    started: list[str] = []
    release = threading.Event()

    def cell(name: str, hold: bool) -> None:
        with slots.hold():
            started.append(name)
            if hold:
                release.wait(5)

    waiting = threading.Thread(target=cell, args=("hang", True))
    waiting.start()
    time.sleep(0.05)
    quick = threading.Thread(target=cell, args=("next", False))
    quick.start()
    time.sleep(0.1)
    assert started == ["hang"]  # before park_after the slot is still held
    quick.join(2)
    assert started == ["hang", "next"] and slots.parked == 1
    release.set()
    waiting.join(2)
    # The parked cell does not hand back a second slot when it ends.
    assert slots.try_acquire() and not slots.try_acquire()


def test_a_long_cell_keeps_its_slot_while_the_machine_has_no_cpu_to_spare() -> None:
    busy = [True]
    slots = Slots(jobs=1, park_after=0.1, may_park=lambda: not busy[0], retry_park=0.1)
    with slots.hold():
        time.sleep(0.3)
        assert slots.parked == 0 and slots.kept >= 1
        assert not slots.try_acquire()  # still held: it is computing, not waiting
        busy[0] = False
        deadline = time.monotonic() + 5
        while slots.parked == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert slots.parked == 1  # asked again once a core was idle, and parked
    assert slots.try_acquire() and not slots.try_acquire()


def test_the_idle_share_is_a_fraction_read_at_most_once_per_interval() -> None:
    share = IdleShare(every=0.05)
    first = share()
    assert 0.0 <= first <= 1.0
    sum(range(2_000_000))
    time.sleep(0.06)
    assert 0.0 <= share() <= 1.0


def test_a_quick_cell_is_not_counted_as_parked() -> None:
    slots = Slots(jobs=2, park_after=5)
    with slots.hold():
        pass
    assert slots.parked == 0
    assert slots.try_acquire() and slots.try_acquire()
    assert not slots.try_acquire()


def test_uses_counts_down_to_done() -> None:
    uses = Uses([["sdk1", "cli1"], ["sdk2", "cli1"], ["sdk1", "cli2"]])
    uses.finished(["sdk1", "cli1"])
    assert uses.done() == set()
    uses.finished(["sdk2", "cli1"])
    assert uses.done() == {"cli1", "sdk2"}
    assert uses.pending() == {"sdk1", "cli2"}


def test_prefetch_stays_within_the_window_and_follows_the_reach() -> None:
    done: list[int] = []
    frontier = [0]
    steps = [(i, (lambda i=i: done.append(i))) for i in range(6)]
    pre = Prefetcher(steps, ahead=2, reach=lambda: frontier[0], stop=lambda: False)
    pre.start()
    deadline = time.monotonic() + 2
    while len(done) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.1)
    assert done == [0, 1, 2]  # CLI 3 is more than two ahead of the newest started
    frontier[0] = 3
    pre.poke()
    deadline = time.monotonic() + 2
    while len(done) < 6 and time.monotonic() < deadline:
        time.sleep(0.01)
    pre.close()
    assert done == [0, 1, 2, 3, 4, 5]


def test_prefetch_failures_are_left_to_the_cells() -> None:
    def boom() -> None:
        raise RuntimeError("registry down")

    later: list[int] = []
    pre = Prefetcher([(0, boom), (0, lambda: later.append(1))], ahead=0, reach=lambda: 0, stop=lambda: False)
    pre.start()
    pre.close()
    assert later == [1]


def _env(root: Path, name: str, size: int, used: float) -> Path:
    d = root / "npm-prefix" / name
    d.mkdir(parents=True)
    (d / FINGERPRINT).write_text(f'{{"bytes": {size}, "extra_bytes": {size}, "created": {used}}}')
    return d


def test_evict_removes_what_the_run_is_done_with_first_and_counts_extra_bytes(tmp_path: Path) -> None:
    old = _env(tmp_path, "a", 100, 1.0)   # least recently used, but still needed
    done = _env(tmp_path, "b", 100, 5.0)  # newer, but no cell needs it any more
    current = _env(tmp_path, "c", 100, 9.0)
    # 600 bytes counted (install + unpacked seed); a budget of 450 removes exactly one.
    removed = evict(tmp_path, "npm-prefix", 450, keep={current}, first={done})
    assert removed == [done] and old.exists() and current.exists()


def test_window_keeps_what_is_still_needed_up_to_the_newest_started_cli() -> None:
    uses = Uses([["s1", "c1"], ["s2", "c1"], ["s1", "c2"], ["s1", "c3"], ["s1", "c4"], ["s1", "c5"]])
    window = Window(["c1", "c2", "c3", "c4", "c5"], uses, ahead=1)
    window.started("c1")
    assert window.open() == {"c1", "c2"}
    window.started("c3")  # c1's second cell is still running (parked): c1 stays
    assert window.open() == {"c1", "c2", "c3", "c4"}
    uses.finished(["s1", "c1"])
    uses.finished(["s2", "c1"])
    window.started("c2")  # started out of order: the reach does not go back
    assert window.reached() == 2 and window.open() == {"c2", "c3", "c4"}
    for keys in (["s1", "c2"], ["s1", "c3"], ["s1", "c4"], ["s1", "c5"]):
        uses.finished(keys)
    assert window.open() == set()


def test_a_parked_cell_that_renews_waits_for_a_free_slot_again() -> None:
    slots = Slots(jobs=1, park_after=0.1)
    order: list[str] = []
    with slots.hold() as hold:
        time.sleep(0.3)  # parked: the slot is free for another cell
        assert slots.parked == 1
        other = threading.Thread(target=lambda: (slots.acquire(), order.append("other"), time.sleep(0.3),
                                                 slots.release()))
        other.start()
        time.sleep(0.1)
        hold.renew()  # the next unit of this cell waits until the other cell is done
        order.append("renewed")
        other.join()
    assert order == ["other", "renewed"]
    assert slots.try_acquire() and not slots.try_acquire()


def test_a_cell_that_only_waits_lends_its_slot_at_once_and_takes_one_again_for_more_work() -> None:
    slots = Slots(jobs=1, park_after=60)  # far from parking: only the cell's word frees the slot
    order: list[str] = []
    with slots.hold() as hold:
        hold.wait()
        assert slots.waited == 1 and slots.parked == 0
        other = threading.Thread(target=lambda: (slots.acquire(), order.append("other"), time.sleep(0.3),
                                                 slots.release()))
        other.start()
        time.sleep(0.1)
        assert order == ["other"]  # it got the slot while this cell waited
        hold.renew()
        order.append("renewed")
        other.join()
    assert order == ["other", "renewed"]
    assert slots.try_acquire() and not slots.try_acquire()  # every slot given back exactly once


def test_an_idle_cpu_with_every_slot_taken_lets_one_more_cell_in_a_second_and_a_busy_one_takes_it_back() -> None:
    slots = Slots(jobs=1, park_after=60, most=2)
    slots.acquire()
    second = threading.Thread(target=slots.acquire, daemon=True)
    second.start()
    second.join(0.2)
    assert second.is_alive()  # one slot, taken
    slots.widen(0.05)
    second.join(0.2)
    assert second.is_alive()  # the CPU busy: the cell in flight computes
    slots.widen(0.5)
    second.join(1)
    assert not second.is_alive() and slots.widest == 2
    slots.widen(0.9)
    assert slots.widest == 2  # never beyond `most`
    slots.widen(0.05)  # busy again: back to one slot, so the next cell waits for both to finish
    slots.release()
    third = threading.Thread(target=slots.acquire, daemon=True)
    third.start()
    third.join(0.2)
    assert third.is_alive()
    slots.release()
    third.join(1)
    assert not third.is_alive()


def test_an_idle_cpu_with_a_slot_free_widens_nothing() -> None:
    slots = Slots(jobs=2, park_after=60, most=4)
    slots.acquire()
    slots.widen(0.9)  # idle for want of cells, not because the cells in flight wait
    assert slots.widest == 2


def test_a_parked_cell_with_more_work_gets_the_next_slot_before_a_cell_not_started() -> None:
    slots = Slots(jobs=1, park_after=60)
    slots.acquire()
    order: list[str] = []

    def take(name: str, resuming: bool) -> None:
        slots.acquire(resuming=resuming)
        order.append(name)
        slots.release()

    new = threading.Thread(target=take, args=("not started", False))
    new.start()
    time.sleep(0.1)  # it waits first
    parked = threading.Thread(target=take, args=("resuming", True))
    parked.start()
    time.sleep(0.1)
    slots.release()
    new.join(2)
    parked.join(2)
    assert order == ["resuming", "not started"]


def test_cells_waiting_for_a_slot_get_it_in_the_runs_order_not_in_the_order_they_came() -> None:
    slots = Slots(jobs=1, park_after=60)
    slots.acquire()
    order: list[int] = []

    def take(rank: int) -> None:
        slots.acquire(rank=(rank,))
        order.append(rank)
        slots.release()

    waiting = [threading.Thread(target=take, args=(rank,)) for rank in (3, 1, 2)]
    for t in waiting:
        t.start()
        time.sleep(0.05)
    slots.release()
    for t in waiting:
        t.join(2)
    assert order == [1, 2, 3]
