"""The cosmo-python family: what it plans, installs, measures and publishes."""


from __future__ import annotations

from dataclasses import dataclass

from matrix.ecosystems.pypi_env import UvVenv
from matrix.execute.environment import Environment
from matrix.families.base import Context, Family, MakeEnv, Picture, Planning, SiteView, Vocabulary
from matrix.families.cosmo.checks import (
    COSMO_RULES,
    SET_PREFIX,
    STANDIN_VERSION,
    check_for_set,
    checks_of,
    declared_sets,
)
from matrix.families.cosmo.pages import cosmo_pages, cosmo_pictures
from matrix.families.cosmo.probe import CosmoPayload, run_cosmo
from matrix.families.payload import Payload
from matrix.families.rules import Rules
from matrix.model import PROMISE_OUTCOMES, TOLERANCE_OUTCOMES, Cell, Row

__all__ = ["Cosmo", "family"]


GUIDE = ("[Cosmo](cosmo/index.md): every cosmo-ai-sdk release against a strict stand-in: tolerance,\n"
         "  identity and strict-server findings, each promise of its design next to what every release does.")


@dataclass(frozen=True)
class Cosmo(Family):
    phases: tuple[str, ...] = ("stand-in", "closed sets")
    vocabularies: tuple[Vocabulary, ...] = (Vocabulary("Tolerance checks", TOLERANCE_OUTCOMES, kind="Tolerance: "),
                                            Vocabulary("Promise checks", PROMISE_OUTCOMES[:2], kind="Promise check: "))
    title: str = "Cosmo"
    rules: Rules = COSMO_RULES
    guide: str = GUIDE

    def front_page(self) -> str:
        return f"cosmo/{self.name}.md"

    def release_page(self, side: str, version: str) -> str:
        return f"cosmo/{self.name}/{side}-{version}.md"

    def payload_model(self, probe: str) -> type[Payload]:
        return CosmoPayload

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

    def check_pages(self, view: SiteView) -> dict[str, str] | None:
        return {}  # its own grid, with each promise of its design (``pages``)

    def pages(self, view: SiteView) -> dict[str, str]:
        return cosmo_pages(view, self, Cosmo)

    def pictures(self, view: SiteView) -> list[Picture]:
        return cosmo_pictures(view, self, Cosmo)


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
