"""`compat-matrix check`: every rule of the dataset, and every violation, one line each."""

from __future__ import annotations

import argparse

from rich.console import Console

from matrix.commands.command import Command
from matrix.commands.common import add_data_argument, data_of
from matrix.errors import EXIT_USER, UserError
from matrix.families.registry import type_row
from matrix.store.dataset import Dataset

__all__ = ["COMMAND"]


def cmd_check(args: argparse.Namespace, console: Console) -> int:
    """Every rule the dataset breaks, one line each (exit 2 when it breaks any)."""
    where = data_of(args)
    if where is None:
        raise UserError("no dataset here; pass --data DIR (the committed history, e.g. data)")
    snap, violations = Dataset(where, type_row).verify()
    for v in violations:
        console.print(str(v), highlight=False, soft_wrap=True, markup=False)
    files = len(snap.manifest.files) if snap.manifest else 0
    console.print(f"{where}: {files} files, {len(snap.rows)} rows, {len(snap.entries)} changelog entries: "
                  + (f"{len(violations)} violations" if violations else "every rule kept"), highlight=False)
    return EXIT_USER if violations else 0


def _arguments(ck: argparse.ArgumentParser) -> None:
    add_data_argument(ck)


COMMAND = Command("check", "check every rule of the dataset; print every violation, exit 2 on any", _arguments,
                  cmd_check)
