"""The releases a registry lists that the dataset has no cell of, and why: a pre-release older
than the newest release (what the preview channel leaves out), a pre-release, a yanked release,
or a release no selection has measured yet. Listed beside the measured ones, never hidden.

What the registry listed is stored beside the release dates, per side, as ``<side>-listed``:
``{version: kind}``, each kind one of ``KINDS``."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["KINDS", "LISTED", "Unmeasured", "listed_of", "unmeasured", "unmeasured_side"]

LISTED = "-listed"  # the side's key suffix in a family's releases.json
RELEASE, PRERELEASE, YANKED = "release", "pre-release", "yanked"
KINDS = (RELEASE, PRERELEASE, YANKED)

# Why each group was not measured, in the order shown.
OLDER_PREVIEW = "pre-releases older than the newest release (the preview channel has moved past them)"
NEWER_PREVIEW = "pre-releases newer than the newest release, not measured yet"
YANKED_WHY = "yanked from the registry (no new install gets them)"
NOT_YET = "releases not measured yet (no selection has included them)"
WHY = (OLDER_PREVIEW, NEWER_PREVIEW, YANKED_WHY, NOT_YET)


@dataclass(frozen=True)
class Unmeasured:
    why: str
    versions: list[str]  # oldest first, in the ecosystem's order


def listed_of(releases: Iterable[Any]) -> dict[str, str | None]:
    """``{version: kind}`` of a registry's releases (objects with ``version``, ``prerelease``
    and ``yanked``)."""
    return {r.version: YANKED if r.yanked else PRERELEASE if r.prerelease else RELEASE for r in releases}


def unmeasured(listed: Mapping[str, str], measured: Iterable[str], key: Callable[[str], Any]) -> list[Unmeasured]:
    """The listed releases with no cell, grouped by why, each group oldest first."""
    have = set(measured)
    stable = [key(v) for v, kind in listed.items() if kind == RELEASE]
    newest = max(stable) if stable else None
    groups: dict[str, list[str]] = {why: [] for why in WHY}
    for version, kind in listed.items():
        if version in have:
            continue
        if kind == YANKED:
            groups[YANKED_WHY].append(version)
        elif kind == PRERELEASE:
            older = newest is not None and key(version) < newest
            groups[OLDER_PREVIEW if older else NEWER_PREVIEW].append(version)
        else:
            groups[NOT_YET].append(version)
    return [Unmeasured(why, sorted(vs, key=key)) for why, vs in groups.items() if vs]


def unmeasured_side(releases: Mapping[str, Mapping[str, Any]], side: str, measured: Iterable[str],
                    key: Callable[[str], Any]) -> list[Unmeasured]:
    """``unmeasured`` of one side (``sdk``, ``cli``) of a family's stored releases (its
    releases.json: the side's ``<side>-listed`` table, none: nothing listed)."""
    kinds = {v: str(k) for v, k in releases.get(f"{side}{LISTED}", {}).items()}
    return unmeasured(kinds, measured, key)
