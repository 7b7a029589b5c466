"""A candidate build measured as if it were a release of its side: its artifact is checked
against the family's package, and its label replaces that side's selection, so its cells are
planned, measured and stored like any other (in a results set of its own)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from matrix.ecosystems.artifacts import Artifact, read_artifact
from matrix.errors import UserError
from matrix.families.registry import FAMILIES
from matrix.pipeline.planning import Resolved
from matrix.versions import Release

__all__ = ["Candidate", "candidate", "with_candidates"]


@dataclass(frozen=True)
class Candidate:
    family: str
    side: str  # "sdk" | "cli"
    artifact: Artifact

    @property
    def label(self) -> str:
        return self.artifact.label


def candidate(family: str, side: str, path: Path) -> Candidate:
    """``path`` as a candidate of ``family``'s ``side``; an artifact of another package, or of
    an ecosystem that side does not install from, is an error naming both."""
    fam = FAMILIES.get(family)
    if fam is None or (fam.standin and side == "cli"):
        raise UserError(f"--family {family!r}: a candidate {side} needs a family with a released {side}; "
                        f"valid: {', '.join(f for f, x in FAMILIES.items() if not x.standin)}")
    artifact = read_artifact(path)
    ecosystem, package = (fam.sdk_ecosystem, fam.sdk_package) if side == "sdk" else (fam.cli_ecosystem, fam.cli_package)
    if (artifact.ecosystem, artifact.package.lower().replace("_", "-")) != (ecosystem, package.lower()):
        raise UserError(f"{path}: an artifact of {artifact.package} {artifact.version} ({artifact.ecosystem}), not "
                        f"of {family}'s {side} {package} ({ecosystem})")
    return Candidate(family, side, artifact)


def with_candidates(resolved: list[Resolved], candidates: list[Candidate]) -> list[Resolved]:
    """Each candidate's family measures it instead of its side's selection."""
    out = []
    for r in resolved:
        for c in (c for c in candidates if c.family == r.family):
            release = Release(c.label, None, prerelease=False)
            if c.side == "sdk":
                r = replace(r, sdk_versions=[c.label], sdk_releases=[*r.sdk_releases, release])
            else:
                r = replace(r, cli_versions=[c.label], cli_releases=[*r.cli_releases, release])
        out.append(r)
    return out
