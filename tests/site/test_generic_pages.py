"""A family that writes no pages gets the site's own: a second family with a stand-in (checks
alone, no pair probe) gets a grid of its own checks, linked from the home page, with none of
Cosmo's check names in it and its cells in none of Cosmo's pages."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from matrix.answers.analysis import rows_of
from matrix.execute.environment import Environment
from matrix.families.base import Context, Family, MakeEnv, Planning, SiteView
from matrix.families.registry import FAMILIES, cells_frame
from matrix.model import Cell, Row
from matrix.site.tree import page_set
from matrix.store.dataset import Sources
from tests.conftest import make_row


@dataclass(frozen=True, kw_only=True)
class Parrot(Family):
    """Checks of an SDK against a stand-in of its server, and nothing else (never measured here)."""

    def plan(self, phase: str, planning: Planning) -> list[Cell]:
        raise NotImplementedError

    def environments(self, cell: Cell, make: MakeEnv) -> tuple[Environment, Environment | None]:
        raise NotImplementedError

    def measure(self, cell: Cell, sdk: Environment, other: Environment | None, ctx: Context) -> Row:
        raise NotImplementedError


PARROT = Parrot(name="parrot-python", description="parrot-sdk against a stand-in of its server", sdk_ecosystem="pypi",
                sdk_package="parrot-sdk", cli_ecosystem="stand-in", cli_package="parrot stand-in",
                probes=("mimicry", "manners"), standin="parrot-1")


def view() -> SiteView:
    rows = [make_row(sdk, "parrot-1", outcome, family="parrot-python", probe=probe, mutation=check, per_sdk=True,
                     error_message="squawked at an unknown word" if outcome == "fatal" else None)
            for sdk, probe, check, outcome in [("1.0", "mimicry", "unknown-word", "fatal"),
                                               ("1.1", "mimicry", "unknown-word", "surfaced"),
                                               ("1.1", "mimicry", "extra-feather", "ignored"),
                                               ("1.1", "manners", "says-its-name", "kept")]]
    rows.append(make_row("0.5.1", "stand-in-1", "surfaced", family="cosmo-python", probe="tolerance",
                         mutation="enum.error-code"))
    families = {"parrot-python": PARROT, "cosmo-python": FAMILIES["cosmo-python"]}
    return SiteView(rows_of(cells_frame(rows)), {}, Sources(Path("/nonexistent-results")), families, "now")


def test_a_family_of_checks_that_writes_no_pages_gets_a_grid_of_its_own() -> None:
    pages = page_set(view())
    grid = pages["checks/parrot-python.md"]
    assert "## mimicry" in grid and "## manners" in grid
    assert "unknown-word" in grid and "extra-feather" in grid and "says-its-name" in grid
    assert "squawked at an unknown word" in grid  # what a cell said, in its tooltip
    assert "enum.error-code" not in grid  # Cosmo's checks are Cosmo's
    assert not any("parrot" in text for rel, text in pages.items() if rel.startswith("cosmo/"))
    assert "checks/parrot-python.md" in pages["index.md"]  # the home page links to it


def test_a_family_that_writes_its_check_pages_gets_none_of_the_sites() -> None:
    assert not any(rel.startswith("checks/cosmo") for rel in page_set(view()))
