"""Re-measure a random sample of stored cells and say whether the history still stands.

Pure helpers (sampling, comparison); the command measures the sample with the real runner."""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass

from matrix.model import Outcome, Row

__all__ = ["Check", "agreement", "sample"]

# Not verdicts, or nothing a re-measure could disagree with: not sampled.
_UNSAMPLED = {Outcome.INFRA_ERROR.value, Outcome.HARNESS_ERROR.value}


def sample(rows: list[Row], n: int, seed: int) -> list[Row]:
    """``n`` cells drawn at random, stratified by family and outcome: every (family, outcome)
    group gets its share of ``n`` (at least one while ``n`` allows), the rest drawn by size."""
    groups: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for r in sorted(rows, key=Row.key):
        if r.outcome not in _UNSAMPLED:
            groups[(r.family, r.outcome)].append(r)
    rng = random.Random(seed)  # noqa: S311 (a reproducible draw, not a secret)
    order = sorted(groups, key=lambda g: (-len(groups[g]), g))
    total = sum(len(v) for v in groups.values())
    if n >= total:
        return [r for g in order for r in groups[g]]
    quota = {g: 0 for g in order}
    for g in order[:n]:  # one each, the biggest groups first, while n allows
        quota[g] = 1
    left = n - sum(quota.values())
    while left > 0:
        # The group furthest below its proportional share gets the next cell.
        g = max((g for g in order if quota[g] < len(groups[g])),
                key=lambda g: len(groups[g]) / total * n - quota[g])
        quota[g] += 1
        left -= 1
    return [r for g in order for r in rng.sample(groups[g], quota[g])]


@dataclass(frozen=True)
class Check:
    stored: Row
    now: Row | None  # None: the re-measure was interrupted

    @property
    def verdict(self) -> str:
        """"agree", "disagree", or "unknown" (the re-measure was no verdict: infra or harness)."""
        if self.now is None or self.now.outcome in _UNSAMPLED:
            return "unknown"
        return "agree" if self.now.outcome == self.stored.outcome else "disagree"


def agreement(checks: list[Check]) -> tuple[int, int, int]:
    """(agree, disagree, unknown)."""
    counts = {"agree": 0, "disagree": 0, "unknown": 0}
    for c in checks:
        counts[c.verdict] += 1
    return counts["agree"], counts["disagree"], counts["unknown"]
