"""Every script under scripts/ runs, at its smallest settings, so none can rot between the
sessions that quote its figures (bench_cell.py once ended in an AttributeError for months).
Real installs and real cells: the integration suite."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from matrix.store.results import Store, save_releases
from tests.conftest import ROOT, make_row

pytestmark = pytest.mark.integration

SCRIPTS = ROOT / "scripts"
# session_report.py installs nothing: its run is a unit test (tests/scripts/test_session_report.py).
SMOKED = {"batch_proof.py", "bench_cell.py", "bench_history.py", "bench_session.py", "bench_targets.py",
          "cpu_split.py", "session_report.py", "snapshot_pages.py", "timings.py"}


def script(name: str, *args: str, timeout: float = 1200, env: dict[str, str] | None = None) -> str:
    res = subprocess.run([sys.executable, str(SCRIPTS / name), *args], capture_output=True, text=True, cwd=ROOT,
                         timeout=timeout, env={**os.environ, **(env or {})})
    assert res.returncode == 0, f"{name} exited {res.returncode}:\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    return res.stdout


def test_every_script_has_a_smoke_run_here() -> None:
    assert {p.name for p in SCRIPTS.glob("*.py")} == SMOKED


def small_results(tmp: Path) -> Path:
    store = Store(tmp / "results")
    store.append(make_row("1.0.27", "1.0.102", "compatible", protocol=3, seconds=1.2, start_seconds=0.9,
                          stop_seconds=0.1, stops=[0.0] * 5, measured_at="2026-12-01T00:00:00+00:00"))
    store.append(make_row("0.1.15", "1.0.102", "refused", seconds=7.0, error_message="SDK protocol version mismatch",
                          measured_at="2026-12-01T00:00:00+00:00"))
    save_releases(tmp / "results", {"copilot-python": {"sdk": {"1.0.27": None, "0.1.15": None},
                                                       "cli": {"1.0.102": None}}})
    return tmp / "results"


def test_batch_proof_compares_batched_verdicts_with_the_stored_isolated_ones() -> None:
    out = script("batch_proof.py", "--family", "copilot-python", "--sdk", "1.0.27", "--kind", "history", "--jobs", "2")
    assert "disagreed 0" in out and "CLI starts:" in out and "verdicts from a batch:" in out


def test_bench_cell_times_a_real_cell_against_a_raw_client() -> None:
    out = script("bench_cell.py", "--sdk", "1.0.27", "--cli", "1.0.102", "--repeat", "1")
    assert "ratio harness / raw:" in out and "raw start + ping + exit" in out


def test_bench_session_times_a_real_session_against_a_raw_conversation() -> None:
    out = script("bench_session.py", "--sdk", "1.0.27", "--cli", "1.0.102", "--repeat", "1")
    assert "ratio harness / raw:" in out and "raw conversation (minimal JSON-RPC client)" in out


def test_bench_targets_prints_each_figure_beside_its_target() -> None:
    # A release the newest CLI refuses: one agent run, no repeated stops (the smallest run there is).
    out = script("bench_targets.py", "--family", "copilot-python", "--sdk", "0.1.15", "--probe", "handshake",
                 "--no-session", "--no-warm")
    assert "issue 31's targets on" in out and "copilot-python: CLI " in out and "(handshake 1)" in out, out
    assert "(a sample: not compared)" in out


def test_bench_history_runs_a_tiny_history_and_everything_after_it(tmp_path: Path) -> None:
    config = tmp_path / "tiny.toml"
    config.write_text('[run]\njobs = 2\nstops = 2\nstops_max = 2\ncache_budget_gb = 12\n\n'
                      '[families.copilot-python]\nprobes = ["handshake"]\nsdk.select = ["1.0.27"]\n'
                      'cli.select = ["1.0.92", "1.0.102"]\n')
    out = script("bench_history.py", "--work", str(tmp_path / "work"), "--config", str(config), "--jobs", "2")
    for figure in ("cold run, copilot-python handshake, 1 cells", "rerun, everything measured",
                   "one new CLI release (a column, 1 cells)", "site build on these results",
                   "site build, nothing changed"):
        assert figure in out, out


def test_cpu_split_sorts_a_command_s_cpu_by_kind(tmp_path: Path) -> None:
    out = script("cpu_split.py", "--out", str(tmp_path / "perf.data"), "--", sys.executable, "-c",
                 "sum(range(3_000_000))", timeout=300)
    assert "CPU by kind of process" in out and "the CLI's own processes alone need" in out


def test_snapshot_pages_writes_every_generated_page(tmp_path: Path) -> None:
    results = small_results(tmp_path)
    out = script("snapshot_pages.py", "--data", "", "--results", str(results),
                 str(tmp_path / "snap"), timeout=600)
    assert "pages written to" in out
    page = (tmp_path / "snap" / "matrix" / "copilot-python.md").read_text()
    assert "2 cells" in page and (tmp_path / "snap" / "api" / "v1" / "copilot-python" / "sdk" / "1.0.27.json").exists()


def test_timings_prints_the_figures_of_a_matrix(tmp_path: Path) -> None:
    out = script("timings.py", "--results", str(small_results(tmp_path)), timeout=120)
    assert "cells: 2 (2 probed)" in out and "start() median 0.90s" in out
