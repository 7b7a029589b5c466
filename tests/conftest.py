from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from matrix.families.registry import type_row
from matrix.model import Row

# `make test-integration` runs two pytest-xdist workers with --cells-apart: the tests that
# measure cells through the harness all go to one worker, in file order, so no two of them share
# the cores (their verdicts rest on timeouts); the modules below measure no cell (they read the
# dataset, or run a script as a reader would) and run on the other worker meanwhile. A `run`
# they start may still warm an SDK before it refuses a damaged dataset: a test that counts live
# processes counts those its own runs marked (proc.marked_by), never every harness's.
BESIDE_CELLS = ("tests/store/test_integration_faults.py", "tests/families/copilot/test_integration_repro.py")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--cells-apart", action="store_true",
                     help="with -n 2: the tests that measure cells on one worker, the others (BESIDE_CELLS) on the "
                          "other")


def worker_group(nodeid: str) -> str:
    """Which of the two workers a test goes to under --cells-apart."""
    return "beside" if nodeid.split("::", 1)[0] in BESIDE_CELLS else "cells"


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if not config.getoption("cells_apart"):
        return None
    from xdist.scheduler import LoadScopeScheduling

    class CellsApart(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return worker_group(nodeid)

    return CellsApart(config, log)


ROOT = Path(__file__).resolve().parent.parent
"""The checkout: tests read its matrix.toml, docs, notebooks and scripts from here."""

# The checkout's committed history (data/) is not any test's: a test that wants a dataset
# passes --data (commands read this, "no dataset", in-process and in the subprocesses tests start).
os.environ["COMPAT_MATRIX_DATA"] = ""


def site_root(dest: Path) -> Path:
    """A copy of the checkout's site sources (mkdocs.yml, the written pages, the notebooks)
    without its generated pages, to build a site of a test's own results into."""
    for name in ("docs", "notebooks", "overrides"):
        shutil.copytree(ROOT / name, dest / name, ignore=shutil.ignore_patterns(
            "index.md", "matrix", "versions", "assets", "data", "pins.md", "api", "feed.xml",
            ".compat-matrix-generated"))
    shutil.copy(ROOT / "docs" / "notebooks" / "index.md", dest / "docs" / "notebooks" / "index.md")
    shutil.copy(ROOT / "mkdocs.yml", dest / "mkdocs.yml")
    return dest


def make_row(sdk: str = "1.0.0", cli: str = "1.0.102", outcome: str = "compatible", *,
             family: str = "copilot-python", probe: str = "handshake", **fields: Any) -> Row:
    """One measured cell with only what a test cares about spelled out (payload fields flat), as
    its family's rows are recorded: payload typed, ``per_sdk`` as the family says."""
    return type_row(Row(family=family, sdk_version=sdk, cli_version=cli, probe=probe, outcome=outcome,
                        **fields))


@pytest.fixture(autouse=True)
def _no_env_leak() -> Iterator[None]:
    """A test may not leave os.environ changed (monkeypatch restores its own changes)."""
    def snapshot() -> dict[str, str]:
        return {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}

    before = snapshot()
    yield
    assert snapshot() == before, "test leaked environment changes"


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """Mount a real, small tmpfs (``size`` as mount takes it, e.g. "96k") and return its
    directory; skipped with the reason where this machine cannot mount one."""
    mounted: list[Path] = []

    def mount(size: str) -> Path:
        if not shutil.which("mount") or os.geteuid() != 0:
            pytest.skip("mounting a small tmpfs needs root and mount(8)")
        where = tmp_path / f"tmpfs-{len(mounted)}"
        where.mkdir()
        res = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                             capture_output=True, text=True, check=False)
        if res.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {res.stderr.strip()}")
        mounted.append(where)
        return where

    yield mount
    for where in mounted:
        subprocess.run(["umount", "-l", str(where)], check=False)


@pytest.fixture
def fill() -> Callable[[Path, int], Path]:
    """Fill a directory's filesystem up to ``leave`` bytes free with one file (remove it to free them)."""
    def filling(directory: Path, leave: int) -> Path:
        st = os.statvfs(directory)
        free = st.f_bavail * st.f_frsize
        filler = directory / ".filler"
        with open(filler, "wb") as f:
            f.write(b"\0" * max(free - leave, 0))
        return filler

    return filling
