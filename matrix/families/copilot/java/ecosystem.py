"""Maven repositories through mvn: the releases an artifact's repository metadata lists (read
where Maven itself fetched it: it asks the repositories its settings name, or its built-in
default, so no host name is written here), Maven's version order, and the range syntax of Maven
and Gradle."""

from __future__ import annotations

import re
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from matrix.ecosystems.base import Listing, Run
from matrix.errors import InfraError, UserError
from matrix.execute import proc
from matrix.execute.cache import cache_root
from matrix.families.copilot.java.mvntool import mvn_command
from matrix.versions import Release

__all__ = ["ECOSYSTEM", "Maven", "fetch_maven", "maven_key", "metadata_versions"]

_TOKEN = re.compile(r"(\d+|[a-z]+)")
# Maven's qualifiers, oldest first; an unknown one sorts after them all but before a release.
# Maven's qualifiers that come before a release, oldest first; any other qualifier (``java``,
# ``sp``) comes after it, as Maven's ComparableVersion orders them.
_QUALIFIERS = {"alpha": 0, "a": 0, "beta": 1, "b": 1, "milestone": 2, "m": 2, "rc": 3, "cr": 3, "snapshot": 4}


def maven_key(version: str) -> tuple[Any, ...]:
    """Maven's order in the cases its artifacts use: numbers compared as numbers, a release
    after its alpha, beta, milestone, rc and snapshot, and before any other qualified version of
    it (``0.3.0-java.2`` after ``0.3.0``)."""
    base, _, qualifier = version.partition("-")
    nums = tuple(int(p) if p.isdigit() else 0 for p in base.split("."))
    nums = nums + (0,) * (3 - len(nums))
    if not qualifier:
        return (nums, 1, ())
    parts = tuple((0, int(t), "") if t.isdigit() else (1, _QUALIFIERS.get(t, 5), t)
                  for t in _TOKEN.findall(qualifier.lower()))
    return (nums, 0 if is_prerelease(version) else 2, parts)


def is_prerelease(version: str) -> bool:
    """A qualifier Maven reads as before a release (alpha, beta, milestone, rc, snapshot)."""
    _, _, qualifier = version.partition("-")
    return any(t in _QUALIFIERS for t in _TOKEN.findall(qualifier.lower()))


def metadata_versions(xml_text: str) -> list[str]:
    root = ET.fromstring(xml_text)  # noqa: S314 (the repository's own metadata)
    return [v.text.strip() for v in root.iter("version") if v.text]


def fetch_maven(coordinate: str, local_repo: Path | None = None) -> list[Release]:
    """Every version the repositories' metadata of ``group:artifact`` lists, as they answered
    this call."""
    group, _, artifact = coordinate.partition(":")
    local_repo = local_repo or cache_root() / "maven"
    # -U: Maven asks the repositories again and rewrites their metadata even within its update
    # interval (without it, a second call in a day keeps the file it has and says nothing). A
    # file older than this call is what an earlier one was told: the repositories did not answer
    # this one (mvn may still exit 0, resolving from the local repository).
    argv, env = mvn_command(local_repo, "-U", "dependency:get", f"-Dartifact={coordinate}:RELEASE",
                            "-Dtransitive=false")
    started = time.time()
    res = proc.run(proc.Request(argv, env, Path.cwd(), timeout=300))
    folder = local_repo.joinpath(*group.split("."), artifact)
    on_disk = sorted(((p.stat().st_mtime, p) for p in folder.glob("maven-metadata-*.xml")), key=lambda m: m[0])
    found = [p for mtime, p in on_disk if mtime >= started]
    if not found:
        said = res.stdout + res.stderr
        if "Could not find metadata" in said or "Could not find artifact" in said:
            raise UserError(f"the Maven repositories have no artifact {coordinate!r}; check the family's package")
        stale = " (the metadata on disk is from an earlier call: not used)" if on_disk else ""
        raise InfraError(f"asking Maven for {coordinate}{stale}", said.strip()[-300:])
    versions = sorted({v for p in found for v in metadata_versions(p.read_text())}, key=maven_key)
    return [Release(v, None, is_prerelease(v)) for v in versions]


class Maven:
    name = "maven"
    tool = "mvn"

    def key(self, version: str) -> Any:
        return maven_key(version)

    def is_prerelease(self, version: str) -> bool:
        return is_prerelease(version)

    def releases(self, package: str, siblings: Callable[[], list[str]]) -> Listing:
        return fetch_maven(package), None

    def install(self, package: str, version: str) -> str:
        return f"mvn dependency:get -Dartifact={package}:{version}"

    def pin(self, package: str, runs: Sequence[Run], bad_inside: Sequence[str]) -> list[str]:
        """The newest working span, as Maven writes it (the dependency's ``<version>``) and as
        Gradle does; the older spans that also work as a comment."""
        if not runs:
            return []
        run = runs[-1]
        spec = f"[{run.first}]" if run.first == run.last else f"[{run.first},{run.last}]"
        lines = [f"<version>{spec}</version>", f'implementation("{package}:{spec}")']
        if len(runs) > 1:
            lines.append("<!-- also works: " + ", ".join(f"[{r.first},{r.last}]" for r in runs[:-1]) + " -->")
        return lines


ECOSYSTEM = Maven()  # registered in pyproject.toml (compat_matrix.ecosystems)
