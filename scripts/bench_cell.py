"""Benchmark: the harness's wall time per handshake cell against the raw cost of what the
cell measures, in the same run.

Raw: a minimal JSON-RPC client (stdlib, here) starts the CLI in a fresh sandbox (with the
same unpacked package a cell gets) exactly as an SDK does (`--headless --stdio`, the runtime
the harness measured for it), sends `ping` and waits for the answer, then closes stdin and
waits for the CLI to exit. Harness: the same CLI
with a real SDK through `Runner.measure` (environments already installed; what remains is the
sandbox, the launcher, the agent's interpreter and the SDK's own start and stop).

    .venv/bin/python scripts/bench_cell.py [--sdk 1.0.27] [--cli 1.0.102 [--cli 0.0.414 ...]] [--repeat 5]

Prints both medians, their ratio (the target in issue 8 is at most 1.25) and the CPU seconds
the machine spent on each (the CLI's own start is most of both: on 2 cores it sets the floor
for a whole history).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from matrix.ecosystems.npm_env import NpmPrefix
from matrix.execute import proc
from matrix.execute.cache import cache_root
from matrix.execute.sandbox import sandbox
from matrix.families.copilot.cli import CliInstall
from matrix.families.copilot.cli_seed import plant
from matrix.families.copilot.compile_cache import PORTABLE, plant_compile_cache
from matrix.families.copilot.family import prepared_cli
from matrix.families.copilot.shim import encode, read_frame
from matrix.families.registry import FAMILIES
from matrix.pipeline.config import Plan
from matrix.pipeline.runner import Cell, Runner
from matrix.store.results import Store


def raw_handshake(node: Path, cli: CliInstall, scratch: Path) -> float:
    """The raw client gets the same unpacked CLI and compiled code as a cell does, so neither
    pays the unpack or the compile."""
    entry = cli.entry
    with sandbox(scratch, path_dirs=[node.parent], extra=PORTABLE if cli.compile_cache else None) as box:
        plant(cli.seed, box.home)
        plant_compile_cache(cli.compile_cache, Path(box.env["TMPDIR"]))
        t0 = time.monotonic()
        child = subprocess.Popen([str(node), str(entry), "--headless", "--no-auto-update", "--log-level", "error",
                                  "--stdio"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, env=box.env, cwd=box.root, start_new_session=True)
        assert child.stdin is not None
        assert child.stdout is not None
        child.stdin.write(encode({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"message": "bench"}}))
        child.stdin.flush()
        while True:
            answer = read_frame(child.stdout)
            if answer is None:
                raise RuntimeError("the CLI closed its output before answering")
            msg = answer.message()
            if msg is not None and msg.get("id") == 1:
                break
        child.stdin.close()
        try:
            child.wait(timeout=30)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        return time.monotonic() - t0


def busy_seconds() -> float:
    """CPU seconds the whole machine has spent busy (all processes: the CLI, the SDK, us)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def bench(runner: Runner, sdk: str, cli_version: str, repeat: int, scratch: Path) -> None:
    cell = Cell("copilot-python", sdk, cli_version, "handshake")
    first = runner.measure(cell)  # installs, finds the runtime, starts the warm server; not timed
    assert first is not None, "interrupted"
    _, prefix = FAMILIES[cell.family].environments(cell, runner.make)
    assert isinstance(prefix, NpmPrefix)
    cli = prepared_cli(prefix, runner)
    assert cli.runtime is not None, f"no runtime starts CLI {cli_version}"
    harness, raw, harness_cpu, raw_cpu = [], [], [], []
    for _ in range(repeat):
        t0, c0 = time.monotonic(), busy_seconds()
        row = runner.measure(cell)
        harness.append(time.monotonic() - t0)
        harness_cpu.append(busy_seconds() - c0)
        assert row is not None and row.outcome == first.outcome
        c0 = busy_seconds()
        raw.append(raw_handshake(cli.runtime.node, cli, scratch))
        raw_cpu.append(busy_seconds() - c0)
    h, r = statistics.median(harness), statistics.median(raw)
    print(f"cell: sdk {sdk} x cli {cli_version} on {cli.runtime.label} ({first.outcome}), {repeat} runs each")
    print(f"  raw start + ping + exit (minimal JSON-RPC client): median {r:.2f}s  {[round(x, 2) for x in raw]}"
          f"  CPU {statistics.median(raw_cpu):.2f}s")
    print(f"  harness cell (Runner.measure):                    median {h:.2f}s  {[round(x, 2) for x in harness]}"
          f"  CPU {statistics.median(harness_cpu):.2f}s")
    print(f"  ratio harness / raw: {h / r:.2f} (target <= 1.25)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sdk", default="1.0.27")
    parser.add_argument("--cli", action="append", help="CLI release (repeatable; default 1.0.102)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    plan = Plan.model_validate({"families": {"copilot-python": {}}})
    with tempfile.TemporaryDirectory() as tmp:
        runner = Runner(plan, Store(Path(tmp) / "results"), cache_root(), proc.Reaper())
        try:
            for cli_version in args.cli or ["1.0.102"]:
                bench(runner, args.sdk, cli_version, args.repeat, Path(tmp) / "raw")
        finally:
            warm = runner.warm.started_seconds
            runner.close()
    print(f"warm server start (the SDK's import; once per SDK release per run, not per cell): {warm:.2f}s")


if __name__ == "__main__":
    main()
