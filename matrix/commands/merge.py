"""`compat-matrix merge`: the results of shards joined into one results directory."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from matrix.commands.command import Command
from matrix.commands.common import warn
from matrix.pipeline.shard import merge

__all__ = ["COMMAND"]


def cmd_merge(args: argparse.Namespace, console: Console) -> int:
    count, warnings = merge(Path(args.out), [Path(p) for p in args.shards])
    for w in warnings:
        warn(w)
    console.print(f"merged {count} rows from {len(args.shards)} shard(s) into {args.out}")
    return 0


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("out", help="the merged results directory (created; rows are appended)")
    parser.add_argument("shards", nargs="+", help="the shards' results directories")


COMMAND = Command("merge", "merge the results of shards into one results directory", _arguments, cmd_merge)
