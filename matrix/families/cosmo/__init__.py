"""cosmo-python: every release of ``cosmo-ai-sdk`` (PyPI, import ``cosmo_ai``) against a local
stand-in of the Cosmo backend (its real backend is not reachable here) that follows the wire
contract cosmo-ai-sdk's own source implements, and is as strict about inbound keys as Cosmo's
design says the real server is. Each release × each check of the design's promises is a
cell; the closed sets a release's own models declare become checks of their own."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from matrix.ecosystems.pypi_env import UvVenv
from matrix.execute.environment import Environment
from matrix.families.base import Context, Family, MakeEnv, Planning
from matrix.families.cosmo.checks import SET_PREFIX, STANDIN_VERSION, check_for_set, checks_of, declared_sets
from matrix.families.cosmo.probe import run_cosmo
from matrix.model import Cell, Row

if TYPE_CHECKING:
    import pandas as pd

    from matrix.store.dataset import Sources

__all__ = ["Cosmo", "family"]


@dataclass(frozen=True)
class Cosmo(Family):
    phases: tuple[str, ...] = ("stand-in", "closed sets")

    def plan(self, phase: str, planning: Planning) -> list[Cell]:
        if phase == "stand-in":  # every check of every selected probe, for every release
            return [Cell(self.name, s, c, p, check.name) for p in planning.probes for check in checks_of(p)
                    for s in planning.sdk_versions for c in planning.cli_versions]
        if phase == "closed sets" and "tolerance" in planning.probes:
            # The closed sets each release declares were read by the stand-in phase's agents.
            cells = []
            for sdk in planning.sdk_versions:
                names = {check_for_set(e) for e in declared_sets(planning.rows, self.name, sdk)}
                cells += [Cell(self.name, sdk, cli, "tolerance", name) for name in sorted(n for n in names if n)
                          if name.startswith(SET_PREFIX) for cli in planning.cli_versions]
            return cells
        return []

    def environments(self, cell: Cell, make: MakeEnv) -> tuple[Environment, Environment | None]:
        extras = {"extras": self.sdk_extras} if self.sdk_extras else {}
        return make(UvVenv, "sdk", self.sdk_package, cell.sdk_version, **extras), None

    def measure(self, cell: Cell, sdk: Environment, other: Environment | None, ctx: Context) -> Row:
        assert isinstance(sdk, UvVenv)
        return run_cosmo(cell, ctx.settings, ctx.scratch, sdk, ctx.results, ctx.reaper)

    def pages(self, frame: pd.DataFrame, sources: Sources) -> dict[str, str]:
        from matrix.families.cosmo.pages import cosmo_pages

        return cosmo_pages(frame, sources, sources.releases(), self.name)


family = Cosmo(
    name="cosmo-python",
    description="cosmo-ai-sdk (PyPI) against a local stand-in of the Cosmo backend",
    sdk_ecosystem="pypi",
    sdk_package="cosmo-ai-sdk",
    cli_ecosystem="stand-in",
    cli_package="cosmo stand-in",
    probes=("tolerance", "identity", "strictness"),
    sdk_extras=("websocket",),
    standin=STANDIN_VERSION,
)
