"""The whole committed dataset, damaged as a checkout gets damaged: every fault of
tests/store/faults.py on a copy of data/, through every command that reads the dataset (one
line naming the file, the line and the rule, exit 2, nothing changed); and fold killed with
SIGKILL in each of its phases in turn, after which the dataset is the old one or the new one,
whole, with no stray file."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from matrix.commands.cli import main
from matrix.store.dataset import Dataset
from matrix.store.results import Store, save_releases
from matrix.store.switch import STAGE, TRACE_ENV
from tests.conftest import ROOT, site_root
from tests.store.faults import FAULTS, Fault, fingerprint

pytestmark = pytest.mark.integration  # starts no harness process: tests/conftest.py BESIDE_CELLS

REAL = ROOT / "data"


@pytest.fixture
def data(tmp_path: Path) -> Path:
    shutil.copytree(REAL, tmp_path / "data", ignore=shutil.ignore_patterns("*.lock"))
    return tmp_path / "data"


def remeasured(data: Path, results: Path, family: str = "copilot-go") -> Path:
    """Results that measure every cell of ``family`` again (a few with another outcome): a fold
    of them rewrites every file of the family."""
    rows = [r for r in Dataset(data).read()[0] if r.family == family]
    store = Store(results)
    for i, r in enumerate(rows):
        moved = {"outcome": "hang"} if i % 97 == 0 and r.probe == "handshake" else {}
        store.append(r.updated(measured_at="2026-12-30T00:00:00+00:00", **moved))
    save_releases(results, {family: Dataset(data).releases()[family]})
    return results


def commands(tmp: Path, data: Path) -> list[list[str]]:
    results = tmp / "results"
    root = site_root(tmp / "repo") if not (tmp / "repo").exists() else tmp / "repo"
    d = ["--data", str(data)]
    return [
        ["report", *d, "--results", str(tmp / "none")],
        ["build", *d, "--results", str(tmp / "none"), "--root", str(root), "--site", str(tmp / "site")],
        ["pins", "--family", "copilot-python", "--sdk", "1.0.27", *d, "--results", str(tmp / "none")],
        ["can-i-ship", "--family", "copilot-python", "--sdk", "1.0.27", *d, "--results", str(tmp / "none")],
        ["changes", *d],
        ["fold", "--results", str(results), *d],
        ["verify", "--sample", "1", *d, "--results", str(tmp / "none")],
        ["diff", str(data), str(data)],
        ["run", "--family", "copilot-python", "--sdk", "1.0.27", "--cli", "1.0.102", "--probe", "handshake", *d,
         "--results", str(tmp / "run")],
    ]


@pytest.fixture(scope="module")
def real() -> Dataset:
    """data/, read once for the module (each read verifies the whole dataset)."""
    dataset = Dataset(REAL)
    dataset.snapshot()
    return dataset


@pytest.mark.parametrize("fault", FAULTS, ids=[f.name for f in FAULTS])
def test_every_command_that_reads_the_dataset_refuses_a_damaged_one(
        fault: Fault, data: Path, real: Dataset, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "results").mkdir()
    Store(tmp_path / "results").append(real.read()[0][0])
    save_releases(tmp_path / "results", {"copilot-python": real.releases()["copilot-python"]})
    fault.inject(data)
    pattern = fault.says(data)
    before = fingerprint(data)
    for argv in commands(tmp_path, data):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and re.search(pattern, err), (argv, err)
    assert fingerprint(data) == before
    assert not (tmp_path / "site").exists() and not (tmp_path / "run" / "rows.jsonl").exists()


PHASES = ["read", "validate", "stage", "commit", "apply", "clean"]


def rows_and_log(data: Path) -> tuple[dict[str, str], int]:
    """The dataset's row files, and how many folds its changelog records."""
    prints = fingerprint(data)
    log = (data / "changelog.jsonl").read_text().count("\n")
    return {k: v for k, v in prints.items() if k.endswith(".jsonl") and k != "changelog.jsonl"}, log


def test_fold_killed_in_every_phase_leaves_the_old_dataset_or_the_new_one(data: Path, tmp_path: Path) -> None:
    results = remeasured(data, tmp_path / "results")
    old = rows_and_log(data)
    reference = tmp_path / "reference"
    shutil.copytree(data, reference, ignore=shutil.ignore_patterns("*.lock"))
    assert main(["fold", "--results", str(results), "--data", str(reference)]) == 0
    new = rows_and_log(reference)
    assert new != old and new[1] == old[1] + 1
    rng = random.Random(7)
    hit: dict[str, int] = {}
    kills = 0
    trace = tmp_path / "trace"
    while set(hit) != set(PHASES) and kills < 120:
        target = next(p for p in PHASES if p not in hit)
        trace.write_text("")
        env = {**os.environ, TRACE_ENV: str(trace)}
        fold = subprocess.Popen([sys.executable, "-m", "matrix.commands.cli", "fold", "--results", str(results),
                                 "--data", str(data)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        delay = rng.uniform(0, 0.004 if target in ("apply", "clean", "commit") else 0.05)
        while fold.poll() is None and target not in trace.read_text().split():
            time.sleep(0.0005)
        time.sleep(delay)
        fold.send_signal(signal.SIGKILL)
        fold.wait()
        kills += 1
        seen = trace.read_text().split()
        if fold.returncode == -signal.SIGKILL and seen and seen[-1] in PHASES:
            hit[seen[-1]] = hit.get(seen[-1], 0) + 1
        # Whatever the kill left, the next command sees one whole version, and no stray file.
        assert main(["check", "--data", str(data)]) == 0
        state = rows_and_log(data)
        assert state in (old, new), (seen, fold.returncode)
        # Killed before its commit: the old dataset; after (apply, clean): the new one, finished by
        # `check`. Between writing the commit and noting "apply" it may be either; a fold that
        # ended before the kill is the new one.
        if fold.returncode == 0:
            assert state == new
        elif seen and seen[-1] != "commit":
            assert state == (new if seen[-1] in ("apply", "clean", "done") else old), seen
        assert not (data / STAGE).exists()
        assert not [p for p in data.rglob("*") if p.name.endswith(".tmp")]
        if state == new:  # back to the old dataset for the next kill
            shutil.rmtree(data)
            shutil.copytree(REAL, data, ignore=shutil.ignore_patterns("*.lock"))
            assert rows_and_log(data) == old
    assert set(hit) == set(PHASES), (hit, kills)
    print(json.dumps({"kills": kills, "phases_hit": hit}))
