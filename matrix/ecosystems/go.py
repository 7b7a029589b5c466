"""Go modules: SemVer 2 precedence over ``vX.Y.Z`` tags. Go has no range syntax: the minimal
version selection takes the ``require`` line's version or newer, and ``exclude`` lines keep
named versions out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from matrix.ecosystems import Run
from matrix.versions import semver_key

__all__ = ["Go"]


def tag(version: str) -> str:
    return version if version.startswith("v") else f"v{version}"


class Go:
    name = "go"
    tool = "go"

    def key(self, version: str) -> Any:
        return semver_key(version)

    def is_prerelease(self, version: str) -> bool:
        precedence = semver_key(version)[0]
        return precedence is None or bool(precedence[4])

    def install(self, package: str, version: str) -> str:
        return f"go get {package}@{tag(version)}"

    def pin(self, package: str, runs: Sequence[Run], bad_inside: Sequence[str]) -> list[str]:
        if not runs:
            return []
        newest = runs[-1].last
        span = f"{tag(runs[0].first)} to {tag(runs[-1].last)}"
        lines = [self.install(package, newest), f"require {package} {tag(newest)}",
                 f"// works: {span}" + (", except the versions excluded below" if bad_inside else "")]
        lines += [f"exclude {package} {tag(v)}" for v in bad_inside]
        return lines
