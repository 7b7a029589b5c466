"""npm: SemVer 2 precedence (the ``semver`` library), npm range syntax."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from matrix.ecosystems import Run
from matrix.versions import semver_key

__all__ = ["Npm"]


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
