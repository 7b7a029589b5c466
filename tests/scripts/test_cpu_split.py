"""The benchmark's CPU split sorts perf's samples by what each process or its ancestors ran."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

import pytest

from tests.conftest import ROOT


@pytest.fixture(scope="module")
def cs() -> ModuleType:
    path = ROOT / "scripts" / "cpu_split.py"
    spec = importlib.util.spec_from_file_location("cpu_split", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["cpu_split"] = module
    spec.loader.exec_module(module)
    return module


def fork(child: int, parent: int, tid: int | None = None) -> str:
    return f"  python {parent}/{parent} 1.0: PERF_RECORD_FORK({child}:{tid or child}):({parent}:{parent})"


def exe(name: str, pid: int) -> str:
    return f"  {name} {pid}/{pid} 1.0: PERF_RECORD_COMM exec: {name}:{pid}/{pid}"


def sample(comm: str, pid: int, tid: int | None = None) -> str:
    return f"  {comm:>15} {pid}/{tid or pid}     27266.748700: "


def feed(cs: ModuleType, lines: list[str]) -> dict[str, int]:
    split = cs.Split()
    for line in lines:
        split.feed(line)
    return dict(split.samples)


def test_a_cli_under_an_sdk_agent_under_the_harness_is_the_cli(cs: ModuleType) -> None:
    got = feed(cs, [
        exe("compat-matrix", 10), fork(11, 10), exe("python", 11),  # the warm server
        fork(12, 11),  # the agent it forks: no exec
        fork(13, 12), exe("copilot", 13), exe("node", 13),  # launcher execs the runtime
        fork(14, 13), exe("copilot", 14), fork(15, 14), exe("git", 15),
        sample("compat-matrix", 10), sample("python", 12), sample("MainThread", 14), sample("V8Worker", 14, 99),
        sample("git", 15), sample("node", 13), sample("swapper", 0),
    ])
    assert got == {cs.HARNESS: 1, cs.SDK: 1, cs.CLI: 4, cs.IDLE: 1}


def test_installers_and_their_pythons_are_installers(cs: ModuleType) -> None:
    got = feed(cs, [
        exe("compat-matrix", 10), fork(20, 10), exe("uv", 20), fork(21, 20), exe("python3.11", 21),
        fork(22, 10), exe("npm", 22), exe("node", 22), fork(23, 10), exe("node", 23),
        sample("uv", 20), sample("python3.11", 21), sample("npm", 22), sample("node", 23), sample("kworker/0", 7),
    ])
    assert got == {cs.INSTALL: 3, cs.PREPARE: 1, cs.OTHER: 1}


def test_a_reused_pid_is_judged_by_its_new_ancestry(cs: ModuleType) -> None:
    got = feed(cs, [
        exe("compat-matrix", 10), fork(30, 10), exe("copilot", 30), sample("node", 30),
        fork(30, 10), exe("uv", 30), sample("uv", 30),
    ])
    assert got == {cs.CLI: 1, cs.INSTALL: 1}


def test_threads_are_not_processes(cs: ModuleType) -> None:
    got = feed(cs, [exe("compat-matrix", 10), fork(10, 10, tid=41), sample("compat-matrix", 10, 41)])
    assert got == {cs.HARNESS: 1}
