"""`compat-matrix merge`: the results of shards joined into one results directory."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from matrix.commands.common import warn
from matrix.pipeline.shard import merge

__all__ = ["cmd_merge"]


def cmd_merge(args: argparse.Namespace, console: Console) -> int:
    count, warnings = merge(Path(args.out), [Path(p) for p in args.shards])
    for w in warnings:
        warn(w)
    console.print(f"merged {count} rows from {len(args.shards)} shard(s) into {args.out}")
    return 0
