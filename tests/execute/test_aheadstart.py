"""Ahead starts with real Node processes: a cell handed to a process started before it runs
as a fresh one would (its environment, directory, arguments, output, deadline), with what the
preload loaded already there; a preload that fails or warns gets no ahead start."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from matrix.execute import proc
from matrix.execute.aheadstart import AheadStarts
from matrix.execute.proc import MARKER_VAR, Request, find_marked

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="needs node")

# The agent: what a cell sees of its process, and of a child it starts (as an SDK starts its CLI).
AGENT = """
import { execFileSync } from "node:child_process";
const child = execFileSync("sh", ["-c", "echo $CELL_VAR"], { encoding: "utf8" }).trim();
console.log(JSON.stringify({ cfg: process.argv[2], cwd: process.cwd(), var: process.env.CELL_VAR,
                             stray: process.env.AHEAD_ONLY ?? null, child, loaded: globalThis.loaded ?? null,
                             argv1: process.argv[1] }));
console.error("agent stderr");
"""


def preload_module(tmp: Path, body: str) -> Path:
    path = tmp / "preload.mjs"
    path.write_text(f"export async function preload(what) {{ {body} }}\n")
    return path


def cell(tmp: Path, agent: Path, n: int, timeout: float = 30) -> Request:
    cwd = tmp / f"cell{n}"
    cwd.mkdir()
    env = {"PATH": "/usr/bin:/bin", "CELL_VAR": f"cell-{n}", MARKER_VAR: proc.new_marker()}
    return Request((str(NODE), str(agent), json.dumps({"n": n})), env, cwd, timeout=timeout, grace=1)


def run_cells(tmp: Path, preload: Path, count: int, agent_code: str = AGENT) -> tuple[AheadStarts, list[proc.Result]]:
    agent = tmp / "agent.mjs"
    agent.write_text(agent_code)
    ahead = AheadStarts(tmp / "scratch", capacity=4)
    spawn = ahead.spawner((str(NODE),), (str(preload), "hello"), "sdk hello")
    assert spawn is not None
    try:
        return ahead, [proc.run(cell(tmp, agent, n), spawn=spawn) for n in range(count)]
    finally:
        ahead.close()


def test_a_cell_handed_ahead_runs_as_a_fresh_one_with_the_preload_done(tmp_path: Path) -> None:
    preload = preload_module(tmp_path, "globalThis.loaded = what;")
    ahead, results = run_cells(tmp_path, preload, 3)
    seen = [json.loads(r.stdout) for r in results]
    assert [r.returncode for r in results] == [0, 0, 0]
    assert all(r.stderr.strip() == "agent stderr" for r in results)
    for n, s in enumerate(seen):
        assert s["cfg"] == json.dumps({"n": n})
        assert s["cwd"] == str(tmp_path / f"cell{n}")
        assert s["var"] == s["child"] == f"cell-{n}"  # its child inherits the cell's environment
        assert s["argv1"] == str(tmp_path / "agent.mjs")
    # The first cell starts fresh (no process waits yet); the others were started ahead.
    assert [s["loaded"] for s in seen] == [None, "hello", "hello"]
    assert ahead.used == 2 and ahead.started == 3


def test_the_ahead_process_environment_is_replaced_not_merged(tmp_path: Path) -> None:
    preload = preload_module(tmp_path, "process.env.AHEAD_ONLY = 'x';")
    _, results = run_cells(tmp_path, preload, 2)
    assert json.loads(results[1].stdout)["stray"] is None


@pytest.mark.parametrize("body", ["throw new Error('no such release');",
                                  "process.emitWarning('deprecated thing', 'DeprecationWarning');"])
def test_a_preload_that_fails_or_warns_gets_no_ahead_start(tmp_path: Path, body: str) -> None:
    preload = preload_module(tmp_path, body)
    ahead, results = run_cells(tmp_path, preload, 3)
    assert [json.loads(r.stdout)["loaded"] for r in results] == [None, None, None]
    assert all(r.returncode == 0 for r in results)
    assert ahead.used == 0
    assert list(ahead.refused()) == ["sdk hello"]
    assert ahead.spawner((str(NODE),), (str(preload), "hello"), "sdk hello") is None


def test_a_handed_cell_past_its_deadline_is_killed_with_its_group(tmp_path: Path) -> None:
    preload = preload_module(tmp_path, "")
    agent = tmp_path / "agent.mjs"
    agent.write_text('import { spawn } from "node:child_process";\n'
                     'spawn("sleep", ["600"], { stdio: "ignore" });\nsetInterval(() => {}, 1000);\n')
    ahead = AheadStarts(tmp_path / "scratch", capacity=4)
    spawn = ahead.spawner((str(NODE),), (str(preload), "x"), "sdk x")
    assert spawn is not None
    try:
        proc.run(cell(tmp_path, agent, 0, timeout=10), spawn=spawn)  # fresh; starts the next one ahead
        req = cell(tmp_path, agent, 1, timeout=1)
        t0 = time.monotonic()
        res = proc.run(req, spawn=spawn)
        assert ahead.used == 1
        assert res.timed_out and time.monotonic() - t0 < 10
        assert find_marked(req.env[MARKER_VAR]) == []  # the sleep it started went with it
    finally:
        ahead.close()


def test_closing_ends_the_processes_that_still_wait(tmp_path: Path) -> None:
    preload = preload_module(tmp_path, "")
    ahead = AheadStarts(tmp_path / "scratch", capacity=4)
    ahead.ready((str(NODE),), (str(preload), "a"))
    ahead.ready((str(NODE),), (str(preload), "b"))
    ahead.ready((str(NODE),), (str(preload), "a"))  # one waits already
    assert ahead.started == 2
    waiting = {p for p, _, _ in proc.marked_processes()} & {a.proc.pid for a in ahead._waiting.values()}
    assert len(waiting) == 2
    ahead.close()
    assert not waiting & {p for p, _, _ in proc.marked_processes()}
    assert not list((tmp_path / "scratch").iterdir())  # their sandboxes are gone
