"""What the commands share: the console for errors and warnings, the plan a config gives,
and where the rows are read from."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from rich.console import Console

from matrix.errors import UserError
from matrix.families.registry import FAMILIES
from matrix.pipeline.config import Plan, load_plan
from matrix.store.dataset import Dataset, Sources

__all__ = ["DATA", "add_data_argument", "err_console", "handshake_family", "load", "results_of", "sources_of", "warn"]

# The committed history every command reads by default: data/ of the checkout, or where
# COMPAT_MATRIX_DATA says (a tool run outside the checkout; tests that must not see it).
DATA = os.environ.get("COMPAT_MATRIX_DATA", "data")

err_console = Console(stderr=True, soft_wrap=True)


def add_data_argument(parser: argparse.ArgumentParser, what: str = "") -> None:
    """``--data``, the committed history, as every command takes it; ``what``: what the
    command does with it, when more than reading it."""
    parser.add_argument("--data", default=DATA, help=f"the committed history{what} (default: data, or "
                                                        "$COMPAT_MATRIX_DATA)")


def warn(text: str) -> None:
    err_console.print(f"[yellow]warning:[/] {text}", highlight=False)


def load(args: argparse.Namespace) -> Plan:
    """The plan of ``--config``, checked against the families this installation has."""
    probes = {name: list(f.probes) for name, f in FAMILIES.items()}
    return load_plan(Path(args.config), list(FAMILIES), probes, [n for n, f in FAMILIES.items() if f.standin])


def results_of(args: argparse.Namespace, plan: Plan | None) -> Path:
    if args.results:
        return Path(args.results)
    return Path(plan.run.results if plan else "results")


def sources_of(args: argparse.Namespace) -> Sources:
    """The committed history (``--data``, when it exists) and the local results (``--results``)."""
    data = Path(getattr(args, "data", None) or DATA)
    return Sources(Path(args.results or "results"), data if Dataset(data).exists() else None)


def handshake_family(name: str) -> str:
    """``--family`` of a command that reads handshake matrices (a stand-in family has none)."""
    if name not in FAMILIES or FAMILIES[name].standin:
        valid = ", ".join(f for f, fam in FAMILIES.items() if not fam.standin)
        raise UserError(f"--family {name!r} has no handshake matrix; valid: {valid}")
    return name
