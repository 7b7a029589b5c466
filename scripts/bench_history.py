"""Benchmark: a whole history from a cold cache on this machine, and what follows it.

Runs `compat-matrix run` for every SDK × CLI release of one family and probe (default: the
Copilot-Python handshake history of matrix.toml) with every cache empty: our
environment cache, uv's and npm's (all under --work). While it runs, the disk the filesystem
has in use is sampled; the peak above the starting point is the run's peak disk. Then:
a rerun with everything measured, one more CLI release measured into the same results (a
column; with --column, the newest CLI is left out of the first run), and the site built on
the results, once from scratch and once unchanged.

    .venv/bin/python scripts/bench_history.py --work /var/tmp/history [--family copilot-python]
        [--probe handshake] [--jobs 4] [--budget-gb 4] [--no-column] [--cpu-split]

Prints each figure; issue 8's targets are printed next to them. With --cpu-split the cold run
is sampled by `perf` (see scripts/cpu_split.py) and its CPU is printed by kind of process: the
CLI's own share is the floor no scheduling gets under.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
import cpu_split  # noqa: E402 (a sibling script)


class DiskPeak:
    """Samples the filesystem's used bytes; ``peak`` is the most above the first sample."""

    def __init__(self, path: Path, every: float = 1.0) -> None:
        self.path, self.every = path, every
        self.base = self._used()
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _used(self) -> int:
        st = os.statvfs(self.path)
        return (st.f_blocks - st.f_bfree) * st.f_frsize

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            self.peak = max(self.peak, self._used() - self.base)

    def __enter__(self) -> DiskPeak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self._used() - self.base)


def run(argv: list[str], env: dict[str, str], log: Path) -> float:
    t0 = time.monotonic()
    with log.open("a") as out:
        out.write(f"$ {' '.join(argv)}\n")
        out.flush()
        res = subprocess.run(argv, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=REPO)
    if res.returncode not in (0, 3):  # 3: some cells are infra errors (shown as such)
        raise SystemExit(f"{' '.join(argv[:6])} failed with exit {res.returncode}; see {log}")
    return time.monotonic() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path, required=True, help="an empty directory on the disk to measure")
    parser.add_argument("--config", default="matrix.toml")
    parser.add_argument("--family", default="copilot-python")
    parser.add_argument("--probe", default="handshake")
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--budget-gb", type=float, default=4.0, help="cache budget for CLI installs")
    parser.add_argument("--no-column", dest="column", action="store_false",
                        help="do not hold back the newest CLI for the one-column figure")
    parser.add_argument("--cpu-split", action="store_true", help="sample the cold run with perf, print CPU by kind")
    args = parser.parse_args()
    work = args.work.resolve()
    if work.exists() and any(work.iterdir()):
        raise SystemExit(f"{work} is not empty: give an empty (or new) directory, the caches start cold there")
    work.mkdir(parents=True, exist_ok=True)
    config = work / "config.toml"
    text = (REPO / args.config).read_text().replace("cache_budget_gb = 12", f"cache_budget_gb = {args.budget_gb}")
    config.write_text(text)
    env = {**os.environ, "COMPAT_MATRIX_CACHE": str(work / "cache"), "UV_CACHE_DIR": str(work / "uv-cache"),
           "npm_config_cache": str(work / "npm-cache")}
    results, log = work / "results", work / "log.txt"
    cm = str(BIN / "compat-matrix")
    base = [cm, "run", "--config", str(config), "--family", args.family, "--probe", args.probe,
            "--jobs", str(args.jobs), "--results", str(results)]

    held = args.column
    if held:  # the first run leaves the newest CLI out; the column run adds it
        first_config = work / "config-without-newest-cli.toml"
        head, _, tail = text.partition(f"[families.{args.family}]")
        select_line = next(ln for ln in tail.splitlines() if ln.startswith("cli.select"))
        tail = tail.replace(select_line, select_line + '\ncli.exclude = ["latest:1"]', 1)
        first_config.write_text(head + f"[families.{args.family}]" + tail)
    first = [*base[:3], str(first_config), *base[4:]] if held else base
    perf = ["perf", "record", "-a", "-q", "-F", str(cpu_split.FREQUENCY), "-o", str(work / "perf.data"), "--"]
    with DiskPeak(work) as disk:
        cold = run([*perf, *first] if args.cpu_split else first, env, log)
    rows = [json.loads(line) for line in (results / "rows.jsonl").read_text().splitlines()]
    outcomes: dict[str, int] = {}
    for r in rows:
        outcomes[r["outcome"]] = outcomes.get(r["outcome"], 0) + 1
    print(f"cold run, {args.family} {args.probe}, {len(rows)} cells, jobs {args.jobs}: "
          f"{cold / 60:.1f} min (target <= 45 min)")
    print(f"  outcomes: {json.dumps(dict(sorted(outcomes.items())))}")
    print(f"  peak disk above the start: {disk.peak / 1e9:.1f} GB (target <= 15 GB)")
    if args.cpu_split:
        cpu_split.report(cpu_split.split(work / "perf.data"), cold)
    rerun = run(first, env, log)
    print(f"rerun, everything measured: {rerun:.1f} s (target <= 5 s)")
    if held:
        column = run(base, env, log)
        added = len((results / "rows.jsonl").read_text().splitlines()) - len(rows)
        print(f"one new CLI release (a column, {added} cells): {column:.1f} s (target <= 180 s)")
    root = work / "site-root"
    root.mkdir()
    for name in ("mkdocs.yml", "docs", "notebooks"):
        src = REPO / name
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, root / name)
    build = [cm, "build", "--results", str(results), "--root", str(root), "--site", str(work / "site")]
    print(f"site build on these results: {run(build, env, log):.1f} s (target <= 60 s)")
    print(f"site build, nothing changed: {run(build, env, log):.1f} s (target <= 10 s)")
    print(f"log: {log}")


if __name__ == "__main__":
    main()
