"""Version ordering and selectors, for PyPI, npm and Go version strings alike.

Selectors (a list, applied in order, unioned; then ``exclude`` removes):
``"1.0.2"`` one exact released version, ``"latest:N"`` the newest N, ``"all"``,
a range in PEP 440 syntax such as ``">=0.1.10,<1.1"``, and ``"every:N"``: every Nth
release of the whole history, oldest and newest always included (a cheap way to span it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from matrix.ecosystems import get, version_key
from matrix.errors import ConfigError, UnknownVersionError

__all__ = ["Release", "apply_selection", "check_selector", "sort_key"]

_SEMVER = re.compile(r"^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$")
_LATEST = re.compile(r"^latest:(\d+)$")
_EVERY = re.compile(r"^every:(\d+)$")
SELECTOR_HELP = (
    'use an exact version ("1.0.2"), "latest:N", "every:N", "all", '
    'or a range such as ">=0.1.10,<1.1"'
)


@dataclass(frozen=True, order=False)
class Release:
    version: str
    released_at: str | None  # ISO 8601 upload time, as the registry reports it
    prerelease: bool
    yanked: bool = False


def _as_pep440(version: str) -> Version:
    """A version placed in a PEP 440 range selector (the config's range syntax for every
    ecosystem). A SemVer prerelease (``1.0.89-0``) is a prerelease there too, not the
    post-release PEP 440 would read; ordering itself is each ecosystem's own (``sort_key``)."""
    m = _SEMVER.match(version)
    if m and m.group(4) is not None:
        pre = m.group(4)
        n = pre.split(".")[-1]
        suffix = f"rc{n}" if n.isdigit() else "rc0"
        return Version(f"{m.group(1)}.{m.group(2)}.{m.group(3)}{suffix}")
    return Version(version)


def sort_key(version: str, ecosystem: str | None = None) -> Any:
    """``version``'s place in its ecosystem's order (PEP 440 for PyPI, SemVer 2 for npm and
    Go); without the ecosystem, SemVer for SemVer-shaped text and PEP 440 otherwise."""
    return version_key(version, ecosystem)


def is_prerelease(version: str, ecosystem: str | None = None) -> bool:
    if ecosystem is not None:
        return get(ecosystem).is_prerelease(version)
    return get("npm" if _SEMVER.match(version) else "pypi").is_prerelease(version)


def _in_range(version: str, spec: SpecifierSet) -> bool:
    try:
        return _as_pep440(version) in spec
    except InvalidVersion:
        return False


def check_selector(selector: str, where: str) -> None:
    """Reject a malformed selector at config-load time, before any network."""
    if selector == "all" or _LATEST.match(selector) or _EVERY.match(selector):
        if (m := _LATEST.match(selector) or _EVERY.match(selector)) and int(m.group(1)) < 1:
            raise ConfigError(where, f"selector {selector!r} selects nothing", SELECTOR_HELP)
        return
    if selector and selector[0] in "<>=!~":
        try:
            SpecifierSet(selector)
        except InvalidSpecifier:
            raise ConfigError(where, f"{selector!r} is not a valid range", SELECTOR_HELP) from None
        return
    if _SEMVER.match(selector):
        return
    try:
        Version(selector)
    except InvalidVersion:
        raise ConfigError(where, f"{selector!r} is not a version or selector", SELECTOR_HELP) from None


def _one(selector: str, ordered: list[str], package: str) -> list[str]:
    if selector == "all":
        return list(ordered)
    if m := _LATEST.match(selector):
        return ordered[-int(m.group(1)) :]
    if m := _EVERY.match(selector):
        step = int(m.group(1))
        picked = ordered[::step]
        if ordered and ordered[-1] not in picked:
            picked.append(ordered[-1])
        return picked
    if selector[0] in "<>=!~":
        spec = SpecifierSet(selector, prereleases=True)
        return [v for v in ordered if _in_range(v, spec)]
    if selector not in ordered:
        raise UnknownVersionError(package, selector, ordered)
    return [selector]


def apply_selection(
    package: str,
    releases: list[Release],
    select: list[str],
    exclude: list[str],
    prereleases: bool,
    ecosystem: str | None = None,
) -> list[str]:
    """Resolve selectors against what the registry has, oldest first in ``ecosystem``'s order.

    An explicit version is always honoured (even a prerelease); pattern selectors see
    prereleases only when asked, and never yanked releases."""
    every = sorted((r for r in releases), key=lambda r: sort_key(r.version, ecosystem))
    pool = [r.version for r in every if not r.yanked and (prereleases or not r.prerelease)]
    known = [r.version for r in every]
    chosen: set[str] = set()
    for sel in select:
        if sel in known and sel not in pool:
            chosen.add(sel)  # explicitly named prerelease/yanked version
            continue
        chosen.update(_one(sel, pool, package))
    for sel in exclude:
        chosen.difference_update(_one(sel, known, package))
    return sorted(chosen, key=lambda v: sort_key(v, ecosystem))
