"""Benchmark: issue 31's targets, each figure next to its target and the ratio, in one run.

1. **A new CLI release, every probe of a family**: the newest CLI release of the dataset is
   held back (a copy of the dataset as it stood before it: matrix/store/holdback.py) and
   measured as `make site` measures a release the day it appears (`compat-matrix run --new`,
   matrix.toml's selection and timeouts, into a results directory of its own): every pair
   cell of that release, each probe of the family. Tolerance rules are judged per SDK
   release against the CLI they were measured with before, so a new release costs none of
   them: they stand in the copy. Target: at most 120 s per family. With ``--floor`` the run
   is timed under `perf` and printed beside the CLIs' own CPU over the cores (its floor).
2. **The handshake history against the CLI-only floor** (``--history-sdk``, off by default:
   it takes long): the handshake cells of the named SDK releases against every CLI release,
   run under `perf` (scripts/cpu_split.py); the floor is the CLI's own CPU-seconds divided by
   the cores. The CLI releases go as many at a time as the cache budget holds (a bigger budget
   where the disk has room; ``--history-chunk`` tried, by default the budget over the largest
   CLI measured), each run a stride across the history, each run's installed by a pass that is
   not timed: a history of CLIs does not fit the cache budget, and installing is not the
   overhead this figure is about. Target: the runs' wall time at most 1.15 x the
   floor.
3. **A session cell against a raw turn**: scripts/bench_session.py per family. Target: at
   most 1.3.

    .venv/bin/python scripts/bench_targets.py [--family copilot-python ...] [--sdk V ...]
        [--probe P ...] [--repeat 3] [--history-sdk V ...] [--history-chunk N] [--no-new-release] [--no-session]
        [--no-warm] [--floor] [--work DIR]

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
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from matrix.commands.common import load  # noqa: E402
from matrix.execute.cache import cache_root, dir_size  # noqa: E402
from matrix.execute.environment import E, evict, make_env  # noqa: E402
from matrix.families.registry import FAMILIES as FAMILY_OF  # noqa: E402
from matrix.families.registry import open_sources  # noqa: E402
from matrix.model import Cell  # noqa: E402
from matrix.store.holdback import hold_back  # noqa: E402
from matrix.versions import sorted_versions  # noqa: E402

NEW_CLI_TARGET = 120.0
FLOOR_TARGET = 1.15
SESSION_TARGET = 1.3
# The console script, not ``python -m``: cpu_split tells the harness by the name it ran under.
HARNESS = Path(sys.executable).parent / "compat-matrix"
CLI_ENV_GB = 0.55  # the largest CLI release installed, measured (0.19-0.54 GB)
DISK_RESERVE_GB = 12.0  # left free by the history's bigger cache budget
HISTORY_BUDGET_MAX_GB = 30.0
FAMILIES = ("copilot-python", "copilot-node", "copilot-go")


@dataclass(frozen=True)
class Figure:
    what: str
    measured: float
    target: float | None  # None: a sample, not the figure the target is about
    unit: str
    aside: str = "a sample: not compared"  # said where there is no target

    def line(self) -> str:
        got = f"{self.measured:.2f}{self.unit}"
        if self.target is None:
            return f"  {self.what:<62} {got:>10}   ({self.aside})"
        verdict = "meets" if self.measured <= self.target else "MISSES"
        return (f"  {self.what:<62} {got:>10}   target <= {self.target:g}{self.unit}   "
                f"ratio {self.measured / self.target:.2f}   {verdict}")


def compat_matrix(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "matrix.commands.cli", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=timeout, env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1"})


def held_back(family: str, work: Path) -> tuple[Path, str]:
    """The dataset as it stood before the family's newest CLI release, and that release. Its
    tolerance rows stand: a rule is judged per SDK release against the CLI it was measured
    with before, so the daily run measures none of them again for a new CLI (holding them back
    too would make the planner judge every release's rules again: 300 cells that no new
    release costs)."""
    data = work / f"{family}-data"
    cli = hold_back(ROOT / "data", data, family, work / f"{family}-hold", stood=lambda row: row.probe == "tolerance")
    return data, cli


def config_for(family: str, cli: str, sdks: list[str], probes: list[str], path: Path,
               budget: float | None = None) -> Path:
    """matrix.toml's run, timeouts and family table, its CLI selection ending at ``cli`` (a release
    published since the dataset's newest is not this figure's), narrowed by ``sdks`` and ``probes``;
    ``budget``: another cache budget (GB)."""
    plan = tomllib.loads((ROOT / "matrix.toml").read_text())
    if budget is not None:
        plan["run"] = {**plan.get("run", {}), "cache_budget_gb": budget}
    table = {**plan["families"][family], "cli": {**plan["families"][family].get("cli", {}), "select": [f"<={cli}"]}}
    if sdks:
        table["sdk"] = {"select": sdks}
    if probes:
        table["probes"] = probes
    lines = [f"[{name}]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in plan.get(name, {}).items()
                                     if k != "results")
             for name in ("run", "timeouts")]
    lines.append(f"[families.{family}]\n" + "".join(
        "".join(f"{k}.{k2} = {json.dumps(v2)}\n" for k2, v2 in v.items()) if isinstance(v, dict)
        else f"{k} = {json.dumps(v)}\n" for k, v in table.items()))
    path.write_text("\n".join(lines))
    return path


def measured_cells(results: Path, cli: str) -> Counter[str]:
    """The cells measured, by probe; every one must be of ``cli``: `--new` also measures an SDK
    release the registry has and the dataset lacks, which is not this figure."""
    path = results / "rows.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    rows = [json.loads(line) for line in lines if line.strip()]
    others = sorted({f"sdk {r['sdk_version']} x cli {r['cli_version']}" for r in rows if r["cli_version"] != cli})
    if others:
        raise SystemExit(f"the run measured cells of releases the dataset lacks besides CLI {cli} "
                         f"({', '.join(others[:5])}): measure and fold them first (`make site`), then run this again")
    return Counter(r["probe"] for r in rows)


def under_perf(args: list[str], out: Path) -> tuple[float, float, str]:
    """``compat-matrix ARGS`` under scripts/cpu_split.py: (wall seconds, the CLI-only floor in
    seconds: the CPU-seconds of the CLIs the cells started over the machine's cores, what the
    run printed)."""
    res = subprocess.run([sys.executable, str(ROOT / "scripts" / "cpu_split.py"), "--out", str(out), "--",
                          str(HARNESS), *args], capture_output=True, text=True,
                         cwd=ROOT, timeout=6 * 3600, env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1"})
    wall = re.search(r"CPU by kind of process over ([\d.]+) s", res.stdout)
    floor = re.search(r"the CLI's own processes alone need [\d.]+ min \(([\d.]+) s\)", res.stdout)
    if not wall or not floor:
        raise SystemExit(f"cpu_split printed no figures:\n{res.stdout[-2000:]}{res.stderr[-2000:]}")
    return float(wall.group(1)), float(floor.group(1)), res.stdout


def new_cli_release(family: str, sdks: list[str], probes: list[str], work: Path, warm: bool,
                    floor: bool) -> list[Figure]:
    """The family's newest CLI release measured as the daily run measures a release the day it
    appears (`compat-matrix run --new` against the dataset as it stood before it), timed; with
    ``warm`` a first pass installs what is missing (its time is not the figure); with ``floor``
    the timed pass runs under perf and its wall time is also compared with the CLI-only floor."""
    data, cli = held_back(family, work)
    config = config_for(family, cli, sdks, probes, work / f"{family}.toml")
    base = ["run", "--new", "--config", str(config), "--family", family, "--data", str(data)]
    if warm:
        first = compat_matrix(*base, "--results", str(work / f"{family}-warm"), timeout=7200)
        if first.returncode not in (0, 3):
            raise SystemExit(f"{family}: the warm-up run exited {first.returncode}:\n{first.stderr[-2000:]}")
    results = ["--results", str(work / family)]
    if floor:
        wall, cli_floor, _ = under_perf([*base, *results], work / f"{family}-perf.data")
    else:
        t0 = time.monotonic()
        res = compat_matrix(*base, *results, timeout=7200)
        wall, cli_floor = time.monotonic() - t0, 0.0
        if res.returncode not in (0, 3):
            raise SystemExit(f"{family}: the run exited {res.returncode}:\n{res.stderr[-2000:]}")
    cells = measured_cells(work / family, cli)
    by_probe = ", ".join(f"{p} {n}" for p, n in sorted(cells.items()))
    sample = bool(sdks or probes)
    what = f"{family}: CLI {cli}, {sum(cells.values())} cells ({by_probe})"
    figures = [Figure(what, wall, None if sample else NEW_CLI_TARGET, " s")]
    if floor:
        figures.append(Figure(f"{family}: CLI {cli}, the CLIs' own CPU over {psutil.cpu_count()} cores",
                              cli_floor, None, " s", "the floor: no scheduling of ours gets under it"))
        figures.append(Figure(f"{family}: CLI {cli}, wall / that floor", wall / cli_floor, None, "x",
                              "how much of the wall time is ours"))
    return figures


def budget_of(config: Path) -> float:
    return load(argparse.Namespace(config=str(config))).run.cache_budget_gb


def history_budget() -> float:
    """The cache budget (GB) of the history's runs: matrix.toml's, or more where the disk has
    room (its free space and the CLI releases cached now, less ``DISK_RESERVE_GB``): each run
    counts its start and end once, and a history of CLIs fits the disk in fewer runs than it
    fits the daily budget."""
    cached = dir_size(cache_root() / "envs" / "cli") / 1024**3 if (cache_root() / "envs" / "cli").is_dir() else 0.0
    room = shutil.disk_usage(cache_root() if cache_root().is_dir() else ROOT).free / 1024**3 + cached
    return max(budget_of(ROOT / "matrix.toml"), min(HISTORY_BUDGET_MAX_GB, room - DISK_RESERVE_GB))


def make_room(chunk: int, budget: float) -> None:
    """Evict the least recently used CLI environments until ``chunk`` more fit the cache
    budget: a run evicts the environments it is done with first, so a warm pass that met a
    full cache evicts its own first CLIs, and the timed pass installed them again."""
    root = cache_root() / "envs" / "cli"
    for kind in (d.name for d in root.iterdir() if d.is_dir()) if root.is_dir() else ():
        evict(root, kind, max(0, int((budget - chunk * CLI_ENV_GB) * 1024**3)), keep=set())


def installed(family: str, sdks: list[str], clis: list[str]) -> set[str]:
    """The CLI releases of ``clis`` whose environment (as the family makes it for a handshake
    cell of each of ``sdks``) is installed and ready now."""
    def make(kind: type[E], side: str, package: str, version: str, **kw: Any) -> E:
        return make_env(kind, package, version, cache_root() / "envs" / side)

    def ready(sdk: str, cli: str) -> bool:
        _, env = FAMILY_OF[family].environments(Cell(family, sdk, cli, "handshake"), make)
        return env is not None and env.is_ready()
    return {cli for cli in clis if all(ready(sdk, cli) for sdk in sdks)}


def uninstallable(results: Path) -> set[str]:
    """The CLI releases a run's rows say the registry cannot install."""
    path = results / "rows.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []
    return {r["cli_version"] for r in rows
            if r["outcome"] == "uninstallable" and r.get("detail", {}).get("side") == "cli"}


def history_floor(family: str, sdks: list[str], work: Path, chunk: int | None) -> Figure:
    """The handshake cells of ``sdks`` against every CLI release of the dataset, under perf:
    wall / floor. The CLI releases go as many at a time as the cache budget holds, each run's
    environments installed by a first pass that is not timed (a whole history of CLIs does
    not fit the budget, and an install is not the harness's overhead this figure is about).
    Each run takes every n-th release, a stride across the whole history; ``chunk`` are
    tried, and those the warm pass had to evict again (the budget full) go to the next run. A
    timed pass that installed anything is refused, not counted. The walls and the floors of
    the timed passes are summed: each run's start and end are counted once per run, so the
    fewer runs the budget allows, the nearer the figure is to one run's."""
    sides = open_sources(work / "no-results", ROOT / "data").releases().get(family, {})
    clis = sorted_versions(list(sides.get("cli", {})))
    if not clis:
        raise SystemExit(f"{family}: the dataset lists no CLI release")
    budget = history_budget()
    config = config_for(family, clis[-1], sdks, ["handshake"], work / "history.toml", budget)
    if chunk is None:  # runs of even length, each within what the budget holds of the largest CLIs
        runs = -(-len(clis) // max(1, int(budget // CLI_ENV_GB)))
        chunk = -(-len(clis) // runs)
    print(f"  history: cache budget {budget:.0f} GB, {chunk} CLI releases a run", file=sys.stderr, flush=True)
    wall = floor = 0.0
    left, n = list(clis), 0
    base = ["run", "--config", str(config), "--family", family, "--probe", "handshake", "--force",
            "--data", str(ROOT / "data"), *[a for v in sdks for a in ("--sdk", v)]]
    while left:
        make_room(chunk, budget)
        # Every run a stride across the whole history, as one run of it would meet its releases:
        # runs of consecutive releases put the refusing ones (each waits out the SDK's and the
        # leak's timeouts) together at one run's end, an idle tail no whole-history run has.
        tried = left[::-(-len(left) // chunk)]
        first = compat_matrix(*base, *[a for v in tried for a in ("--cli", v)],
                              "--results", str(work / f"history-warm-{n}"), timeout=7200)
        if first.returncode not in (0, 3):
            raise SystemExit(f"{family}: the warm-up of CLI chunk {n} exited {first.returncode}:\n"
                             f"{first.stderr[-2000:]}")
        # A release the registry cannot install is measured as a real run meets it (at once, no
        # CLI); one the budget evicted again goes to the next run.
        kept = installed(family, sdks, tried) | uninstallable(work / f"history-warm-{n}")
        part = [v for v in tried if v in kept]
        if not part:
            raise SystemExit(f"{family}: no CLI release of {tried[0]} .. {tried[-1]} stayed installed after its "
                             f"warm-up: is the cache budget ({budget:.0f} GB) below one CLI?")
        args = [*base, *[a for v in part for a in ("--cli", v)]]
        w, f, said = under_perf([*args, "--results", str(work / f"history-{n}")], work / f"history-{n}.data")
        installs = re.search(r"^installs: (.*)$", said, re.M)
        if installs:
            raise SystemExit(f"{family}: the timed pass of CLI chunk {n} installed what its warm-up had "
                             f"({installs.group(1)[:300]}): run again with a smaller --history-chunk")
        print(f"  history run {n + 1}: {len(part)} CLI releases, {part[0]} .. {part[-1]}: {w:.0f} s, "
              f"floor {f:.0f} s", file=sys.stderr, flush=True)
        wall, floor, n = wall + w, floor + f, n + 1
        left = [v for v in left if v not in part]
    make_room(0, budget_of(ROOT / "matrix.toml"))  # the cache as the daily budget keeps it
    return Figure(f"{family}: handshake history of sdk {', '.join(sdks)} x {len(clis)} CLI releases "
                  f"in {n} runs, wall / CLI-only floor", wall / floor, FLOOR_TARGET, "x")


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
    parser.add_argument("--history-chunk", type=int,
                        help="CLI releases tried at once (default: the history's cache budget over the largest CLI "
                             f"release measured, {CLI_ENV_GB} GB); those the warm pass evicts again go to the next run")
    parser.add_argument("--no-new-release", action="store_true", help="leave out the new-release figure")
    parser.add_argument("--no-session", action="store_true", help="leave out the session figure")
    parser.add_argument("--floor", action="store_true",
                        help="run the new release under perf and compare it with the CLI-only floor too")
    parser.add_argument("--no-warm", action="store_true",
                        help="no warm-up pass (the environments are known to be installed)")
    parser.add_argument("--work", type=Path, help="keep the held-back datasets and each run's results here "
                                                  "(an empty directory; default: a temporary one, removed)")
    args = parser.parse_args()
    families = args.family or list(FAMILIES)
    figures: list[Figure] = []
    if args.work is not None and args.work.exists() and any(args.work.iterdir()):
        raise SystemExit(f"--work {args.work}: not empty; give an empty or new directory")
    with tempfile.TemporaryDirectory(prefix="bench-targets-") as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        for family in families:
            if not args.no_new_release:
                figures += new_cli_release(family, args.sdk, args.probe, work, not args.no_warm, args.floor)
            if not args.no_session:
                figures.append(session_ratio(family, args.repeat))
        if args.history_sdk:
            figures.append(history_floor(families[0], args.history_sdk, work, args.history_chunk))
    memory = psutil.virtual_memory().total / 2**30
    print(f"issue 31's targets on {datetime.now(UTC):%Y-%m-%d}, {platform.machine()} with {psutil.cpu_count()} "
          f"cores and {memory:.0f} GiB, Python {platform.python_version()}:")
    for f in figures:
        print(f.line())


if __name__ == "__main__":
    main()
