"""The session probe against real releases: each scripted turn driven through a real SDK (one
release of each language) and the real CLI, the model our stand-in on 127.0.0.1.

Installs github-copilot-sdk 1.0.27, @github/copilot-sdk 1.0.14, the Go module at 1.0.14 and
@github/copilot 1.0.102 into the user's compat-matrix cache (a second run is warm)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from matrix.execute import proc
from matrix.execute.cache import cache_root
from matrix.families.copilot.session.model_standin import TURNS, file_name
from matrix.families.copilot.session.probe import nonces_of
from matrix.model import Row
from matrix.pipeline.config import Plan
from matrix.pipeline.runner import Cell, Runner
from matrix.store.results import Store

pytestmark = pytest.mark.integration

CELLS = [("copilot-python", "1.0.27"), ("copilot-node", "1.0.14"), ("copilot-go", "1.0.14")]
CLI = "1.0.102"


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Row]]:
    results = tmp_path_factory.mktemp("results")
    plan = Plan.model_validate({"families": {f: {} for f, _ in CELLS}})
    runner = Runner(plan, Store(results), cache_root(), proc.Reaper())
    rows = runner.run([Cell(f, sdk, CLI, "session") for f, sdk in CELLS], jobs=3)
    return results, {r.family: r for r in rows}


@pytest.mark.parametrize(("family", "sdk"), CELLS)
def test_every_scripted_turn_does_what_it_says_through_a_real_sdk_and_cli(
        measured: tuple[Path, dict[str, Row]], family: str, sdk: str) -> None:
    row = measured[1][family]
    assert row.outcome in ("compatible", "surfaced"), row.error_message
    turns = {t["name"]: t for t in row.get("turns")}
    assert set(turns) == set(TURNS) and all(t["held"] for t in turns.values()), turns
    assert row.get("route") == "provider"  # the session's provider kept the model call on 127.0.0.1
    assert row.get("tool_ran") and row.get("model_saw_tool")  # the tool ran, the model saw its result
    assert "shell" in row.get("asked")  # the CLI asked the application before running a shell command
    events = row.get("events")
    assert events.get("session.idle") == "typed" and events.get("assistant.message") == "typed"
    assert not row.get("leaked") and row.per_sdk is False


@pytest.mark.parametrize(("family", "sdk"), CELLS)
def test_the_stand_ins_log_is_the_evidence_of_what_reached_the_model(
        measured: tuple[Path, dict[str, Row]], family: str, sdk: str) -> None:
    results, rows = measured
    log = results / rows[family].detail["standin_log"]
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    nonces = nonces_of(family, sdk, CLI)
    shown = json.dumps([c.get("messages") for c in calls if c["path"].endswith("/chat/completions")])
    assert nonces["tool"].upper() in shown  # the tool's result, as the application's handler returned it
    assert all(c["path"].startswith("/v1/") for c in calls if c["path"].endswith("/chat/completions"))
    written = rows[family].detail["work_files"]
    assert file_name(nonces["approved"]) in written and file_name(nonces["denied"]) not in written
