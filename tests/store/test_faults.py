"""A damaged dataset is never read as if it were whole: each fault injected into a small dataset
of real rows (tests/store/faults.py) is one line naming the file, the line and the rule, exit
2, and nothing changed; a hostile results file is refused by fold; a reader racing a fold sees
one version. The whole committed dataset, with every reading command and folds killed at every
phase: tests/store/test_integration_faults.py."""

from __future__ import annotations

import json
import re
import shutil
import threading
import time
from pathlib import Path

import pytest

from matrix.commands.cli import main
from matrix.execute.lock import Locked, sharing
from matrix.store.dataset import Dataset
from matrix.store.results import Store, save_releases
from tests.conftest import ROOT
from tests.store.faults import FAULTS, Fault, fingerprint

REAL = ROOT / "data"


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A dataset of real stored rows: every copilot-python cell of two SDK releases."""
    tmp = tmp_path_factory.mktemp("small")
    rows = [r for r in Dataset(REAL).read()[0]
            if r.family == "copilot-python" and r.sdk_version in ("0.1.15", "1.0.27")]
    store = Store(tmp / "results")
    for r in rows:
        store.append(r)
    releases = Dataset(REAL).releases()["copilot-python"]
    save_releases(tmp / "results", {"copilot-python": releases})
    Dataset(tmp / "data").fold(tmp / "results", at="2026-12-01T00:00:00+00:00")
    return tmp / "data"


@pytest.fixture
def data(small: Path, tmp_path: Path) -> Path:
    shutil.copytree(small, tmp_path / "data", ignore=shutil.ignore_patterns("*.lock"))
    return tmp_path / "data"


def one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


def test_the_small_dataset_keeps_every_rule(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--data", str(data)]) == 0
    assert "every rule kept" in capsys.readouterr().out


@pytest.mark.parametrize("fault", FAULTS, ids=[f.name for f in FAULTS])
def test_a_fault_is_one_line_exit_2_and_nothing_changed(fault: Fault, data: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    fault.inject(data)
    pattern = fault.says(data)
    before = fingerprint(data)
    assert main(["check", "--data", str(data)]) == 2
    assert re.search(pattern, capsys.readouterr().out), pattern
    for argv in (["report"], ["pins", "--family", "copilot-python", "--sdk", "1.0.27"]):
        assert main([*argv, "--data", str(data), "--results", str(tmp_path / "none")]) == 2
        line = one_line(capsys)
        assert re.search(pattern, line), (argv, line)
        assert "compatible" not in line.split("[rule:")[0][-30:]  # an error, not an answer
    assert fingerprint(data) == before


def test_a_dataset_named_but_not_there_is_an_error_not_an_empty_history(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "results"
    Store(results).append(Dataset(REAL).read()[0][0])
    assert main(["pins", "--family", "copilot-python", "--sdk", "1.0.27", "--data", str(tmp_path / "dta"),
                 "--results", str(results)]) == 2
    assert re.search(r"--data .*/dta: no dataset there", one_line(capsys))


def test_pins_for_a_version_never_released_is_exit_2(data: Path, capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from matrix.commands import common

    class Registry:
        def __init__(self, *args: object, **kw: object) -> None:
            pass

        def releases(self, *args: object) -> list[object]:
            from matrix.versions import Release
            return [Release("1.0.27", None, False)]

    monkeypatch.setattr(common, "Discovery", Registry)
    assert main(["pins", "--family", "copilot-python", "--sdk", "99.0.0", "--data", str(data)]) == 2
    assert "github-copilot-sdk has no released version '99.0.0'" in one_line(capsys)
    assert main(["pins", "--family", "copilot-python", "--sdk", "1.0.27", "--data", str(data)]) == 0


@pytest.mark.parametrize(("field", "value"), [("family", "../../outside"), ("mutation", "../../../../etc/x"),
                                              ("sdk_version", "1.0/../../x"), ("outcome", "compatibel")])
def test_fold_refuses_a_hostile_or_misspelt_results_row_and_changes_nothing(
        data: Path, tmp_path: Path, field: str, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    good = Dataset(data).read()[0][0]
    results = tmp_path / "results"
    Store(results).append(good.updated(measured_at="2026-12-24T00:00:00+00:00"))
    hostile = {**json.loads(good.to_json()), field: value, "measured_at": "2026-12-24T00:00:00+00:00"}
    with (results / "rows.jsonl").open("a") as f:  # as a hand (or another program) would write it
        f.write(json.dumps(hostile) + "\n")
    save_releases(results, {"copilot-python": Dataset(data).releases()["copilot-python"]})
    before = fingerprint(data)
    assert main(["fold", "--results", str(results), "--data", str(data)]) == 2
    line = one_line(capsys)
    assert "rows.jsonl:2:" in line and "nothing was folded" in line
    assert fingerprint(data) == before and not list(tmp_path.glob("outside*")) and not (tmp_path.parent / "x").exists()


def test_fold_refuses_a_release_its_results_never_selected(data: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    good = Dataset(data).read()[0][0]
    results = tmp_path / "results"
    Store(results).append(good.updated(sdk_version="7.7.7", measured_at="2026-12-24T00:00:00+00:00"))
    save_releases(results, {"copilot-python": Dataset(data).releases()["copilot-python"]})
    before = fingerprint(data)
    assert main(["fold", "--results", str(results), "--data", str(data)]) == 2
    assert "github-copilot-sdk 7.7.7 is not among the releases these results selected" in one_line(capsys)
    assert fingerprint(data) == before


def test_a_reader_holds_the_dataset_and_a_fold_waits_for_it(data: Path, tmp_path: Path) -> None:
    """A fold while a build reads: the build's version is whole, the fold switches after it."""
    reader = Dataset(data)
    rows = reader.read()[0]
    results = tmp_path / "results"
    Store(results).append(rows[0].updated(outcome="refused", measured_at="2026-12-24T00:00:00+00:00"))
    save_releases(results, {"copilot-python": reader.releases()["copilot-python"]})
    done: list[str] = []
    with sharing(data):
        with pytest.raises(Locked, match="in use by"):
            Dataset(data).fold(results)
        folding = threading.Thread(target=lambda: (Dataset(data).fold(results, wait=True), done.append("folded")))
        folding.start()
        time.sleep(0.5)
        assert done == []  # waits while the reader holds the dataset
    folding.join(timeout=30)
    assert done == ["folded"]
    assert reader.read()[0] == rows  # the reader's version stays the one it read
    assert Dataset(data).read()[0] != rows
