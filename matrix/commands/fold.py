"""`compat-matrix fold`: local measurements folded into the committed history, as a whole,
after every row of them is checked; the diff is for a reviewer."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from matrix.commands.command import Command
from matrix.commands.common import add_data_argument, data_of
from matrix.errors import UserError
from matrix.execute.lock import holding
from matrix.families.registry import FAMILIES, type_row
from matrix.model import NO_CLI, Row
from matrix.store.dataset import Dataset
from matrix.store.results import Releases

__all__ = ["COMMAND"]


def _accept(row: Row, releases: Releases) -> str | None:
    """Why a row of the local results may not be folded: a family or probe this installation
    does not have, or a release the results' own selection does not name."""
    fam = FAMILIES.get(row.family)
    if fam is None:
        return f"family {row.family!r} is not one this installation measures ({', '.join(FAMILIES)})"
    if row.probe not in (*fam.probes, *fam.phases):
        return f"probe {row.probe!r} is not one of {row.family}'s ({', '.join(fam.probes)})"
    selected = releases.get(row.family, {})
    if row.sdk_version not in selected.get("sdk", {}):
        return f"{fam.sdk_package} {row.sdk_version} is not among the releases these results selected"
    other_fixed = row.cli_version == NO_CLI or (fam.standin is not None and row.cli_version == fam.standin)
    if not other_fixed and row.cli_version not in selected.get("cli", {}):
        return f"{fam.cli_package} {row.cli_version} is not among the releases these results selected"
    return None


def cmd_fold(args: argparse.Namespace, console: Console) -> int:
    """Fold local measurements into the committed history, as a whole; the diff is for a reviewer."""
    results = Path(args.results)
    data = data_of(args, create=True) or Path("data")
    if not (results / "rows.jsonl").exists():
        raise UserError(f"no results in {results} to fold; run `compat-matrix run` first or pass --results DIR")
    with holding(results, wait=args.wait):
        report = Dataset(data, type_row).fold(results, accept=_accept, wait=args.wait)
    for note in report.notes:
        console.print(f"note: {note}", highlight=False)
    moved = report.moved
    console.print(f"folded {results}/ into {data}/: {len(report.added)} cells added, {len(report.replaced)} "
                  f"measured again ({len(moved)} changed outcome), {report.unchanged} unchanged, "
                  f"{len(report.skipped)} infra errors left out (not measurements); {len(report.files)} files "
                  "written", highlight=False)
    for was, now in moved:
        console.print(f"  {now.family} {now.probe} {now.mutation} sdk {now.sdk_version} × {now.cli_version}: "
                      f"{was.outcome} -> {now.outcome}", highlight=False)
    if report.files:
        console.print(f"review with `git diff --stat {data}` and commit what you keep", highlight=False)
    return 0


def _arguments(f: argparse.ArgumentParser) -> None:
    f.add_argument("--results", default="results", help="the local results to fold (default: results)")
    add_data_argument(f)
    f.add_argument("--wait", action="store_true", help="wait for a run that holds either directory")


COMMAND = Command("fold", "fold local results into the committed history (data/)", _arguments, cmd_fold)
