"""scripts/session_report.py reads what the session cells say (no install: a unit test, and
the smoke run the integration suite asks of every script)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from matrix.store.results import Store
from tests.conftest import ROOT, make_row


def test_the_report_counts_outcomes_follows_the_route_and_names_the_event_an_sdk_fails_on(tmp_path: Path) -> None:
    store = Store(tmp_path / "results")
    for cli in ("1.0.1", "1.0.2", "1.0.3", "1.0.4"):
        store.append(make_row("1.0.0", cli, "compatible", protocol=3))
    store.append(make_row("1.0.0", "1.0.1", "compatible", probe="session", route="api-url", seconds=10.0))
    store.append(make_row("1.0.0", "1.0.2", "lost", probe="session", route="provider", seconds=12.0,
                          events={"session.idle": "typed", "model.turn_started": "lost"},
                          error_type="EventLost", error_message="model.turn_started never reached it"))
    store.append(make_row("1.0.0", "1.0.3", "infra-error", probe="session", seconds=1.0))
    store.append(make_row("1.0.0", "1.0.4", "crashed", probe="session", route="provider", seconds=14.0,
                          events={"model.turn_started": "typed"},
                          error_message="ValueError: 'model.turn_started' is not a valid SessionEventType"))
    res = subprocess.run([sys.executable, str(ROOT / "scripts" / "session_report.py"), "--data", "",
                          "--results", str(tmp_path / "results")], capture_output=True, text=True, cwd=ROOT,
                         timeout=120)
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert "copilot-python: 3 session cells (compatible 1, crashed 1, lost 1)" in out
    assert "36 s of cell time" in out
    # 1.0.3's session measured nothing: the provider span does not run across it.
    assert "route api-url: 1.0.1" in out and "route provider: 1.0.2, 1.0.4" in out
    assert "sdk 1.0.0 fails on model.turn_started with CLI 1.0.2, 1.0.4" in out
    assert "sdk 1.0.0 crashed with CLI 1.0.4: ValueError" in out
