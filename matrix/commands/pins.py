"""`compat-matrix pins`: the other side's measured working range(s) of one release, in its
ecosystem's own syntax, and with --bisect the exact boundaries among unmeasured releases."""

from __future__ import annotations

import argparse
import contextlib
import json
from pathlib import Path
from typing import Any

import pandas as pd
from rich.console import Console

from matrix.answers.analysis import pairs, pin_lines
from matrix.answers.bisect import bisect_gap, gaps
from matrix.commands.command import Command
from matrix.commands.common import add_data_argument, check_released, known_releases, load, pair_family, sources_of
from matrix.ecosystems.discovery import Discovery
from matrix.errors import UserError
from matrix.execute import proc
from matrix.execute.cache import cache_root
from matrix.families.registry import FAMILIES
from matrix.model import Outcome
from matrix.pipeline.config import Plan
from matrix.pipeline.runner import Cell, Runner
from matrix.store.dataset import Sources
from matrix.store.results import Store
from matrix.versions import sorted_versions

__all__ = ["COMMAND"]


def _frame(sources: Sources) -> pd.DataFrame:
    frame, _ = sources.frame()
    if frame.empty:
        where = f"{sources.data} or {sources.results}" if sources.data else str(sources.results)
        raise UserError(f"no results in {where}; run `compat-matrix run` first or pass --results DIR")
    return frame


def _bisect(args: argparse.Namespace, plan: Plan, frame: pd.DataFrame, console: Console) -> list[dict[str, Any]]:
    """Close every working/failing gap of the asked version's row or column with real probes."""
    fam = FAMILIES[args.family]
    sub = pairs(frame, args.family)
    if args.sdk is not None:
        part = sub[sub["sdk_version"] == args.sdk]
        axis_col, ecosystem, package = "cli_version", fam.cli_ecosystem, fam.cli_package
    else:
        part = sub[sub["cli_version"] == args.cli]
        axis_col, ecosystem, package = "sdk_version", fam.sdk_ecosystem, fam.sdk_package
    axis = [(v, str(part[part[axis_col] == v]["outcome"].iloc[0])) for v in sorted_versions(part[axis_col])]
    discovery = Discovery(cache_root() / "discovery", plan.run.discovery_ttl_hours * 3600)
    released = sorted_versions([r.version for r in discovery.releases(ecosystem, package, fam.version_hints)
                                if not r.prerelease])
    store = Store(Path(args.results))
    runner = Runner(plan, store, cache_root(), proc.Reaper())

    def probe(version: str) -> str:
        sdk, cli = (args.sdk, version) if args.sdk is not None else (version, args.cli)
        row = runner.measure(Cell(args.family, sdk, cli, str(fam.pair_probe)))
        outcome = row.outcome if row is not None else Outcome.INFRA_ERROR
        console.print(f"  probed sdk {sdk} × cli {cli}: {outcome}", highlight=False)
        return outcome

    found = []
    with contextlib.closing(runner):
        for low, high, between in gaps(axis, released):
            console.print(f"bisecting between {low} and {high}: {len(between)} unmeasured releases")
            b = bisect_gap(low, dict(axis)[low], high, between, probe)
            found.append({"between": [low, high], "last_like_low": b.last_same, "first_like_high": b.first_other,
                          "exact": b.exact, "probed": [list(p) for p in b.probed], "note": b.note})
    return found


def cmd_pins(args: argparse.Namespace, console: Console) -> int:
    family = pair_family(args.family)
    if (args.sdk is None) == (args.cli is None):
        raise UserError("pins needs exactly one of --sdk V or --cli V")
    sources = sources_of(args)
    frame = _frame(sources)
    side, version = ("sdk", args.sdk) if args.sdk is not None else ("cli", args.cli)
    check_released(family, side, version, known_releases(frame, sources))
    boundaries: list[dict[str, Any]] = []
    if args.bisect:
        boundaries = _bisect(args, load(args), frame, console)
        frame = _frame(sources_of(args))  # with the probed cells
    specs = pin_lines(frame, family, args.sdk, args.cli)
    leaky = pin_lines(frame, family, args.sdk, args.cli, caveat=True)
    if args.json:
        def bare(lines: list[str]) -> list[str]:
            return [s.strip('"') for s in lines]  # the quotes are for a shell

        print(json.dumps({"family": family, "sdk": args.sdk, "cli": args.cli, "works_with": bare(specs),
                          "works_but_leaves_cli_running": bare(leaky), "boundaries": boundaries}, indent=1))
        return 0
    what = f"sdk {args.sdk}" if args.sdk else f"cli {args.cli}"
    console.print(f"{family} {what} works with (measured):" if specs else f"{family} {what}: nothing measured works")
    for s in specs:
        console.print(f"  {s}", highlight=False)
    if leaky:
        console.print(f"works, but {FAMILIES[family].caveat} (prefer the above):", highlight=False)
        for s in leaky:
            console.print(f"  {s}", highlight=False)
    for b in boundaries:
        exact = "exactly" if b["exact"] else "somewhere"
        console.print(f"boundary {exact} between {b['last_like_low']} and {b['first_like_high']} "
                      f"({len(b['probed'])} probes){' - ' + b['note'] if b['note'] else ''}", highlight=False)
    return 0


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", default="matrix.toml", help="the matrix config (for --bisect)")
    p.add_argument("--family", required=True)
    p.add_argument("--sdk", default=None, metavar="V")
    p.add_argument("--cli", default=None, metavar="V")
    p.add_argument("--bisect", action="store_true", help="find exact boundaries among unmeasured releases, by probing")
    p.add_argument("--results", default="results")
    add_data_argument(p)
    p.add_argument("--json", action="store_true")


COMMAND = Command("pins", "the other side's measured working range(s) as pip or npm specifiers", _arguments, cmd_pins)
