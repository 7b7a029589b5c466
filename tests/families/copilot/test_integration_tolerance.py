"""The unknown-event-type rule on real versions through the real shim: surfaced by a current
SDK, lost by the first release (its enum has no fallback, the decode error goes to the
asyncio exception handler and the event never reaches the application)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from matrix.execute import proc
from matrix.execute.cache import cache_root
from matrix.pipeline.config import Plan
from matrix.pipeline.runner import Cell, Runner
from matrix.store.results import Store, load_frame

pytestmark = pytest.mark.integration

CELLS = {("1.0.27", "1.0.102"): "surfaced", ("0.1.10", "0.0.382"): "lost"}


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tolerance")
    plan = Plan.model_validate({"families": {"copilot-python": {}}})
    runner = Runner(plan, Store(out), cache_root(), proc.Reaper())
    runner.run([Cell("copilot-python", s, c, "tolerance", "event.unknown-type") for s, c in CELLS], jobs=2)
    return out


def test_unknown_event_type_outcomes(results: Path) -> None:
    frame, _ = load_frame(results)
    got = {(r.sdk_version, r.cli_version): r.outcome for r in frame.itertuples()}
    assert got == CELLS, frame[["sdk_version", "outcome", "error_message"]].to_string()


def test_surfaced_event_keeps_its_raw_type(results: Path) -> None:
    frame, _ = load_frame(results)
    row = frame[frame.sdk_version == "1.0.27"].iloc[0]
    assert row.detail["observed"]["mutated"]["raw_type"] == "compat_matrix.unknown_event"
    assert row.detail["observed"]["canary"] is True


def test_lost_event_left_its_decode_error_as_evidence(results: Path) -> None:
    frame, _ = load_frame(results)
    row = frame[frame.sdk_version == "0.1.10"].iloc[0]
    assert "compat_matrix.unknown_event" in " ".join(row.detail["loop_errors"])


def test_transcript_shows_both_directions_and_the_injection(results: Path) -> None:
    frame, _ = load_frame(results)
    for row in frame.itertuples():
        entries = [json.loads(line) for line in (results / row.detail["transcript"]).read_text().splitlines()]
        dirs = {e["dir"] for e in entries}
        assert {"sdk->cli", "cli->sdk", "shim->sdk"} <= dirs
        injected = [e for e in entries if e["dir"] == "shim->sdk"]
        assert any(e["msg"]["params"]["event"]["type"] == "compat_matrix.unknown_event" for e in injected)
