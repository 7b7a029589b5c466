"""Find the exact release where compatibility flips, between two measured versions.

Where a version's measured range has a working and a failing neighbour with unmeasured
releases in between, binary search those releases with real probes: each probe is a real
cell, stored like any other. An answer that says nothing (infra or harness error) stops
the search there and the boundary stays open."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

from matrix.answers.analysis import WORKS
from matrix.answers.ship import SKIPPED, UNKNOWN

__all__ = ["Boundary", "bisect_gap", "gaps"]


@dataclass(frozen=True)
class Boundary:
    last_same: str  # the newest version that behaves like the lower end
    first_other: str  # the oldest version that behaves like the upper end
    probed: tuple[tuple[str, str], ...]  # (version, outcome) in the order probed
    exact: bool  # False: an unknown answer stopped the search
    note: str = ""


def _works(outcome: str) -> bool | None:
    if outcome in UNKNOWN or outcome in SKIPPED:
        return None
    return outcome in WORKS


def gaps(axis: list[tuple[str, str]], released: list[str]) -> list[tuple[str, str, list[str]]]:
    """``axis``: (version, outcome) measured, in version order; ``released``: every release
    in version order. The adjacent measured pairs where working flips, with the releases
    strictly between them."""
    known = [(v, o) for v, o in axis if _works(o) is not None]
    out = []
    for (a, oa), (b, ob) in itertools.pairwise(known):
        if _works(oa) == _works(ob):
            continue
        try:
            lo, hi = released.index(a), released.index(b)
        except ValueError:
            continue
        between = released[lo + 1:hi]
        if between:
            out.append((a, b, between))
    return out


def bisect_gap(low: str, low_outcome: str, high: str, between: list[str],
               probe: Callable[[str], str]) -> Boundary:
    """``probe(version)`` measures one cell and returns its outcome."""
    want = _works(low_outcome)
    lo_v, hi_v = low, high
    candidates = list(between)
    probed: list[tuple[str, str]] = []
    while candidates:
        mid = candidates[len(candidates) // 2]
        outcome = probe(mid)
        probed.append((mid, outcome))
        state = _works(outcome)
        if state is None:
            return Boundary(lo_v, hi_v, tuple(probed), False,
                            f"{mid} measured as {outcome}: not a verdict, the boundary stays between {lo_v} and {hi_v}")
        i = candidates.index(mid)
        if state == want:
            lo_v, candidates = mid, candidates[i + 1:]
        else:
            hi_v, candidates = mid, candidates[:i]
    return Boundary(lo_v, hi_v, tuple(probed), True)
