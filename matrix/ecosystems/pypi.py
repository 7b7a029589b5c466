"""PyPI: PEP 440 order (``packaging``), pip requirement specifiers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from matrix.ecosystems import Run
from matrix.versions import is_prerelease, pep440_key

__all__ = ["PyPI"]

class PyPI:
    name = "pypi"
    tool = "pip"

    def key(self, version: str) -> Any:
        return pep440_key(version)

    def is_prerelease(self, version: str) -> bool:
        return is_prerelease(version)

    def install(self, package: str, version: str) -> str:
        return f'pip install "{package}=={version}"'

    def spec(self, package: str, run: Run, bad_inside: Sequence[str] = ()) -> str:
        excluded = "".join(f",!={v}" for v in bad_inside)
        if run.first == run.last:
            return f"{package}=={run.first}"
        return f'"{package}>={run.first},<={run.last}{excluded}"'

    def pin(self, package: str, runs: Sequence[Run], bad_inside: Sequence[str]) -> list[str]:
        return [self.spec(package, r) for r in runs]
