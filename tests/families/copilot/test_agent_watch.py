"""The agents' watch for a CLI that exited while an SDK call still waits (timeouts.dead_cli):
each agent's own step function driven in a fresh interpreter with a stand-in "SDK call"."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from matrix.families.copilot.node.sdk import AGENTS as NODE_AGENTS
from matrix.families.copilot.python.measure import AGENTS as PYTHON_AGENTS

Step = Callable[[str, float], dict[str, object]]

DRIVER = textwrap.dedent("""
    import asyncio, importlib.util, json, subprocess, sys
    spec = importlib.util.spec_from_file_location("agent", sys.argv[1])
    agent = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(agent)
    kind, grace = sys.argv[2], float(sys.argv[3])
    agent.WATCH = agent.CliWatch(grace) if grace else None
    children = []

    async def call():
        # The "SDK" starts its "CLI" (which exits with 3) and, in "waits", never notices.
        children.append(subprocess.Popen(["sh", "-c", "sleep 0.2; exit 3"]))
        if kind == "notices":
            await asyncio.sleep(0.5)
            raise ConnectionError("CLI exited")
        if kind == "answers":
            return {"ok": True}
        await asyncio.sleep(60)

    asyncio.run(agent.step("start", call, 3))
    print(json.dumps(agent.report["steps"][-1]))
""")


NODE_DRIVER = textwrap.dedent("""
    const { step, report } = await import(process.argv[4]);
    const { spawn } = await import("node:child_process");
    const kind = process.argv[3];
    class ConnectionError extends Error {}
    const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
    await step("start", async () => {
      spawn("sh", ["-c", "sleep 0.2; exit 3"]);
      if (kind === "notices") {
        await sleep(500);
        throw new ConnectionError("CLI exited");
      }
      if (kind === "answers") return { ok: true };
      await sleep(60000);
    });
    console.log(JSON.stringify(report.steps.at(-1)));
    process.exit(0);
""")


def _python_step(kind: str, grace: float) -> dict[str, object]:
    res = subprocess.run([sys.executable, "-c", DRIVER, str(PYTHON_AGENTS / "copilot_python_handshake.py"), kind,
                          str(grace)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    return dict(json.loads(res.stdout.strip().splitlines()[-1]))


def _node_step(kind: str, grace: float) -> dict[str, object]:
    node = shutil.which("node")
    if node is None:
        pytest.skip("no node on PATH")
    common = (NODE_AGENTS / "copilot_node_common.mjs").as_uri()
    cfg = json.dumps({"step_timeout": 3, "dead_cli": grace})
    with tempfile.TemporaryDirectory() as tmp:  # a file: the agent's module reads its config from argv[2]
        driver = Path(tmp) / "driver.mjs"
        driver.write_text(NODE_DRIVER)
        res = subprocess.run([node, str(driver), cfg, kind, common], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    return dict(json.loads(res.stdout.strip().splitlines()[-1]))


@pytest.fixture(params=["python", "node"])
def run_step(request: pytest.FixtureRequest) -> Step:
    return _python_step if request.param == "python" else _node_step


def test_a_call_still_waiting_after_the_cli_exited_is_stopped_with_the_exit_named(run_step: Step) -> None:
    entry = run_step("waits", 0.5)
    error = entry["error"]
    assert isinstance(error, dict)
    assert error["type"] == "CliExitedUnnoticed" and error["timeout"] is True
    assert "exit 3" in error["message"] and "had not noticed" in error["message"]
    assert float(entry["seconds"]) < 2.5  # type: ignore[arg-type]  # 0.2 s to exit, 0.5 s grace; not the 3 s deadline


def test_without_the_watch_the_call_waits_for_the_deadline(run_step: Step) -> None:
    entry = run_step("waits", 0)
    error = entry["error"]
    assert isinstance(error, dict) and error["timeout"] is True and "did not settle" in error["message"]
    assert float(entry["seconds"]) >= 2.9  # type: ignore[arg-type]


def test_an_sdk_that_notices_is_judged_on_its_own_error(run_step: Step) -> None:
    entry = run_step("notices", 2)
    error = entry["error"]
    assert isinstance(error, dict) and error["type"] == "ConnectionError"


def test_a_call_that_answers_is_ok(run_step: Step) -> None:
    assert run_step("answers", 0.5)["ok"] is True
