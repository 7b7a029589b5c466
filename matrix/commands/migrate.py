"""`compat-matrix migrate`: a dataset of an older dataset schema brought to this one, as one
change, after checking it; nothing is measured again."""

from __future__ import annotations

import argparse

from rich.console import Console

from matrix.commands.command import Command
from matrix.commands.common import add_data_argument, data_of
from matrix.errors import UserError
from matrix.families.registry import type_row
from matrix.store.migrate import migrate

__all__ = ["COMMAND"]


def cmd_migrate(args: argparse.Namespace, console: Console) -> int:
    """Bring a dataset written by an older compat-matrix to the schema this one reads, as a whole."""
    where = data_of(args)
    if where is None:
        raise UserError("no dataset here; pass --data DIR (the committed history, e.g. data)")
    console.print(migrate(where, type_row), highlight=False)
    return 0


def _arguments(mg: argparse.ArgumentParser) -> None:
    add_data_argument(mg)


COMMAND = Command("migrate", "bring a dataset of an older dataset schema to this one, as a whole", _arguments,
                  cmd_migrate)
