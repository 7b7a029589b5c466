"""Go modules: SemVer 2 precedence over ``vX.Y.Z`` tags. Go has no range syntax: the minimal
version selection takes the ``require`` line's version or newer, and ``exclude`` lines keep
named versions out."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from matrix.ecosystems.base import Listing, Run
from matrix.ecosystems.gotool import go_command
from matrix.errors import InfraError
from matrix.execute import proc
from matrix.versions import Release, semver_is_prerelease, semver_key

__all__ = ["ECOSYSTEM", "Go", "fetch_go"]


_GO_REFUSED = re.compile(r"(403|404|410|not available|not found|unknown revision|invalid version)", re.I)


def _go_info(module: str, version: str) -> Release | None:
    """One exact version through the go command's configured proxy; None when not served."""
    argv, env = go_command("list", "-m", "-json", f"{module}@v{version}")
    res = proc.run(proc.Request(argv, env, Path.cwd(), timeout=120))
    if res.ok:
        data = json.loads(res.stdout)
        return Release(str(data["Version"]).removeprefix("v"), data.get("Time"), semver_is_prerelease(version))
    if _GO_REFUSED.search(res.stderr):
        return None
    raise InfraError(f"asking the Go module proxy for {module}@v{version}", res.stderr.strip()[-300:])


def fetch_go(module: str, candidates: Sequence[str] = ()) -> tuple[list[Release], str | None]:
    """The module's versions as `go list -m -versions` reports them. When the proxy refuses
    the list (some mirrors serve exact versions only), each candidate version (the numbers
    the sibling SDKs of the same repository released) is asked for by name; the second
    value says so."""
    argv, env = go_command("list", "-m", "-versions", "-json", module)
    res = proc.run(proc.Request(argv, env, Path.cwd(), timeout=120))
    note = None
    if res.ok:
        asked = [v.removeprefix("v") for v in json.loads(res.stdout).get("Versions") or []]
    elif _GO_REFUSED.search(res.stderr) and candidates:
        asked = sorted(set(candidates))
    else:
        raise InfraError(f"listing {module} through the go command", res.stderr.strip()[-300:])
    # Each version's release time comes from its own entry, listed or not.
    with ThreadPoolExecutor(max_workers=8) as pool:
        found = [r for r in pool.map(lambda v: _go_info(module, v), asked) if r is not None]
    if not res.ok:
        note = (f"the Go module proxy refused the version list of {module}; {len(found)} of {len(asked)} "
                "version numbers released by its sibling SDKs were found by asking for each")
    return found, note


def tag(version: str) -> str:
    return version if version.startswith("v") else f"v{version}"


class Go:
    name = "go"
    tool = "go"

    def key(self, version: str) -> Any:
        return semver_key(version)

    def is_prerelease(self, version: str) -> bool:
        return semver_is_prerelease(version)

    def releases(self, package: str, siblings: Callable[[], list[str]]) -> Listing:
        """When the proxy refuses the module's list, the sibling SDKs' version numbers are
        asked for by name (``fetch_go``)."""
        return fetch_go(package, siblings())

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


ECOSYSTEM = Go()  # registered in pyproject.toml (compat_matrix.ecosystems)
