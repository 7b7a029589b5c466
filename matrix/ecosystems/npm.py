"""npm: releases from ``npm view`` (npm's own registry configuration), SemVer 2 precedence
(the ``semver`` library), npm range syntax."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from matrix.ecosystems.base import Listing, Run
from matrix.errors import InfraError, UserError
from matrix.execute import proc
from matrix.execute.sandbox import install_env
from matrix.versions import Release, semver_is_prerelease, semver_key

__all__ = ["ECOSYSTEM", "Npm", "fetch_npm"]


def fetch_npm(package: str) -> list[Release]:
    res = proc.run(proc.Request(("npm", "view", package, "versions", "time", "--json"),
                                install_env(), Path.cwd(), timeout=120))
    if not res.ok:
        if "E404" in res.stdout + res.stderr:
            raise UserError(f"the npm registry has no package {package!r}; check the family's package name")
        raise InfraError(f"listing {package} on npm", (res.stderr or res.stdout).strip()[-300:])
    data = json.loads(res.stdout)
    times = data.get("time", {})
    return [Release(v, times.get(v), semver_is_prerelease(v)) for v in data.get("versions", [])]


class Npm:
    name = "npm"
    tool = "npm"

    def key(self, version: str) -> Any:
        return semver_key(version)

    def is_prerelease(self, version: str) -> bool:
        return semver_is_prerelease(version)

    def releases(self, package: str, siblings: Callable[[], list[str]]) -> Listing:
        return fetch_npm(package), None

    def install(self, package: str, version: str) -> str:
        return f"npm install {package}@{version}"

    def spec(self, package: str, run: Run) -> str:
        if run.first == run.last:
            return f"{package}@{run.first}"
        return f'"{package}@>={run.first} <={run.last}"'

    def pin(self, package: str, runs: Sequence[Run], bad_inside: Sequence[str]) -> list[str]:
        return [self.spec(package, r) for r in runs]


ECOSYSTEM = Npm()  # registered in pyproject.toml (compat_matrix.ecosystems)
