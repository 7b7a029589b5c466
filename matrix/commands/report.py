"""`compat-matrix report`: the matrix on a terminal, or every row as JSON or CSV."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console

from matrix.answers.report import print_report, to_csv, to_json
from matrix.commands.command import Command
from matrix.commands.common import add_data_argument, sources_of, warn
from matrix.errors import UserError
from matrix.execute.storage import write_atomic

__all__ = ["COMMAND"]


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


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--results", default=None, help="results directory (default: results)")
    add_data_argument(parser)
    parser.add_argument("--family", action="append", default=[], help="only this family (repeatable)")
    parser.add_argument("--format", choices=["table", "json", "csv"], default="table")
    parser.add_argument("--output", default=None, help="write to this file (atomically) instead of stdout")


COMMAND = Command("report", "print or export the stored results", _arguments, cmd_report)
