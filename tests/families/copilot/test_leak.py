"""What stop() leaves behind: the handshake agents live on after the SDK's stop() returns and
time how long every process the SDK started takes to be gone (timeouts.leak).

Each agent is run for real, in a sandbox like a cell's, against a stand-in SDK (a tiny
package of ours with the SDK's API) whose stop() sends SIGTERM to a stand-in CLI and
returns at once. The stand-in CLIs: one that exits a second after the TERM (late but in
time), one that ignores it (never exits), and one that also left our process group first
(found by the cell marker, as a native CLI re-parented after its loader died is)."""

from __future__ import annotations

import json
import shutil
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from matrix.execute import proc
from matrix.execute.sandbox import sandbox
from matrix.families.copilot.agent_run import AgentRun
from matrix.families.copilot.cli import CliInstall, Runtime
from matrix.families.copilot.handshake import HandshakeCell, build_row
from matrix.families.copilot.handshake_verdict import classify_handshake
from matrix.families.copilot.node.sdk import AGENTS as NODE_AGENTS
from matrix.families.copilot.python.measure import AGENTS as PYTHON_AGENTS
from matrix.model import Outcome
from matrix.probes.report import ErrorInfo, parse_report
from matrix.probes.verdict import LEFT_RUNNING

CLI = textwrap.dedent("""
    import os, signal, sys, time
    mode = sys.argv[1]
    if mode == "setsid":
        os.setsid()
    if mode == "late":
        signal.signal(signal.SIGTERM, lambda *_: (time.sleep(1.0), sys.exit(0)))
    else:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    print("ready", flush=True)  # the stand-in SDK's start() waits for this line
    while True:
        time.sleep(0.05)
""")

PY_SDK = textwrap.dedent("""
    import os, signal, subprocess

    class CopilotClient:
        def __init__(self, options):
            self.path = options["cli_path"]

        async def start(self):
            self.proc = subprocess.Popen([self.path], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
            self.proc.stdout.readline()

        async def ping(self, message):
            return {"protocolVersion": 3}

        async def get_status(self):
            return {"version": "9.9.9"}

        async def stop(self):
            os.kill(self.proc.pid, signal.SIGTERM)  # and returns without waiting
            return []
""")

NODE_SDK = textwrap.dedent("""
    import { spawn } from "node:child_process";
    export class CopilotClient {
      constructor(options) { this.path = options.cliPath; }
      async start() {
        this.child = spawn(this.path, [], { stdio: ["ignore", "pipe", "ignore"] });
        await new Promise((ready) => this.child.stdout.once("data", ready));
      }
      async ping() { return { protocolVersion: 3 }; }
      async getStatus() { return { version: "9.9.9" }; }
      async stop() { this.child.kill("SIGTERM"); return []; }
    }
""")


def _cli(tmp: Path, mode: str) -> Path:
    (tmp / "cli.py").write_text(CLI)
    launcher = tmp / f"cli-{mode}"
    launcher.write_text(f"#!/bin/sh\nexec {sys.executable} {tmp / 'cli.py'} {mode}\n")
    launcher.chmod(0o755)
    return launcher


def _run(argv: tuple[str, ...], tmp: Path, extra: dict[str, str] | None = None) -> proc.Result:
    with sandbox(tmp / "scratch", extra=extra) as box:
        return proc.run(proc.Request(argv, box.env, box.root, timeout=40, grace=1))


def run_python_agent(tmp: Path, mode: str, leak: float = 3.0) -> proc.Result:
    (tmp / "sdk" / "copilot").mkdir(parents=True)
    (tmp / "sdk" / "copilot" / "__init__.py").write_text(PY_SDK)
    meta = tmp / "sdk" / "github_copilot_sdk-9.9.9.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: github-copilot-sdk\nVersion: 9.9.9\n")
    cfg = {"cli_path": str(_cli(tmp, mode)), "step_timeout": 10, "leak": leak}
    # Not -I: the stand-in SDK comes from PYTHONPATH.
    return _run((sys.executable, str(PYTHON_AGENTS / "copilot_python_handshake.py"), json.dumps(cfg)), tmp,
                {"PYTHONPATH": str(tmp / "sdk")})


def run_node_agent(tmp: Path, mode: str, leak: float = 3.0) -> proc.Result:
    sdk = tmp / "node-sdk"
    sdk.mkdir()
    (sdk / "package.json").write_text(json.dumps({"name": "@github/copilot-sdk", "version": "9.9.9", "type": "module",
                                                  "main": "index.js"}))
    (sdk / "index.js").write_text(NODE_SDK)
    cfg = {"cli_path": str(_cli(tmp, mode)), "sdk_dir": str(sdk), "step_timeout": 10, "leak": leak}
    node = shutil.which("node")
    assert node is not None
    return _run((node, str(NODE_AGENTS / "copilot_node_handshake.mjs"), json.dumps(cfg)), tmp)


AGENTS = {"python": run_python_agent, "node": run_node_agent}


def _verdict(res: proc.Result):  # type: ignore[no-untyped-def]
    report = parse_report(res.stdout)
    assert report is not None, res.stderr[-2000:]
    return report, classify_handshake(report, res, "9.9.9", [["--stand-in"]])


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_a_cli_that_exits_late_but_in_time_is_no_leak(agent: str, tmp_path: Path) -> None:
    res = AGENTS[agent](tmp_path, "late")
    report, verdict = _verdict(res)
    gone = report.extra["after_stop"]
    assert gone["leaked"] == []
    # TERM, then a second of shutting down: timed, not counted the instant stop() returns.
    assert 0.9 <= gone["exit_after_stop_seconds"] <= 2.5, gone
    assert verdict.outcome == Outcome.COMPATIBLE
    assert res.leftovers == ()


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
@pytest.mark.parametrize("agent", sorted(AGENTS))
@pytest.mark.parametrize("mode", ["never", "setsid"])
def test_a_cli_still_running_after_the_wait_is_a_leak(agent: str, mode: str, tmp_path: Path) -> None:
    res = AGENTS[agent](tmp_path, mode, leak=1.5)
    report, verdict = _verdict(res)
    gone = report.extra["after_stop"]
    assert gone["exit_after_stop_seconds"] is None
    assert len(gone["leaked"]) == 1 and "cli.py" in gone["leaked"][0], gone
    assert verdict.outcome == Outcome.DEGRADED
    assert verdict.error is not None and verdict.error.type == LEFT_RUNNING
    assert verdict.error.message.startswith("left python")
    assert "running after stop() (still alive 1.5 s after stop() returned)" in verdict.error.message
    # The agent only measures; the harness's sweep still ends it, wherever it went.
    assert any("cli.py" in c for c in res.leftovers)


def test_a_failed_start_keeps_its_outcome_and_the_row_says_what_it_left(tmp_path: Path) -> None:
    res = run_python_agent(tmp_path, "never", leak=0.5)
    report = parse_report(res.stdout)
    assert report is not None
    # The same run, as if start had failed with a refusal: the leak is recorded, the outcome stays.
    refusal = ErrorInfo("RuntimeError", "SDK protocol version mismatch: SDK expects version 2, but server reports 3")
    failed = replace(report, steps=tuple(replace(s, ok=False, error=refusal) if s.name == "start" else s
                                         for s in report.steps))
    verdict = classify_handshake(failed, res, "9.9.9", [["--stand-in"]])
    assert verdict.outcome == Outcome.REFUSED
    cell = HandshakeCell("copilot-python", "9.9.9", "9.9.9", 40, 10, 1, tmp_path)
    cli = CliInstall("9.9.9", tmp_path / "cli.py", None, "", {})
    row = build_row(cell, "handshake", "", AgentRun(failed, res, [["--stand-in"]], []), verdict,
                    Runtime("node20", Path("node")), cli)
    assert row.outcome == "refused"
    assert row.get("leaked") == ["python cli.py"]
    assert row.get("exit_after_stop_seconds") is None
    assert all(not c.startswith("/") for c in row.leftovers_killed)  # no machine paths in stored data
