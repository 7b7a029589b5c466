"""The run's work queue: rank order on a fixed set of threads, items that add items, and the
first error ending the run."""

from __future__ import annotations

import threading

import pytest

from matrix.execute.pool import Pool


def test_one_thread_works_in_rank_order_and_an_added_item_goes_ahead_of_later_ranks() -> None:
    done: list[str] = []

    def work(item: str) -> list[tuple[int, str]]:
        done.append(item)
        return [(1, "a-next")] if item == "a" else []  # ranked with "b", added after it

    pool: Pool[str] = Pool(1, work)
    for rank, item in ((3, "c"), (0, "a"), (1, "b"), (2, "b2")):
        pool.add(rank, item)
    pool.run()
    assert done == ["a", "b", "a-next", "b2", "c"]


def test_the_first_error_ends_the_run_and_the_items_not_started_are_dropped() -> None:
    done: list[int] = []
    ended = threading.Event()

    def work(item: int) -> list[tuple[int, int]]:
        if item == 1:
            raise OSError("disk full")
        done.append(item)
        return []

    pool: Pool[int] = Pool(1, work, on_error=ended.set)
    for item in range(4):
        pool.add(item, item)
    with pytest.raises(OSError, match="disk full"):
        pool.run()
    assert done == [0] and ended.is_set()
