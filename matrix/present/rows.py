"""Every row a build (or one answer) reads, and the slices asked of it, each made once: a site
asks thousands of questions of one frame (a family's pair cells, one release's cells). The
slices live with this object, not in a memo of the process: made for one build, gone with it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

__all__ = ["RANGE_COLUMNS", "Rows", "as_rows"]

# What ranges are read from: grouping these columns, not every stored one, is quicker.
RANGE_COLUMNS = ["family", "probe", "sdk_version", "cli_version", "outcome", "error_type"]


class Rows:
    """``frame`` (every row) and, per family, the probe whose cells pair one release of each
    side (``pair_probes``). A slice it returns is shared: do not modify it."""

    def __init__(self, frame: pd.DataFrame, pair_probes: Mapping[str, str]) -> None:
        self.frame = frame
        self.pair_probes = dict(pair_probes)
        self._slices: dict[Any, Any] = {}

    def _once(self, key: Any, make: Any) -> Any:
        if key not in self._slices:
            self._slices[key] = make()
        return self._slices[key]

    def pairs(self, family: str | None = None) -> pd.DataFrame:
        """The pair cells of ``family`` (None: of every family)."""
        def make() -> pd.DataFrame:
            if family is not None:
                probe = self.pair_probes.get(family)
                return self.frame[(self.frame["family"] == family) & (self.frame["probe"] == probe)]
            probes = self.frame["family"].map(self.pair_probes)
            return self.frame[self.frame["probe"] == probes]
        return self._once(("pairs", family), make)  # type: ignore[no-any-return]

    def release(self, family: str, side: str, version: str) -> pd.DataFrame:
        """The pair cells of one release (``side``: ``sdk_version`` or ``cli_version``), with the
        columns ranges are read from."""
        def make() -> dict[tuple[str, str, str], pd.DataFrame]:
            slim = self.pairs()[RANGE_COLUMNS]
            return {(str(f), col, str(v)): g for col in ("sdk_version", "cli_version")
                    for (f, v), g in slim.groupby(["family", col], sort=False)}
        found = self._once("releases", make).get((family, side, version))
        return found if found is not None else self.pairs()[RANGE_COLUMNS].iloc[0:0]


def as_rows(frame: pd.DataFrame | Rows, pair_probes: Mapping[str, str]) -> Rows:
    return frame if isinstance(frame, Rows) else Rows(frame, pair_probes)
