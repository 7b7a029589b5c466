"""What the commands share: the console for errors and warnings, the plan a config gives,
and where the rows are read from."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from matrix.errors import UserError
from matrix.families.registry import FAMILIES
from matrix.pipeline.config import Plan, load_plan
from matrix.store.dataset import Dataset, Sources

__all__ = ["DATA_ENV", "add_data_argument", "data_of", "err_console", "handshake_family", "load", "results_of",
           "sources_of", "warn"]

# The committed history every command reads by default: data/ of the checkout, or where
# COMPAT_MATRIX_DATA says (a tool run outside the checkout); COMPAT_MATRIX_DATA="" reads none
# (tests that must not see it).
DATA_ENV = "COMPAT_MATRIX_DATA"

err_console = Console(stderr=True, soft_wrap=True)


def add_data_argument(parser: argparse.ArgumentParser, what: str = "") -> None:
    """``--data``, the committed history, as every command takes it; ``what``: what the
    command does with it, when more than reading it."""
    parser.add_argument("--data", default=None, help=f"the committed history{what} (default: data when it is "
                                                         "there, or $COMPAT_MATRIX_DATA)")


def warn(text: str) -> None:
    err_console.print(f"[yellow]warning:[/] {escape(text)}", highlight=False)


def load(args: argparse.Namespace) -> Plan:
    """The plan of ``--config``, checked against the families this installation has."""
    probes = {name: list(f.probes) for name, f in FAMILIES.items()}
    return load_plan(Path(args.config), list(FAMILIES), probes, [n for n, f in FAMILIES.items() if f.standin])


def results_of(args: argparse.Namespace, plan: Plan | None) -> Path:
    if args.results:
        return Path(args.results)
    return Path(plan.run.results if plan else "results")


def data_of(args: argparse.Namespace, create: bool = False) -> Path | None:
    """The committed history to read: ``--data`` or ``$COMPAT_MATRIX_DATA`` must name one that is
    there (a mistyped path is an error, never an empty history; ``create``: a fold may start a new
    one); by default ``data`` when it is there, else none."""
    named = getattr(args, "data", None)
    where = "--data"
    if named is None and DATA_ENV in os.environ:
        named, where = os.environ[DATA_ENV], f"${DATA_ENV}"
        if not named:
            return None
    if named is None:
        return Path("data") if Dataset(Path("data")).present() else None
    path = Path(named)
    if not Dataset(path).present() and not (create and (not path.exists() or not any(path.iterdir()))):
        raise UserError(f"{where} {named}: no dataset there (no {path / 'index.json'}); name the directory that holds "
                        "the committed history (e.g. data), or leave it out")
    return path


def sources_of(args: argparse.Namespace) -> Sources:
    """The committed history (``data_of``) and the local results (``--results``)."""
    return Sources(Path(args.results or "results"), data_of(args))


def handshake_family(name: str) -> str:
    """``--family`` of a command that reads handshake matrices (a stand-in family has none)."""
    if name not in FAMILIES or FAMILIES[name].standin:
        valid = ", ".join(f for f, fam in FAMILIES.items() if not fam.standin)
        raise UserError(f"--family {name!r} has no handshake matrix; valid: {valid}")
    return name
