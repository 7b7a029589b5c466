"""`compat-matrix changes`: what a fold into the dataset changed, for a reviewer or a pull
request's body: new releases, regressions first."""

from __future__ import annotations

import argparse

from rich.console import Console

from matrix.answers import changes
from matrix.commands.command import Command
from matrix.commands.common import add_data_argument, data_of, positive
from matrix.errors import UserError
from matrix.families.registry import cells_frame, type_row
from matrix.store.dataset import Dataset

__all__ = ["COMMAND"]


def cmd_changes(args: argparse.Namespace, console: Console) -> int:
    """What a fold changed (the newest by default), for a reviewer or a pull request's body."""
    where = data_of(args)
    if where is None:
        raise UserError("no dataset here; pass --data DIR (the committed history, e.g. data)")
    data = Dataset(where, type_row)
    entries = data.changes()
    if not entries:
        console.print(f"{where}: no fold recorded yet (`compat-matrix fold` records one)")
        return 0
    if not 1 <= args.entry <= len(entries):
        raise UserError(f"--entry {args.entry}: {where} has {len(entries)} fold(s); pass 1 (the newest) to "
                        f"{len(entries)}")
    entry = entries[args.entry - 1]
    frame = cells_frame(data.read()[0])
    if args.format == "title":
        print(changes.headline(changes.notes_of(frame, entry), entry))
    else:
        render = {"markdown": changes.render_markdown, "text": changes.render_text, "json": changes.to_json}
        print(render[args.format](frame, entry), end="" if args.format == "text" else "\n")
    return 0


def _arguments(c: argparse.ArgumentParser) -> None:
    add_data_argument(c)
    c.add_argument("--entry", type=positive, default=1, metavar="N", help="the Nth newest fold (default: 1)")
    c.add_argument("--format", choices=["markdown", "text", "json", "title"], default="text",
                   help="markdown: a pull request's body; title: its one-line title")


COMMAND = Command("changes", "what a fold into the dataset changed: new releases, regressions first", _arguments,
                  cmd_changes)
