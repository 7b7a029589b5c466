"""PyPI: PEP 440 order (``packaging``), pip requirement specifiers."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

from packaging.version import InvalidVersion, Version

from matrix.ecosystems import Run

__all__ = ["PyPI"]

_NOT_A_VERSION = Version("0.0.0.dev0")  # sorts first: text the registry would not have published


@cache  # a whole history sorts the same few hundred version strings many times
def pep440_key(version: str) -> tuple[Version, str]:
    try:
        return (Version(version), version)
    except InvalidVersion:
        return (_NOT_A_VERSION, version)


class PyPI:
    name = "pypi"
    tool = "pip"

    def key(self, version: str) -> Any:
        return pep440_key(version)

    def is_prerelease(self, version: str) -> bool:
        try:
            return Version(version).is_prerelease
        except InvalidVersion:
            return True

    def install(self, package: str, version: str) -> str:
        return f'pip install "{package}=={version}"'

    def spec(self, package: str, run: Run, bad_inside: Sequence[str] = ()) -> str:
        excluded = "".join(f",!={v}" for v in bad_inside)
        if run.first == run.last:
            return f"{package}=={run.first}"
        return f'"{package}>={run.first},<={run.last}{excluded}"'

    def pin(self, package: str, runs: Sequence[Run], bad_inside: Sequence[str]) -> list[str]:
        return [self.spec(package, r) for r in runs]
