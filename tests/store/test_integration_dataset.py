"""The dataset with real runs: two runs on one results directory, fold, and verify.

cosmo-ai-sdk 0.6.1 against the stand-in: real cells, quick to measure."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

CONFIG = '[families.cosmo-python]\nprobes = ["tolerance", "identity"]\nsdk.select = ["0.6.1"]\n'


def cli(*args: str, wait: bool = True) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-m", "matrix.commands.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "COMPAT_MATRIX_DATA": ""})
    if wait:
        proc.wait(timeout=900)
    return proc


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    tmp = tmp_path_factory.mktemp("two-runs")
    config = tmp / "m.toml"
    config.write_text(CONFIG)
    results = tmp / "results"
    common = ("--config", str(config), "--results", str(results))  # no committed history: cli() says so
    first = cli("run", *common, wait=False)
    deadline = time.monotonic() + 600
    lock = results / ".compat-matrix.execute.lock"
    while not (lock.exists() and lock.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.1)
    second = cli("run", *common)  # while the first holds the directory
    third = cli("run", *common, "--wait", wait=False)  # waits for it, then finds nothing to measure
    out1, err1 = first.communicate(timeout=900)
    out3, err3 = third.communicate(timeout=900)
    out2, err2 = second.communicate()
    return {"tmp": tmp, "config": config, "results": results, "first": (first.returncode, out1, err1, first.pid),
            "second": (second.returncode, out2, err2), "third": (third.returncode, out3, err3)}


def test_a_second_run_on_the_same_results_exits_2_naming_the_first(measured: dict[str, object]) -> None:
    code, _out, err = measured["second"]  # type: ignore[misc]
    first_pid = measured["first"][3]  # type: ignore[index]
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1, err
    assert f"pid {first_pid}" in lines[0] and "in use by `compat-matrix run" in lines[0] and "Traceback" not in err


def test_a_waiting_run_measures_nothing_twice(measured: dict[str, object]) -> None:
    code1, *_ = measured["first"]  # type: ignore[misc]
    code3, out3, err3 = measured["third"]  # type: ignore[misc]
    assert code1 == 0 and code3 == 0, err3
    assert "0 to measure" in out3
    lines = (Path(str(measured["results"])) / "rows.jsonl").read_text().splitlines()
    keys = [(r["mutation"], r["sdk_version"]) for r in map(json.loads, lines)]
    assert len(keys) == len(set(keys)) > 10


def test_fold_then_verify_a_sample_of_the_history(measured: dict[str, object]) -> None:
    tmp, config, results = Path(str(measured["tmp"])), str(measured["config"]), str(measured["results"])
    data = tmp / "data"
    fold = cli("fold", "--results", results, "--data", str(data))
    out, err = fold.communicate()
    assert fold.returncode == 0 and "cells added" in out, err
    stored = (data / "index.json").read_text()
    assert "/tmp/" not in "".join(p.read_text() for p in data.rglob("*.jsonl"))  # no machine paths kept
    empty = tmp / "nothing-local"
    verify = cli("verify", "--config", config, "--sample", "6", "--seed", "1", "--data", str(data),
                 "--results", str(empty))
    out, err = verify.communicate()
    assert verify.returncode == 0, out + err
    assert "agreement: 6 of 6 (100.0 %)" in out
    assert (data / "index.json").read_text() == stored  # verify measures aside, never into the history
