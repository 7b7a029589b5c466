"""Config + registry -> the concrete list of cells to measure."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from matrix.ecosystems import get
from matrix.ecosystems.discovery import Discovery
from matrix.errors import UserError
from matrix.families.base import Family, Planning
from matrix.families.registry import FAMILIES
from matrix.model import Cell, Row
from matrix.pipeline.config import Plan, Selection
from matrix.pipeline.shard import Shard
from matrix.store.results import Releases
from matrix.versions import Release, apply_selection

__all__ = ["Resolved", "only_new", "phases", "resolve"]


@dataclass(frozen=True)
class Resolved:
    family: str
    sdk_versions: list[str]
    cli_versions: list[str]
    probes: list[str]
    sdk_releases: list[Release]
    cli_releases: list[Release]
    # Where its family is found: the installed families, or a test's.
    families: Mapping[str, Family] = field(default_factory=lambda: FAMILIES, compare=False, repr=False)

    def in_shard(self, cells: list[Cell], shard: Shard | None) -> list[Cell]:
        if shard is None:
            return cells
        return [c for c in cells if shard.owns(self.family, c.sdk_version, self.sdk_versions)]

    @property
    def standin(self) -> bool:
        return self.families[self.family].standin is not None

    def cells(self, phase: str, rows: list[Row], sdk: str | None = None) -> list[Cell]:
        """The family's cells of ``phase``, planned from ``rows`` (the history and this run's);
        ``sdk``: of that SDK release alone (``rows`` need hold only its own)."""
        planning = Planning([sdk] if sdk is not None else self.sdk_versions, self.cli_versions, self.probes, rows)
        return self.families[self.family].plan(phase, planning)


def phases(resolved: list[Resolved]) -> list[str]:
    """Every phase of the families being measured, in the order their families plan them."""
    return list(dict.fromkeys(p for r in resolved for p in r.families[r.family].phases))


def _pick(discovery: Discovery, ecosystem: str, package: str, sel: Selection,
          override: list[str], hints: tuple[tuple[str, str], ...] = ()) -> tuple[list[str], list[Release]]:
    releases = discovery.releases(ecosystem, package, hints)
    if override:
        sel = Selection(select=override, exclude=[], prereleases=True)
    return apply_selection(package, releases, sel.select, sel.exclude, sel.prereleases, get(ecosystem).key), releases


def resolve(plan: Plan, discovery: Discovery, families: list[str], sdk: list[str],
            cli: list[str], probes: list[str]) -> list[Resolved]:
    chosen = families or list(plan.families)
    for name in chosen:
        if name not in plan.families:
            valid = ", ".join(plan.families) or "none"
            raise UserError(f"--family {name!r} is not in the config; configured families: {valid}")
    out = []
    for name in chosen:
        fam, conf = FAMILIES[name], plan.families[name]
        for p in probes:
            if p not in fam.probes:
                raise UserError(f"--probe {p!r} is not a probe of {name}; valid: {', '.join(fam.probes)}")
        sdks, sdk_rel = _pick(discovery, fam.sdk_ecosystem, fam.sdk_package, conf.sdk, sdk, fam.version_hints)
        if fam.standin:
            if cli and fam.standin not in cli:
                if name in families:
                    raise UserError(f"--cli: {name}'s other side is the local stand-in ({fam.standin}), not a "
                                    "released CLI; drop --cli for this family")
                continue  # --cli picks CLI columns; this family has none
            clis, cli_rel = [fam.standin], list[Release]()
        else:
            clis, cli_rel = _pick(discovery, fam.cli_ecosystem, fam.cli_package, conf.cli, cli)
        if not sdks or not clis:
            side = "sdk" if not sdks else "cli"
            raise UserError(f"families.{name}.{side}: the selection matches no released version; "
                            "widen it or run `compat-matrix discover` to see what exists")
        out.append(Resolved(name, sdks, clis, probes or list(conf.probes) or list(fam.default_probes), sdk_rel,
                            cli_rel))
    return out


def only_new(cells: list[Cell], known: Releases, standin: bool, clis: list[str] | None = None) -> list[Cell]:
    """The cells of versions no earlier run selected (``known``: the stored release lists).
    A stand-in family's other side is ours, never new; so is a CLI "version" that is no
    release of the selection (``clis``), as a check's "none" when no release fits it."""
    out = []
    for c in cells:
        seen = known.get(c.family, {})
        cli_new = not standin and (clis is None or c.cli_version in clis) and c.cli_version not in seen.get("cli", {})
        if c.sdk_version not in seen.get("sdk", {}) or cli_new:
            out.append(c)
    return out
