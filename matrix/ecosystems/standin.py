"""The other side of a family measured against our own stand-in: one contract version."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from matrix.ecosystems.base import Listing, Run
from matrix.errors import UserError

__all__ = ["ECOSYSTEM", "StandIn"]


class StandIn:
    name = "stand-in"
    tool = ""

    def key(self, version: str) -> Any:
        return (version,)

    def is_prerelease(self, version: str) -> bool:
        return False

    def releases(self, package: str, siblings: Callable[[], list[str]]) -> Listing:
        raise UserError(f"{package} is our stand-in, not a released package: it has one contract version "
                        "and no release list")

    def install(self, package: str, version: str) -> str:
        return ""  # started by the harness for each check

    def pin(self, package: str, runs: Sequence[Run], bad_inside: Sequence[str]) -> list[str]:
        return [f"{package} {r.first}" for r in runs]


ECOSYSTEM = StandIn()  # registered in pyproject.toml (compat_matrix.ecosystems)
