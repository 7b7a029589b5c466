"""Released versions, as each ecosystem lists them (``Ecosystem.releases``), cached with the
time they were asked so that an offline rerun works from the cached lists."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from pydantic import TypeAdapter, ValidationError
from pydantic.dataclasses import dataclass

from matrix.ecosystems import get
from matrix.errors import InfraError
from matrix.execute.storage import write_atomic
from matrix.versions import Release

__all__ = ["Discovery"]

@dataclass(frozen=True)
class CachedList:
    """A registry's release list as cached, with when it was asked."""

    fetched_at: float
    releases: list[Release]


_CACHED = TypeAdapter(CachedList)


class Discovery:
    """Cached release lists: fresh within ``ttl`` seconds; a stale list is used (and said)
    when the registry cannot be reached, so an offline rerun works."""

    def __init__(self, cache_dir: Path, ttl: float, refresh: bool = False) -> None:
        self.cache_dir = cache_dir
        self.ttl = ttl
        self.refresh = refresh
        self.warnings: list[str] = []

    def _file(self, ecosystem: str, package: str) -> Path:
        return self.cache_dir / f"{ecosystem}-{package.replace('/', '__')}.json"

    def releases(self, ecosystem: str, package: str, hints: Sequence[tuple[str, str]] = ()) -> list[Release]:
        """``hints``: (ecosystem, package) of sibling SDKs whose version numbers are asked
        for by name when a Go proxy refuses to list a module's versions."""
        path = self._file(ecosystem, package)
        cached = self._load(path)
        if cached and not self.refresh and time.time() - cached[0] < self.ttl:
            return cached[1]
        try:
            fresh, note = get(ecosystem).releases(package, lambda: [
                r.version for eco, pkg in hints for r in self.releases(eco, pkg) if not r.prerelease])
            if note:
                self.warnings.append(note)
        except InfraError as err:
            if cached:
                age = (time.time() - cached[0]) / 3600
                self.warnings.append(f"{err}; using the list cached {age:.1f} h ago")
                return cached[1]
            raise InfraError(f"listing {package}", f"{err.detail}; no cached list to fall back on") from None
        self._store(path, fresh)
        return fresh

    def _load(self, path: Path) -> tuple[float, list[Release]] | None:
        """A cached list, validated; anything that does not fit is no cache (asked again)."""
        try:
            cached = _CACHED.validate_json(path.read_bytes())
        except (OSError, ValidationError):
            return None
        return cached.fetched_at, cached.releases

    def _store(self, path: Path, releases: list[Release]) -> None:
        write_atomic(path, _CACHED.dump_json(CachedList(time.time(), releases)))
