"""Benchmark helper: where a run's CPU went, by kind of process.

Runs a command under `perf record` (system-wide sampling, 99 Hz, with the kernel's fork and
exec events) and sorts every sample into the process that took it, then that process into a
kind by what it or its ancestors executed:

- the CLI: the launcher a cell's SDK starts (named `copilot`) and everything it runs (the
  runtime, the native binary, the `git` it calls);
- installers: `uv`, `npm` and their children;
- the SDK side: the SDK's Python processes (warm servers and the agents they fork);
- the CLI before cells: `node` run by the harness itself (runtime check, first-launch unpack);
- the harness: `compat-matrix`;
- idle, and other (kernel threads, anything else on the machine).

    .venv/bin/python scripts/cpu_split.py [--out perf.data] -- COMMAND...

Needs `perf` (Debian: linux-perf) and permission to sample the whole machine. Prints the
CPU seconds per kind and what the CLI's share alone takes on this machine's cores: a floor
no scheduling of the harness gets under.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

FREQUENCY = 99
_FORK = re.compile(r"PERF_RECORD_FORK\((\d+):\d+\):\((\d+):\d+\)")
_EXEC = re.compile(r"PERF_RECORD_COMM exec: (.*):(\d+)/\d+")
_SAMPLE = re.compile(r"^\s*(.+?)\s+(\d+)/(\d+)\s+[\d.]+:\s*$")

CLI, INSTALL, SDK, PREPARE, HARNESS, IDLE, OTHER = (
    "the CLI (started by cells)", "installers (uv, npm, go)", "the SDK side (Python and Go agents)",
    "node run by the harness (Node SDK agents; CLI runtime check, unpack)", "the harness", "idle", "other")
# Nearest wins only within a rank: a CLI under an SDK agent is the CLI, a Python under uv
# is an installer's.
_RANK = (CLI, INSTALL, SDK, PREPARE, HARNESS)


def kind_of_exec(name: str) -> str | None:
    if name == "copilot":
        return CLI
    if name in ("uv", "npm", "go"):
        return INSTALL
    if name.startswith("python") or name == "agent":  # "agent": the Go SDK agent binary
        return SDK
    if name == "node":
        return PREPARE
    if name == "compat-matrix":
        return HARNESS
    return None


@dataclass
class Split:
    parent: dict[int, int] = field(default_factory=dict)
    execs: dict[int, set[str]] = field(default_factory=dict)
    samples: Counter[str] = field(default_factory=Counter)

    def kind(self, pid: int) -> str:
        if pid == 0:
            return IDLE
        found: set[str] = set()
        seen: set[int] = set()
        while pid and pid not in seen:
            seen.add(pid)
            found.update(k for k in map(kind_of_exec, self.execs.get(pid, ())) if k)
            pid = self.parent.get(pid, 0)
        return next((k for k in _RANK if k in found), OTHER)

    def feed(self, line: str) -> None:
        """One line of `perf script --show-task-events`, in time order: a process's kind is
        decided when its sample is read, so a reused pid is judged by its newest ancestry."""
        if (m := _FORK.search(line)) is not None:
            child, parent = int(m.group(1)), int(m.group(2))
            if child != parent:  # a new process, not a thread
                self.parent[child] = parent
                self.execs.pop(child, None)
        elif (m := _EXEC.search(line)) is not None:
            self.execs.setdefault(int(m.group(2)), set()).add(m.group(1))
        elif (m := _SAMPLE.match(line)) is not None:
            self.samples[self.kind(int(m.group(2)))] += 1


def split(data: Path) -> Split:
    result = Split()
    with subprocess.Popen(["perf", "script", "-i", str(data), "--show-task-events", "-F", "comm,pid,tid,time"],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as perf:
        assert perf.stdout is not None
        for line in perf.stdout:
            result.feed(line)
    return result


def report(result: Split, wall: float) -> None:
    total = sum(result.samples.values())
    cores = os.cpu_count() or 1
    print(f"CPU by kind of process over {wall:.1f} s on {cores} cores ({total} samples at {FREQUENCY} Hz):")
    for kind, n in result.samples.most_common():
        print(f"  {kind:<45} {n / FREQUENCY:9.0f} CPU-s  {100 * n / total:5.1f} %")
    cli = result.samples[CLI] / FREQUENCY
    print(f"the CLI's own processes alone need {cli / cores / 60:.1f} min ({cli / cores:.1f} s) of wall time on "
          f"{cores} cores")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("perf.data"))
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to measure after --")
    if shutil.which("perf") is None:
        raise SystemExit("perf is not installed (Debian: apt-get install linux-perf)")
    t0 = time.monotonic()
    code = subprocess.call(["perf", "record", "-a", "-q", "-F", str(FREQUENCY), "-o", str(args.out), "--", *command])
    wall = time.monotonic() - t0
    report(split(args.out), wall)
    sys.exit(code)


if __name__ == "__main__":
    main()
