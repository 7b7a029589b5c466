"""Every row a build (or one answer) reads, and the slices asked of it, each made once: a site
asks thousands of questions of one frame (a family's pair cells, one release's cells). The
slices live with this object, not in a memo of the process: made for one build, gone with it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pandas as pd

__all__ = ["RANGE_COLUMNS", "REFINED", "Rows", "as_rows", "refined"]

# What ranges are read from: grouping these columns, not every stored one, is quicker.
RANGE_COLUMNS = ["family", "probe", "sdk_version", "cli_version", "outcome", "error_type"]
# What a pair cell carries of each probe that refines its verdict (``refined``).
REFINED = ("outcome", "error_type", "error_message")


def refined(probe: str, column: str) -> str:
    """The column of a pair cell holding ``column`` of the same pair's ``probe`` cell."""
    return f"{probe}:{column}"


class Rows:
    """``frame`` (every row) and, per family, the probe whose cells pair one release of each
    side (``pair_probes``) and the probes whose cells of the same pair refine its verdict
    (``refinements``: a pair cell carries their outcome and error, ``refined``). A slice it
    returns is shared: do not modify it."""

    def __init__(self, frame: pd.DataFrame, pair_probes: Mapping[str, str],
                 refinements: Mapping[str, tuple[str, ...]] | None = None) -> None:
        self.frame = frame
        self.pair_probes = dict(pair_probes)
        self.refinements = {f: tuple(p) for f, p in (refinements or {}).items() if p}
        self._slices: dict[Any, Any] = {}

    @property
    def refined_columns(self) -> list[str]:
        probes = dict.fromkeys(p for ps in self.refinements.values() for p in ps)
        return [refined(p, c) for p in probes for c in REFINED]

    def _refine(self, cells: pd.DataFrame) -> pd.DataFrame:
        """``cells`` with the refining probes' outcome and error of each pair (missing: none)."""
        columns = self.refined_columns
        if not columns:
            return cells
        out = cells.copy()
        for col in columns:
            out[col] = None
        for family, probes in self.refinements.items():
            mine = out["family"] == family
            if not mine.any():
                continue
            for probe in probes:
                theirs = self.frame[(self.frame["family"] == family) & (self.frame["probe"] == probe)]
                if theirs.empty:
                    continue
                by_pair = {(str(r["sdk_version"]), str(r["cli_version"])): r
                           for r in theirs[["sdk_version", "cli_version", *REFINED]].to_dict("records")}
                keys = list(zip(out.loc[mine, "sdk_version"].astype(str), out.loc[mine, "cli_version"].astype(str),
                                strict=True))
                for col in REFINED:
                    out.loc[mine, refined(probe, col)] = [by_pair[k][col] if k in by_pair else None for k in keys]
        return out

    def _once(self, key: Any, make: Any) -> Any:
        if key not in self._slices:
            self._slices[key] = make()
        return self._slices[key]

    def once(self, key: tuple[Any, ...], make: Callable[[], Any]) -> Any:
        """What ``make`` returns, made the first time ``key`` is asked for (a slice an answer
        asks of many releases): keys are the asker's, prefixed with its name."""
        return self._once(("asked", *key), make)

    def pairs(self, family: str | None = None) -> pd.DataFrame:
        """The pair cells of ``family`` (None: of every family)."""
        def make() -> pd.DataFrame:
            if family is not None:
                probe = self.pair_probes.get(family)
                return self._refine(self.frame[(self.frame["family"] == family) & (self.frame["probe"] == probe)])
            probes = self.frame["family"].map(self.pair_probes)
            return self._refine(self.frame[self.frame["probe"] == probes])
        return self._once(("pairs", family), make)  # type: ignore[no-any-return]

    def release(self, family: str, side: str, version: str) -> pd.DataFrame:
        """The pair cells of one release (``side``: ``sdk_version`` or ``cli_version``), with the
        columns ranges are read from."""
        def make() -> dict[tuple[str, str, str], pd.DataFrame]:
            slim = self.pairs()[[*RANGE_COLUMNS, *self.refined_columns]]
            return {(str(f), col, str(v)): g for col in ("sdk_version", "cli_version")
                    for (f, v), g in slim.groupby(["family", col], sort=False)}
        found = self._once("releases", make).get((family, side, version))
        return found if found is not None else self.pairs()[[*RANGE_COLUMNS, *self.refined_columns]].iloc[0:0]


    def of_release(self, family: str, side: str, version: str) -> pd.DataFrame:
        """Every row (all columns, every probe) of ``family`` for one release (``side``:
        ``sdk_version`` or ``cli_version``), empty where there is none."""
        return self._group(("of release", family, side), lambda: self.frame[self.frame["family"] == family],
                           side, version)

    def of_sdk(self, family: str, probe: str, sdk: str) -> pd.DataFrame:
        """Every row (all columns) of ``family``'s ``probe`` for one SDK release, empty where
        there is none."""
        return self._group(("of sdk", family, probe),
                           lambda: self.frame[(self.frame["family"] == family) & (self.frame["probe"] == probe)],
                           "sdk_version", sdk)

    def _group(self, key: Any, mine: Callable[[], pd.DataFrame], by: str, value: str) -> pd.DataFrame:
        """The rows of ``mine`` whose ``by`` is ``value`` (all columns; empty where none): a page
        per release asks this of every release, so ``mine`` is grouped once, not scanned per
        release."""
        def make() -> dict[str, pd.DataFrame]:
            return {str(v): g for v, g in mine().groupby(by, sort=False)}
        found = self._once(key, make).get(value)
        return found if found is not None else self.frame.iloc[0:0]


def as_rows(frame: pd.DataFrame | Rows, pair_probes: Mapping[str, str],
            refinements: Mapping[str, tuple[str, ...]] | None = None) -> Rows:
    return frame if isinstance(frame, Rows) else Rows(frame, pair_probes, refinements)
