"""crates.io through cargo: releases as cargo's own configured registry index lists them,
SemVer 2 precedence, and Cargo's requirement syntax (where a pre-release matches only when a
requirement names it).

cargo has no command that prints every version of a crate; ``cargo info`` refreshes the crate's
entry of the registry index into cargo's cache, and that entry (one JSON object a version, the
index format cargo documents) is read from there: the registry is the one cargo is configured
with, and no host name is written here."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from matrix.ecosystems.base import Listing, Run
from matrix.errors import InfraError, UserError
from matrix.execute import proc
from matrix.families.copilot.rust.cargotool import cargo_command
from matrix.versions import Release, semver_is_prerelease, semver_key

__all__ = ["ECOSYSTEM", "Crates", "fetch_crate", "index_entries"]


def _index_path(name: str) -> str:
    """Where the index keeps a crate (cargo's documented layout: 1/, 2/, 3/a/, ab/cd/)."""
    name = name.lower()
    if len(name) <= 2:
        return f"{len(name)}/{name}"
    if len(name) == 3:
        return f"3/{name[0]}/{name}"
    return f"{name[:2]}/{name[2:4]}/{name}"


def index_entries(blob: bytes) -> list[dict[str, Any]]:
    """The versions in a cached index entry: a short header, then for each version its number
    and its index line (JSON), separated by NUL bytes."""
    out = []
    for part in blob.split(b"\0"):
        if part.startswith(b"{"):
            try:
                entry = json.loads(part)
            except ValueError:
                continue
            if isinstance(entry, dict) and "vers" in entry:
                out.append(entry)
    return out


def fetch_crate(crate: str, home: Path | None = None) -> list[Release]:
    """Every version of ``crate`` the configured registry's index lists (yanked ones marked)."""
    argv, env = cargo_command("info", "--quiet", crate)
    home = home or Path(env["CARGO_HOME"])
    res = proc.run(proc.Request(argv, {**env, "CARGO_HOME": str(home)}, Path.cwd(), timeout=180))
    if not res.ok:
        if "could not find" in res.stderr and crate in res.stderr:
            raise UserError(f"the crate registry has no crate {crate!r}; check the family's package name")
        raise InfraError(f"asking cargo for {crate}", res.stderr.strip()[-300:])
    cached = sorted((home / "registry" / "index").glob(f"*/.cache/{_index_path(crate)}"),
                    key=lambda p: p.stat().st_mtime)
    if not cached:
        raise InfraError(f"reading the registry index entry of {crate}",
                         f"cargo answered but left no entry under {home / 'registry' / 'index'}")
    entries = index_entries(cached[-1].read_bytes())
    if not entries:
        raise InfraError(f"reading the registry index entry of {crate}",
                         "cargo's cached entry has no version in a format this version of compat-matrix reads")
    # The index has no publication time; a version's order is its precedence.
    return [Release(str(e["vers"]), None, semver_is_prerelease(str(e["vers"])), bool(e.get("yanked")))
            for e in entries]


def _req(run: Run) -> str:
    return f"={run.first}" if run.first == run.last else f">={run.first}, <={run.last}"


class Crates:
    name = "crates"
    tool = "cargo"

    def key(self, version: str) -> Any:
        return semver_key(version)

    def is_prerelease(self, version: str) -> bool:
        return semver_is_prerelease(version)

    def releases(self, package: str, siblings: Callable[[], list[str]]) -> Listing:
        return fetch_crate(package), None

    def install(self, package: str, version: str) -> str:
        return f"cargo add {package}@={version}"

    def pin(self, package: str, runs: Sequence[Run], bad_inside: Sequence[str]) -> list[str]:
        """The newest working span as the requirement (Cargo takes one per dependency, and no
        exclusion); the older spans that also work as comments."""
        if not runs:
            return []
        lines = [f'{package} = "{_req(runs[-1])}"']
        if len(runs) > 1:
            lines.append("# also works: " + ", ".join(f'"{_req(r)}"' for r in runs[:-1]))
        return lines


ECOSYSTEM = Crates()  # registered in pyproject.toml (compat_matrix.ecosystems)
