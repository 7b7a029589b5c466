"""Version ordering and selectors, for PyPI, npm and Go version strings alike.

Selectors (a list, applied in order, unioned; then ``exclude`` removes):
``"1.0.2"`` one exact released version, ``"latest:N"`` the newest N, ``"all"``,
a range in PEP 440 syntax such as ``">=0.1.10,<1.1"``, ``"every:N"``: every Nth
release of the whole history, oldest and newest always included (a cheap way to span it), and
``"preview"``: the pre-releases newer than the newest release (what a user on the preview
channel runs; older pre-releases were superseded by a release).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache, total_ordering
from typing import Any

import pandas as pd
import semver
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version
from pydantic.dataclasses import dataclass

from matrix.errors import ConfigError, UnknownVersionError

__all__ = ["PREVIEW", "Release", "VersionKey", "apply_selection", "check_selector", "is_prerelease", "pep440_key",
           "preview",
           "semver_is_prerelease", "semver_key", "sort_by_version", "sort_key", "sorted_versions"]

_SEMVER = re.compile(r"^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$")
_LATEST = re.compile(r"^latest:(\d+)$")
_EVERY = re.compile(r"^every:(\d+)$")
PREVIEW = "preview"
SELECTOR_HELP = (
    'use an exact version ("1.0.2"), "latest:N", "every:N", "all", "preview", '
    'or a range such as ">=0.1.10,<1.1"'
)


@dataclass(frozen=True)
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


_NOT_A_VERSION = Version("0.0.0.dev0")  # sorts first: text the registry would not have published


@cache  # a whole history sorts the same few hundred version strings many times
def pep440_key(version: str) -> tuple[Version, str]:
    try:
        return (Version(version), version)
    except InvalidVersion:
        return (_NOT_A_VERSION, version)


@cache  # a whole history sorts the same few hundred version strings many times
def semver_key(version: str) -> tuple[tuple[Any, ...] | None, str]:
    """(precedence, text); (None, text) for a string that is not SemVer 2. The precedence is
    the parsed version as a tuple, ordered as SemVer 2 orders it: a release after its
    prereleases, numeric identifiers before alphanumeric ones, a longer list after its prefix
    (build metadata does not count)."""
    try:
        v = semver.Version.parse(version.removeprefix("v"))
    except (ValueError, TypeError):
        return None, version
    pre = () if v.prerelease is None else tuple(
        (0, int(p), "") if p.isdigit() else (1, 0, p) for p in v.prerelease.split("."))
    return (v.major, v.minor, v.patch, 0 if pre else 1, pre), version


def semver_is_prerelease(version: str) -> bool:
    """A SemVer prerelease, or not SemVer at all (npm and Go select neither by default)."""
    precedence = semver_key(version)[0]
    return precedence is None or bool(precedence[4])


@total_ordering
class VersionKey:
    """A version's place in its ecosystem's order, for columns whose ecosystem is not at hand:
    a SemVer-shaped version (every npm and Go version) is ordered by SemVer 2 precedence,
    any other by PEP 440. Within one ecosystem the two agree where both apply (a PyPI
    version that parses as SemVer is a plain X.Y.Z)."""

    __slots__ = ("pep", "sem", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.sem = semver_key(text)
        self.pep: Any = None

    def _pep440(self) -> Any:
        if self.pep is None:
            self.pep = pep440_key(self.text)
        return self.pep

    def __eq__(self, other: object) -> bool:
        return isinstance(other, VersionKey) and self.text == other.text

    def __lt__(self, other: VersionKey) -> bool:
        if self.sem[0] is not None and other.sem[0] is not None:
            return bool(self.sem < other.sem)
        return bool(self._pep440() < other._pep440())

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return f"VersionKey({self.text!r})"


def sort_key(version: str) -> Any:
    """``version``'s place in order when its ecosystem is not at hand (``VersionKey``); an
    ecosystem's own order: ``matrix.ecosystems.get(name).key``."""
    return VersionKey(version)


def is_prerelease(version: str) -> bool:
    """SemVer's rule for SemVer-shaped text, PEP 440's otherwise."""
    precedence = semver_key(version)[0]
    if precedence is not None:
        return bool(precedence[4])
    try:
        return Version(version).is_prerelease
    except InvalidVersion:
        return True


def _in_range(version: str, spec: SpecifierSet) -> bool:
    try:
        return _as_pep440(version) in spec
    except InvalidVersion:
        return False


def check_selector(selector: str, where: str) -> None:
    """Reject a malformed selector at config-load time, before any network."""
    if selector in ("all", PREVIEW) or _LATEST.match(selector) or _EVERY.match(selector):
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
    key: Callable[[str], Any] = sort_key,
) -> list[str]:
    """Resolve selectors against what the registry has, oldest first in ``key``'s order (the
    ecosystem's own).

    An explicit version is always honoured (even a prerelease); pattern selectors see
    prereleases only when asked, and never yanked releases."""
    every = sorted((r for r in releases), key=lambda r: key(r.version))
    pool = [r.version for r in every if not r.yanked and (prereleases or not r.prerelease)]
    known = [r.version for r in every]
    chosen: set[str] = set()
    for sel in select:
        if sel == PREVIEW:
            chosen.update(preview(every, key))
            continue
        if sel in known and sel not in pool:
            chosen.add(sel)  # explicitly named prerelease/yanked version
            continue
        chosen.update(_one(sel, pool, package))
    for sel in exclude:
        chosen.difference_update(_one(sel, known, package))
    return sorted(chosen, key=key)


def preview(releases: list[Release], key: Callable[[str], Any] = sort_key) -> list[str]:
    """The pre-releases (not yanked) newer than the newest release that is not one."""
    stable = [key(r.version) for r in releases if not r.prerelease and not r.yanked]
    newest = max(stable) if stable else None
    return [r.version for r in releases
            if r.prerelease and not r.yanked and (newest is None or key(r.version) > newest)]


def sorted_versions(values: pd.Series | list[str]) -> list[str]:
    return sorted(set(values), key=sort_key)


def newest_release(published: list[str]) -> str | None:
    """The newest release users are on, not a preview newer than it (a preview only where
    nothing else was published): what a candidate build is compared with."""
    ordered = sorted_versions(published)
    chosen = [v for v in ordered if not is_prerelease(v)] or ordered
    return chosen[-1] if chosen else None


def sort_by_version(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    return frame.sort_values(column, key=lambda s: s.map(sort_key), kind="stable")
