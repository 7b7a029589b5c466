"""A CLI left running after stop() is the SDK's doing, not our launcher's: the same real pairs
measured through the launcher and with the SDK given the CLI's own entry point.

github-copilot-sdk 1.0.0 against @github/copilot 1.0.70 leaves the native CLI running after
stop() returns (it never closes the pipe, and the application lives on); 1.0.17 against
1.0.102 leaves nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from matrix.execute import proc
from matrix.execute.cache import cache_root
from matrix.model import Row
from matrix.pipeline.config import Plan
from matrix.pipeline.runner import Cell, Runner
from matrix.store.results import Store

pytestmark = pytest.mark.integration

LEAKS, CLEAN = ("1.0.0", "1.0.70"), ("1.0.17", "1.0.102")


def measure(results: Path, direct: bool) -> dict[tuple[str, str], Row]:
    plan = Plan.model_validate({"families": {"copilot-python": {}}})
    runner = Runner(plan, Store(results), cache_root(), proc.Reaper(), direct_cli=direct)
    rows = runner.run([Cell("copilot-python", sdk, cli, "handshake") for sdk, cli in (LEAKS, CLEAN)], jobs=2)
    return {(r.sdk_version, r.cli_version): r for r in rows}


@pytest.fixture(scope="module")
def through_launcher(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Row]:
    return measure(tmp_path_factory.mktemp("launcher"), direct=False)


@pytest.fixture(scope="module")
def direct(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Row]:
    return measure(tmp_path_factory.mktemp("direct"), direct=True)


def test_the_leak_is_a_degraded_cell_that_names_the_process(through_launcher: dict[tuple[str, str], Row]) -> None:
    row = through_launcher[LEAKS]
    assert row.outcome == "degraded", row.error_message
    assert row.error_type == "LeftRunning"
    assert row.get("leaked") and row.error_message.startswith(f"left {row.get('leaked')[0]} running after stop()")
    assert row.get("exit_after_stop_seconds") is None
    assert row.get("protocol") == 3  # it connected and negotiated: the leak is what degrades it


def test_a_clean_pair_is_compatible_and_timed(through_launcher: dict[tuple[str, str], Row]) -> None:
    row = through_launcher[CLEAN]
    assert row.outcome == "compatible", row.error_message
    assert row.get("leaked") == []
    assert row.get("exit_after_stop_seconds") is not None and row.get("exit_after_stop_seconds") < 5


def test_without_the_launcher_the_sdk_leaves_the_same(direct: dict[tuple[str, str], Row],
                                                      through_launcher: dict[tuple[str, str], Row]) -> None:
    for pair in (LEAKS, CLEAN):
        # The CLI's own entry point: no launcher log, so no verdict; what stop() left is measured all the same.
        assert direct[pair].get("observed_cli_version") == pair[1]
        assert direct[pair].get("leaked") == through_launcher[pair].get("leaked"), pair
    assert direct[LEAKS].get("leaked") and not direct[CLEAN].get("leaked")
