"""`compat-matrix diff`: the cells whose outcome changed between two result sets (or
datasets), regressions first."""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd
from rich.console import Console

from matrix.answers.diff import diff_frames, render_text, to_json
from matrix.commands.command import Command
from matrix.errors import UserError
from matrix.families.registry import cells_frame, type_row
from matrix.store.dataset import Dataset
from matrix.store.results import ROWS_FILE, load_frame

__all__ = ["COMMAND"]


def _rows_of(text: str) -> pd.DataFrame:
    """A results directory (or its rows file), or a dataset such as data/."""
    path = Path(text)
    if path.is_file() and path.name == ROWS_FILE:
        path = path.parent
    if (path / ROWS_FILE).exists():
        return load_frame(path)[0]
    if Dataset(path).present():
        return cells_frame(Dataset(path, type_row).read()[0])
    raise UserError(f"{text}: no {ROWS_FILE} and no dataset there; pass a results directory, its {ROWS_FILE}, "
                    "or a dataset directory such as data")


def cmd_diff(args: argparse.Namespace, console: Console) -> int:
    old, new = _rows_of(args.old), _rows_of(args.new)
    changes = diff_frames(old, new)
    if args.json:
        print(to_json(changes))
    else:
        console.print(render_text(changes), end="", highlight=False, soft_wrap=True)
    return 0


def _arguments(d: argparse.ArgumentParser) -> None:
    d.add_argument("old", help="the older results directory (or its rows.jsonl)")
    d.add_argument("new", help="the newer results directory (or its rows.jsonl)")
    d.add_argument("--json", action="store_true")


COMMAND = Command("diff", "cells whose outcome changed between two result sets, regressions first", _arguments,
                  cmd_diff)
