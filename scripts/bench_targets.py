"""Benchmark: issue 31's targets, each figure next to its target and the ratio, in one run.

1. **A new CLI release, every probe of a family**: the newest CLI release of the dataset is
   measured again for every SDK release and every probe of each family (`compat-matrix run
   --cli NEWEST --force` into a results directory of its own; the dataset is only read), as
   `make site` measures a release the day it appears. Target: at most 120 s per family.
2. **The handshake history against the CLI-only floor** (``--history-sdk``, off by default:
   it takes long): the handshake cells of the named SDK releases against every CLI release,
   run under `perf` (scripts/cpu_split.py); the floor is the CLI's own CPU-seconds divided by
   the cores. Target: the run's wall time at most 1.15 x the floor.
3. **A session cell against a raw turn**: scripts/bench_session.py per family. Target: at
   most 1.3.

    .venv/bin/python scripts/bench_targets.py [--family copilot-python ...] [--sdk V ...]
        [--probe P ...] [--repeat 3] [--history-sdk V ...] [--no-session] [--no-warm]

``--sdk`` and ``--probe`` narrow the first figure (a smoke run: one SDK, one probe); the
figure is then printed as a sample, never compared with the target. Needs the environments
the run installs (the first run installs them: its time is printed, not judged).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from matrix.store.dataset import Dataset  # noqa: E402
from matrix.versions import sorted_versions  # noqa: E402

NEW_CLI_TARGET = 120.0
FLOOR_TARGET = 1.15
SESSION_TARGET = 1.3
FAMILIES = ("copilot-python", "copilot-node", "copilot-go")


@dataclass(frozen=True)
class Figure:
    what: str
    measured: float
    target: float | None  # None: a sample, not the figure the target is about
    unit: str

    def line(self) -> str:
        got = f"{self.measured:.2f}{self.unit}"
        if self.target is None:
            return f"  {self.what:<62} {got:>10}   (a sample: not compared)"
        verdict = "meets" if self.measured <= self.target else "MISSES"
        return (f"  {self.what:<62} {got:>10}   target <= {self.target:g}{self.unit}   "
                f"ratio {self.measured / self.target:.2f}   {verdict}")


def compat_matrix(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "matrix.commands.cli", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=timeout, env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1"})


def newest_cli(family: str) -> str:
    rows, _ = Dataset(ROOT / "data").read()
    return sorted_versions([r.cli_version for r in rows if r.family == family and r.probe == "handshake"])[-1]


def measured_cells(results: Path) -> Counter[str]:
    path = results / "rows.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    return Counter(json.loads(line)["probe"] for line in lines if line.strip())


def new_cli_release(family: str, sdks: list[str], probes: list[str], work: Path, warm: bool) -> Figure:
    """Every planned cell of ``family`` with its newest CLI, measured again, timed; with
    ``warm`` a first pass installs what is missing (its time is not the figure)."""
    cli = newest_cli(family)
    narrow = [a for v in sdks for a in ("--sdk", v)] + [a for p in probes for a in ("--probe", p)]
    base = ["run", "--family", family, "--cli", cli, "--data", str(ROOT / "data"), *narrow]
    if warm:
        first = compat_matrix(*base, "--results", str(work / f"{family}-warm"), "--force", timeout=7200)
        if first.returncode not in (0, 3):
            raise SystemExit(f"{family}: the warm-up run exited {first.returncode}:\n{first.stderr[-2000:]}")
    t0 = time.monotonic()
    res = compat_matrix(*base, "--results", str(work / family), "--force", timeout=7200)
    wall = time.monotonic() - t0
    if res.returncode not in (0, 3):
        raise SystemExit(f"{family}: the run exited {res.returncode}:\n{res.stderr[-2000:]}")
    cells = measured_cells(work / family)
    by_probe = ", ".join(f"{p} {n}" for p, n in sorted(cells.items()))
    sample = bool(sdks or probes)
    return Figure(f"{family}: CLI {cli}, {sum(cells.values())} cells ({by_probe})", wall,
                  None if sample else NEW_CLI_TARGET, " s")


def history_floor(family: str, sdks: list[str], work: Path) -> Figure:
    """The handshake cells of ``sdks`` against every CLI release under perf: wall / floor."""
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "cpu_split.py"), "--out", str(work / "perf.data"), "--",
         sys.executable, "-m", "matrix.commands.cli", "run", "--family", family, "--probe", "handshake", "--force",
         "--data", str(ROOT / "data"), "--results", str(work / "history"), *[a for v in sdks for a in ("--sdk", v)]],
        capture_output=True, text=True, cwd=ROOT, timeout=6 * 3600).stdout
    wall = re.search(r"CPU by kind of process over (\d+) s", out)
    floor = re.search(r"the CLI's own processes alone need ([\d.]+) min", out)
    if not wall or not floor:
        raise SystemExit(f"cpu_split printed no figures:\n{out[-2000:]}")
    ratio = float(wall.group(1)) / (float(floor.group(1)) * 60)
    return Figure(f"{family}: handshake history of sdk {', '.join(sdks)}, wall / CLI-only floor", ratio,
                  FLOOR_TARGET, "x")


def session_ratio(family: str, repeat: int) -> Figure:
    res = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_session.py"), "--family", family,
                          "--repeat", str(repeat)], capture_output=True, text=True, cwd=ROOT, timeout=3600)
    found = re.search(r"ratio harness / raw: ([\d.]+)", res.stdout)
    if res.returncode != 0 or not found:
        raise SystemExit(f"bench_session.py ({family}) exited {res.returncode}:\n{res.stdout[-1500:]}"
                         f"{res.stderr[-1500:]}")
    return Figure(f"{family}: a session cell / a raw turn", float(found.group(1)), SESSION_TARGET, "x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--family", action="append", default=[], choices=FAMILIES)
    parser.add_argument("--sdk", action="append", default=[], help="narrow the new-release figure (a sample)")
    parser.add_argument("--probe", action="append", default=[], help="narrow the new-release figure (a sample)")
    parser.add_argument("--repeat", type=int, default=3, help="session cells and raw turns per family")
    parser.add_argument("--history-sdk", action="append", default=[],
                        help="measure the floor figure on these SDK releases' handshake history (needs perf)")
    parser.add_argument("--no-session", action="store_true", help="leave out the session figure")
    parser.add_argument("--no-warm", action="store_true",
                        help="no warm-up pass (the environments are known to be installed)")
    args = parser.parse_args()
    families = args.family or list(FAMILIES)
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="bench-targets-") as tmp:
        work = Path(tmp)
        for family in families:
            figures.append(new_cli_release(family, args.sdk, args.probe, work, not args.no_warm))
            if not args.no_session:
                figures.append(session_ratio(family, args.repeat))
        if args.history_sdk:
            figures.append(history_floor(families[0], args.history_sdk, work))
    memory = psutil.virtual_memory().total / 2**30
    print(f"issue 31's targets on {datetime.now(UTC):%Y-%m-%d}, {platform.machine()} with {psutil.cpu_count()} "
          f"cores and {memory:.0f} GiB, Python {platform.python_version()}:")
    for f in figures:
        print(f.line())


if __name__ == "__main__":
    main()
