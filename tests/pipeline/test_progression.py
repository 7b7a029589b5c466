"""The contract a run's progression rests on: every installed family plans a phase of one SDK
release from that release's rows alone, so the release can move on while others are still in
the phase before (``matrix.pipeline.progression``). Checked on the committed history, where
every phase of every family has rows to plan from."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from matrix.families.registry import FAMILIES, type_row
from matrix.model import Row
from matrix.pipeline.planning import Resolved
from matrix.store.dataset import Dataset
from matrix.versions import sort_key
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def history() -> list[Row]:
    return Dataset(ROOT / "data", type_row).read()[0]


def releases(rows: list[Row], family: str, side: str) -> list[str]:
    return sorted({getattr(r, f"{side}_version") for r in rows if r.family == family}, key=sort_key)


def cases() -> Iterator[str]:
    yield from sorted(FAMILIES)


@pytest.mark.parametrize("name", list(cases()))
def test_a_family_plans_each_release_from_its_own_rows_alone(name: str, history: list[Row]) -> None:
    fam = FAMILIES[name]
    mine = [r for r in history if r.family == name]
    if not mine:
        pytest.skip(f"no rows of {name} in the history")
    sdks = releases(mine, name, "sdk")
    resolved = Resolved(name, sdks, [c for c in releases(mine, name, "cli") if c != "none"], list(fam.probes), [], [])
    for phase in fam.phases:
        together = resolved.cells(phase, history)
        for sdk in sdks:
            alone = resolved.cells(phase, [r for r in mine if r.sdk_version == sdk], sdk)
            assert alone == [c for c in together if c.sdk_version == sdk], (phase, sdk)
