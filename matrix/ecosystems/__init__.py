"""Package ecosystems: how each registry orders its versions and how its users pin them.

An ecosystem owns its release listing, its version order (PEP 440 for PyPI, SemVer 2 precedence for npm and Go,
each through a well-kept library), what counts as a prerelease, the command that installs one
release, and the syntax of a working range. Families name their SDK's and their other side's
ecosystem; nothing else matches ecosystem names as strings."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from matrix.errors import UserError
from matrix.versions import Release, VersionKey

__all__ = ["ECOSYSTEMS", "Ecosystem", "Listing", "Run", "get", "version_key"]

Listing = tuple[list[Release], str | None]
"""Released versions, and a note on how they were found when the registry's own list was refused."""


@dataclass(frozen=True)
class Run:
    """Consecutive measured versions sharing a verdict: the first and last of them."""

    first: str
    last: str


class Ecosystem(Protocol):
    name: str
    tool: str  # what its users install with: "pip", "npm", "go"

    def key(self, version: str) -> Any:
        """A sort key: precedence as this ecosystem defines it, ties broken by the text."""
        ...

    def is_prerelease(self, version: str) -> bool: ...

    def releases(self, package: str, siblings: Callable[[], list[str]]) -> Listing:
        """Every release through the client's configured registry; ``siblings`` gives version
        numbers of sibling packages, for registries that serve exact versions only."""
        ...

    def install(self, package: str, version: str) -> str:
        """The command that installs exactly this release."""
        ...

    def pin(self, package: str, runs: Sequence[Run], bad_inside: Sequence[str]) -> list[str]:
        """What to write down to stay within the working ``runs`` (oldest first);
        ``bad_inside``: measured versions between the first and last run that do not work."""
        ...


def _registry() -> dict[str, Ecosystem]:
    from matrix.ecosystems.go import Go
    from matrix.ecosystems.npm import Npm
    from matrix.ecosystems.pypi import PyPI
    from matrix.ecosystems.standin import StandIn

    return {e.name: e for e in (PyPI(), Npm(), Go(), StandIn())}


ECOSYSTEMS: dict[str, Ecosystem] = _registry()


def get(name: str) -> Ecosystem:
    try:
        return ECOSYSTEMS[name]
    except KeyError:
        raise UserError(f"unknown ecosystem {name!r}; valid: {', '.join(ECOSYSTEMS)}") from None


def version_key(version: str, ecosystem: str | None = None) -> Any:
    """Sort key of ``version`` in ``ecosystem``'s own order (None: ``matrix.versions.VersionKey``)."""
    return VersionKey(version) if ecosystem is None else get(ecosystem).key(version)
