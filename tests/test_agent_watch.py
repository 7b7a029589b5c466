"""The Python handshake agent's watch for a CLI that exited while an SDK call still waits
(timeouts.dead_cli): driven in a fresh interpreter with a stand-in "SDK call"."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from matrix.probes import AGENTS_DIR

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


def _step(kind: str, grace: float) -> dict[str, object]:
    res = subprocess.run([sys.executable, "-c", DRIVER, str(AGENTS_DIR / "copilot_python_handshake.py"), kind,
                          str(grace)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    return dict(json.loads(res.stdout.strip().splitlines()[-1]))


def test_a_call_still_waiting_after_the_cli_exited_is_stopped_with_the_exit_named() -> None:
    entry = _step("waits", 0.5)
    error = entry["error"]
    assert isinstance(error, dict)
    assert error["type"] == "CliExitedUnnoticed" and error["timeout"] is True
    assert "exit 3" in error["message"] and "had not noticed" in error["message"]
    assert float(entry["seconds"]) < 2.5  # 0.2 s to exit, 0.5 s grace; not the 3 s deadline


def test_without_the_watch_the_call_waits_for_the_deadline() -> None:
    entry = _step("waits", 0)
    error = entry["error"]
    assert isinstance(error, dict) and error["source"] == "harness"
    assert float(entry["seconds"]) >= 2.9


def test_an_sdk_that_notices_is_judged_on_its_own_error() -> None:
    entry = _step("notices", 2)
    error = entry["error"]
    assert isinstance(error, dict) and error["type"] == "ConnectionError"


def test_a_call_that_answers_is_ok() -> None:
    assert _step("answers", 0.5)["ok"] is True
