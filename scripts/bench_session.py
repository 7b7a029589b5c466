"""Benchmark: the harness's wall time per session cell against the raw cost of the same
conversation, in the same run.

Raw: a minimal JSON-RPC client (stdlib, here) starts the CLI in a fresh sandbox exactly as a
cell's SDK does (`--headless --stdio`, the runtime the harness measured for it, the same
unpacked package), with its model the same stand-in on 127.0.0.1, and holds the scripted
conversation itself: `connect`, `session.create` with the provider and the tool, the four
turns (answering the tool call and the permission requests as the application would), until
each turn's `session.idle`, `session.destroy`; then it closes stdin and waits for the CLI to
exit. Harness: the same cell through `Runner.measure` with a real SDK (environments already
installed; what remains is the sandbox, the launcher, the shim, the agent's interpreter and
the SDK's own calls, the verdict).

    .venv/bin/python scripts/bench_session.py [--family copilot-python] [--sdk V] [--cli 1.0.102] [--repeat 3]

Prints both medians and their ratio (the target in issue 29 is at most 1.3). The raw client
speaks the protocol of the CLI releases that answer `connect` (1.0.x): older ones are not
what this figure is about.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from typing import IO, Any

from matrix.ecosystems.npm_env import NpmPrefix
from matrix.execute import proc
from matrix.execute.cache import cache_root
from matrix.execute.sandbox import sandbox
from matrix.families.copilot.cli import CliInstall
from matrix.families.copilot.cli_seed import plant
from matrix.families.copilot.compile_cache import PORTABLE, plant_compile_cache
from matrix.families.copilot.family import prepared_cli
from matrix.families.copilot.session.model_standin import MODEL, TOOL, TURNS, prompt, running
from matrix.families.copilot.shim import encode, read_frame
from matrix.families.registry import FAMILIES
from matrix.pipeline.config import Plan
from matrix.pipeline.runner import Cell, Runner
from matrix.store.dataset import Dataset
from matrix.store.results import Store
from matrix.versions import sorted_versions

ROOT = Path(__file__).resolve().parent.parent

TURN_WAIT = 30.0


class Raw:
    """The conversation over the CLI's stdio, answering what the CLI asks of an application."""

    def __init__(self, child: subprocess.Popen[bytes]) -> None:
        assert child.stdin is not None and child.stdout is not None
        self.stdin: IO[bytes] = child.stdin
        self.stdout: IO[bytes] = child.stdout
        self.deny = False

    def send(self, method: str, params: dict[str, Any]) -> str:
        ident = str(uuid.uuid4())
        self.stdin.write(encode({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}))
        self.stdin.flush()
        return ident

    def until(self, done: Any, deadline: float) -> dict[str, Any]:
        """Read until ``done(msg)``, answering the session's tool calls and permission requests."""
        while time.monotonic() < deadline:
            frame = read_frame(self.stdout)
            if frame is None:
                raise RuntimeError("the CLI closed its output")
            msg = frame.message()
            if msg is None:
                continue
            if done(msg):
                return msg
            event = (msg.get("params") or {}).get("event") or {} if msg.get("method") == "session.event" else {}
            data, sid = event.get("data") or {}, (msg.get("params") or {}).get("sessionId")
            if event.get("type") == "permission.requested":
                kind = (data.get("permissionRequest") or {}).get("kind")
                result = {"kind": "reject", "feedback": "denied"} if self.deny and kind != "custom-tool" \
                    else {"kind": "approve-once"}
                self.send("session.permissions.handlePendingPermissionRequest",
                          {"sessionId": sid, "requestId": data.get("requestId"), "result": result})
            elif event.get("type") == "external_tool.requested":
                text = str((data.get("arguments") or {}).get("text", ""))
                self.send("session.tools.handlePendingToolCall",
                          {"sessionId": sid, "requestId": data.get("requestId"),
                           "result": {"resultType": "success", "textResultForLlm": text.upper()}})
        raise TimeoutError("the CLI did not answer in time")

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        ident = self.send(method, params)
        msg = self.until(lambda m: m.get("id") == ident, time.monotonic() + TURN_WAIT)
        if "error" in msg:
            raise RuntimeError(f"{method}: {msg['error']}")
        return dict(msg.get("result") or {})


def raw_session(node: Path, cli: CliInstall, scratch: Path, log: Path) -> float:
    """The raw client gets the same unpacked CLI and compiled code as a cell does."""
    entry = cli.entry
    extra = PORTABLE if cli.compile_cache else None
    with running(log) as url, sandbox(scratch, path_dirs=[node.parent], extra=extra) as box:
        plant(cli.seed, box.home)
        plant_compile_cache(cli.compile_cache, Path(box.env["TMPDIR"]))
        env = {**box.env, "COPILOT_API_URL": url}
        t0 = time.monotonic()
        child = subprocess.Popen([str(node), str(entry), "--headless", "--no-auto-update", "--log-level", "error",
                                  "--stdio"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, env=env, cwd=box.root, start_new_session=True)
        try:
            raw = Raw(child)
            raw.call("connect", {})
            sid = str(uuid.uuid4())
            raw.call("session.create", {
                "model": MODEL, "sessionId": sid, "requestPermission": True,
                "tools": [{"name": TOOL, "description": "Returns the text it is given, upper-cased.",
                           "parameters": {"type": "object", "required": ["text"],
                                          "properties": {"text": {"type": "string"}}}}],
                "provider": {"type": "openai", "wireApi": "completions", "baseUrl": url + "/v1",
                             "apiKey": "compat-matrix"}})
            for name in TURNS:
                raw.deny = name == "denied"
                raw.call("session.send", {"sessionId": sid, "prompt": prompt(name, uuid.uuid4().hex[:10])})
                raw.until(lambda m: m.get("method") == "session.event"
                          and ((m.get("params") or {}).get("event") or {}).get("type") == "session.idle",
                          time.monotonic() + TURN_WAIT)
            raw.call("session.destroy", {"sessionId": sid})
            raw.stdin.close()
            child.wait(timeout=30)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
        return time.monotonic() - t0


# A session that ran to a verdict about the pair (not an install or a harness failure, not a
# pair that never connected).
MEASURED = {"compatible", "surfaced", "degraded", "lost", "hang", "crashed"}


def newest_sdk(family: str) -> str:
    rows, _ = Dataset(ROOT / "data").read()
    return sorted_versions([r.sdk_version for r in rows if r.family == family and r.probe == "handshake"])[-1]


def bench(runner: Runner, family: str, sdk: str, cli_version: str, repeat: int, scratch: Path) -> None:
    handshake = runner.measure(Cell(family, sdk, cli_version, "handshake"))  # installs; not timed
    assert handshake is not None, "interrupted"
    cell = Cell(family, sdk, cli_version, "session")
    first = runner.measure(cell)
    assert first is not None, "interrupted"
    if first.outcome not in MEASURED:
        # No session ran (nothing installed, or no connection): there is no figure to give.
        raise SystemExit(f"{family} sdk {sdk} x cli {cli_version}: the session cell is {first.outcome} "
                         f"({first.error_message}); pick a pair whose session runs")
    _, prefix = FAMILIES[family].environments(cell, runner.make)
    assert isinstance(prefix, NpmPrefix)
    cli = prepared_cli(prefix, runner)
    assert cli.runtime is not None, f"no runtime starts CLI {cli_version}"
    harness, raw = [], []
    for i in range(repeat):
        t0 = time.monotonic()
        row = runner.measure(cell)
        harness.append(time.monotonic() - t0)
        assert row is not None and row.outcome == first.outcome, (row and row.outcome, first.outcome)
        raw.append(raw_session(cli.runtime.node, cli, scratch, scratch.parent / f"standin-{i}.jsonl"))
    h, r = statistics.median(harness), statistics.median(raw)
    print(f"session cell: {family} sdk {sdk} x cli {cli_version} on {cli.runtime.label} ({first.outcome}), "
          f"{repeat} runs each")
    print(f"  raw conversation (minimal JSON-RPC client): median {r:.2f}s  {[round(x, 2) for x in raw]}")
    print(f"  harness session cell (Runner.measure):     median {h:.2f}s  {[round(x, 2) for x in harness]}")
    print(f"  ratio harness / raw: {h / r:.2f} (target <= 1.3)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--family", default="copilot-python", choices=["copilot-python", "copilot-node", "copilot-go"])
    parser.add_argument("--sdk", default=None, help="default: the family's newest release in data/")
    parser.add_argument("--cli", default="1.0.102")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sdk = args.sdk or newest_sdk(args.family)
    plan = Plan.model_validate({"families": {args.family: {}}})
    with tempfile.TemporaryDirectory() as tmp:
        runner = Runner(plan, Store(Path(tmp) / "results"), cache_root(), proc.Reaper())
        try:
            bench(runner, args.family, sdk, args.cli, args.repeat, Path(tmp) / "raw")
        finally:
            runner.close()


if __name__ == "__main__":
    main()
