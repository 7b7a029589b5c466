"""npm: SemVer 2 precedence (the ``semver`` library), npm range syntax."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

import semver

from matrix.ecosystems import Run

__all__ = ["Npm", "semver_key"]


@cache  # a whole history sorts the same few hundred version strings many times
def semver_key(version: str) -> tuple[tuple[Any, ...] | None, str]:
    """(precedence, text); (None, text) for a string that is not SemVer 2. The precedence is
    the parsed version as a tuple, ordered as SemVer 2 orders it: a release after its
    prereleases, numeric identifiers before alphanumeric ones, a longer list after its prefix
    (build metadata does not count)."""
    try:
        v = semver.Version.parse(version.removeprefix("v"))
    except (ValueError, TypeError):
        return None, version
    pre = () if v.prerelease is None else tuple(
        (0, int(p), "") if p.isdigit() else (1, 0, p) for p in v.prerelease.split("."))
    return (v.major, v.minor, v.patch, 0 if pre else 1, pre), version


class Npm:
    name = "npm"
    tool = "npm"

    def key(self, version: str) -> Any:
        return semver_key(version)

    def is_prerelease(self, version: str) -> bool:
        precedence = semver_key(version)[0]
        return precedence is None or bool(precedence[4])

    def install(self, package: str, version: str) -> str:
        return f"npm install {package}@{version}"

    def spec(self, package: str, run: Run) -> str:
        if run.first == run.last:
            return f"{package}@{run.first}"
        return f'"{package}@>={run.first} <={run.last}"'

    def pin(self, package: str, runs: Sequence[Run], bad_inside: Sequence[str]) -> list[str]:
        return [self.spec(package, r) for r in runs]
