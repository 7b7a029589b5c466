"""What an ecosystem is: the protocol a registry's plugin implements (its release listing,
version order, prereleases, install command and pin syntax), and the small values it speaks
in. Built-in ecosystems and third-party ones register the same way
(``matrix/ecosystems/registry.py``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from matrix.versions import Release

__all__ = ["Ecosystem", "Listing", "Run"]

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
