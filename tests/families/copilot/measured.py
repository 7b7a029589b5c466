"""For the integration tests of a Copilot family: the newest release of a package as its
registry lists it now, and real cells measured into a results directory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from matrix.ecosystems.discovery import Discovery
from matrix.execute import proc
from matrix.execute.cache import cache_root
from matrix.pipeline.config import Plan
from matrix.pipeline.runner import Cell, Runner
from matrix.store.results import Store, load_frame
from matrix.versions import apply_selection

__all__ = ["measure", "newest"]


def newest(ecosystem: str, package: str) -> str:
    disc = Discovery(cache_root() / "discovery", 6 * 3600)
    return apply_selection(package, disc.releases(ecosystem, package), ["latest:1"], [], False)[0]


def measure(out: Path, family: str, pairs: list[tuple[str, str]], **plan: Any) -> pd.DataFrame:
    """The handshake cells of ``pairs`` (sdk, cli) of ``family``, measured for real."""
    config = Plan.model_validate({"families": {family: {}}, **plan})
    Runner(config, Store(out), cache_root(), proc.Reaper()).run(
        [Cell(family, s, c, "handshake") for s, c in pairs], jobs=2)
    return load_frame(out)[0]
