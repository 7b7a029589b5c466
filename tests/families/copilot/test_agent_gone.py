"""What the Python agents see after stop(): each process the SDK started, the seconds until it
was gone, and what outlived the wait (a leak), with /proc read whole only every few polls
(``watch_gone``). Driven in a fresh interpreter whose "SDK" starts real processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

from matrix.families.copilot.python.measure import AGENTS

DRIVER = textwrap.dedent("""
    import asyncio, importlib.util, json, subprocess, sys, time
    spec = importlib.util.spec_from_file_location("agent", sys.argv[1])
    agent = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(agent)

    def start(*argv):
        subprocess.Popen(argv, stdout=subprocess.DEVNULL)

    async def main():
        start("sleep", "0.3")  # the CLI, gone soon after stop()
        start("sleep", "30")  # a CLI left running: a leak
        # Started after the watch began, between two whole scans: found all the same.
        asyncio.get_running_loop().call_later(0.12, start, "sleep", "31")
        return await agent.watch_gone(1.5)

    print(json.dumps(asyncio.run(main())))
""")


def test_what_the_sdk_started_is_timed_until_gone_and_what_outlived_the_wait_is_a_leak() -> None:
    proc = subprocess.Popen([sys.executable, "-c", DRIVER, str(AGENTS / "copilot_python_handshake.py")],
                            stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=30)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
    gone = json.loads(out)
    after = {p["command"]: p["gone_after"] for p in gone["processes"]}
    assert 0.25 <= after["sleep 0.3"] <= 0.9
    assert sorted(gone["leaked"]) == ["sleep 30", "sleep 31"] and gone["exit_after_stop_seconds"] is None


SAYS = textwrap.dedent("""
    import asyncio, importlib.util, json, os, subprocess, sys, time
    spec = importlib.util.spec_from_file_location("agent", sys.argv[1])
    agent = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(agent)
    agent.WAITING = sys.argv[2]

    async def main():
        subprocess.Popen(["sleep", sys.argv[3]], stdout=subprocess.DEVNULL)
        t0 = time.monotonic()
        said = None

        async def look():
            nonlocal said
            while said is None:
                if os.path.exists(sys.argv[2]):
                    said = round(time.monotonic() - t0, 2)
                await asyncio.sleep(0.02)
        looking = asyncio.ensure_future(look())
        gone = await agent.watch_gone(1.2)
        await asyncio.sleep(0.05)
        looking.cancel()
        return {"said": said, "leaked": gone["leaked"]}

    print(json.dumps(asyncio.run(main())))
""")


def _says(tmp_path: object, lives: str) -> dict[str, object]:
    said = os.path.join(str(tmp_path), f"waiting-{lives}")
    proc = subprocess.Popen([sys.executable, "-c", SAYS, str(AGENTS / "copilot_python_handshake.py"), said, lives],
                            stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=30)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
    result: dict[str, object] = json.loads(out)
    return result


def test_an_agent_says_it_only_waits_once_what_the_sdk_started_outlives_half_a_second(tmp_path: object) -> None:
    """The harness lends the cell's CPU slot while the agent waits out a leak: said after
    ``SAY_WAITING_AFTER`` with a process still alive, never for one gone sooner."""
    left = _says(tmp_path, "30")
    assert left["leaked"] == ["sleep 30"]
    assert isinstance(left["said"], float) and 0.45 <= left["said"] <= 1.0
    gone = _says(tmp_path, "0.2")
    assert gone == {"said": None, "leaked": []}
