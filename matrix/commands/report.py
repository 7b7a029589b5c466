"""`compat-matrix report`: the matrix on a terminal, or every row as JSON or CSV."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console

from matrix.answers.report import print_report, to_csv, to_json
from matrix.commands.common import sources_of, warn
from matrix.errors import UserError
from matrix.execute.storage import write_atomic

__all__ = ["cmd_report"]


def cmd_report(args: argparse.Namespace, console: Console) -> int:
    sources = sources_of(args)
    frame, warnings = sources.frame()
    if frame.empty:
        raise UserError(f"no results in {sources.data or sources.results}; run `compat-matrix run` first or pass "
                        "--results DIR")
    for w in warnings:
        warn(w)
    if args.family:
        frame = frame[frame["family"].isin(args.family)]
    if args.format == "table":
        print_report(frame, console)
        return 0
    text = to_json(frame) if args.format == "json" else to_csv(frame)
    if args.output:
        write_atomic(Path(args.output), text)
        console.print(f"wrote {args.output}")
    else:
        sys.stdout.write(text)
    return 0
