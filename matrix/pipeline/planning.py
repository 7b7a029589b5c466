"""Config + registry -> the concrete list of cells to measure."""

from __future__ import annotations

from dataclasses import dataclass

from matrix.ecosystems.discovery import Discovery
from matrix.errors import UserError
from matrix.families.copilot.shim import RULES
from matrix.families.cosmo.checks import SET_PREFIX, check_for_set, checks_of, declared_sets
from matrix.families.registry import FAMILIES
from matrix.pipeline.config import Plan, Selection
from matrix.pipeline.runner import NO_CLI, Cell
from matrix.pipeline.shard import Shard
from matrix.probes.verdict import LEFT_RUNNING
from matrix.store.results import Releases, Row
from matrix.versions import Release, apply_selection, sort_key

__all__ = ["Resolved", "only_new", "resolve"]


@dataclass(frozen=True)
class Resolved:
    family: str
    sdk_versions: list[str]
    cli_versions: list[str]
    probes: list[str]
    sdk_releases: list[Release]
    cli_releases: list[Release]

    def in_shard(self, cells: list[Cell], shard: Shard | None) -> list[Cell]:
        if shard is None:
            return cells
        return [c for c in cells if shard.owns(self.family, c.sdk_version, self.sdk_versions)]

    @property
    def standin(self) -> bool:
        return FAMILIES[self.family].standin is not None

    def standin_cells(self) -> list[Cell]:
        """A stand-in family's cells: every SDK version x every check of every probe."""
        if not self.standin:
            return []
        return [Cell(self.family, s, c, p, check.name) for p in self.probes for check in checks_of(p)
                for s in self.sdk_versions for c in self.cli_versions]

    def closed_set_cells(self, rows: list[Row]) -> list[Cell]:
        """A stand-in family's checks of the closed sets each release's own models declare (its
        agent reads them in every check; the named checks cover four of them): one cell per
        release and closed set the stand-in can carry."""
        if not self.standin or "tolerance" not in self.probes:
            return []
        cells = []
        for sdk in self.sdk_versions:
            names = {check_for_set(e) for e in declared_sets(rows, self.family, sdk)}
            cells += [Cell(self.family, sdk, cli, "tolerance", name) for name in sorted(n for n in names if n)
                      if name.startswith(SET_PREFIX) for cli in self.cli_versions]
        return cells

    def cells(self) -> list[Cell]:
        """The handshake cells. Tolerance cells depend on their results: ``tolerance_cells``."""
        if "handshake" not in self.probes:
            return []
        return [Cell(self.family, s, c, "handshake") for s in self.sdk_versions for c in self.cli_versions]

    def contract_cells(self, rows: list[Row]) -> list[Cell]:
        """One cell per SDK version: the newest CLI its handshake failed against as it should
        (refused or launch-failed), to check what the SDK leaves behind."""
        if "contract" not in self.probes or self.standin:
            return []
        failed: dict[str, list[str]] = {}
        for r in rows:
            if (r.family == self.family and r.probe == "handshake" and r.outcome in ("refused", "launch-failed")
                    and r.cli_version in self.cli_versions):
                failed.setdefault(r.sdk_version, []).append(r.cli_version)
        return [Cell(self.family, sdk, max(failed[sdk], key=sort_key), "contract")
                for sdk in self.sdk_versions if sdk in failed]

    def tolerance_cells(self, rows: list[Row]) -> list[Cell]:
        """One cell per SDK version and rule, against the newest CLI that SDK version was
        measured to work with (compatible, or degraded only by what stop() left running: the
        session works all the same). An SDK version with none gets cells against ``NO_CLI``,
        which the runner records as not-applicable."""
        if "tolerance" not in self.probes or self.standin:
            return []
        works: dict[str, list[str]] = {}
        for r in rows:
            connected = r.outcome == "compatible" or (r.outcome == "degraded" and r.error_type == LEFT_RUNNING)
            if (r.family == self.family and r.probe == "handshake" and connected
                    and r.cli_version in self.cli_versions):
                works.setdefault(r.sdk_version, []).append(r.cli_version)
        return [Cell(self.family, sdk, max(works[sdk], key=sort_key) if sdk in works else NO_CLI, "tolerance", rule)
                for sdk in self.sdk_versions for rule in RULES]


def _pick(discovery: Discovery, ecosystem: str, package: str, sel: Selection,
          override: list[str], hints: tuple[tuple[str, str], ...] = ()) -> tuple[list[str], list[Release]]:
    releases = discovery.releases(ecosystem, package, hints)
    if override:
        sel = Selection(select=override, exclude=[], prereleases=True)
    return apply_selection(package, releases, sel.select, sel.exclude, sel.prereleases, ecosystem), releases


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
        out.append(Resolved(name, sdks, clis, probes or list(conf.probes), sdk_rel, cli_rel))
    return out


def only_new(cells: list[Cell], known: Releases, standin: bool) -> list[Cell]:
    """The cells of versions no earlier run selected (``known``: the stored release lists).
    A stand-in family's other side is ours, never new."""
    out = []
    for c in cells:
        seen = known.get(c.family, {})
        if c.sdk_version not in seen.get("sdk", {}) or (not standin and c.cli_version not in seen.get("cli", {})):
            out.append(c)
    return out
