"""`compat-matrix run`: arguments to a ``RunRequest``, the run's steps, and what a person
sees of them (a progress bar per phase, a line per cell, the matrix at the end)."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from matrix.answers.report import print_report
from matrix.commands.command import Command
from matrix.commands.common import add_config_arguments, add_data_argument, data_of, err_console, load, positive
from matrix.errors import UserError
from matrix.families.registry import cells_frame
from matrix.model import OUTCOME_INFO, Outcome, Row
from matrix.pipeline.candidates import candidate
from matrix.pipeline.shard import parse_shard
from matrix.pipeline.workflow import RunRequest, execute

__all__ = ["COMMAND", "RichReporter"]


class RichReporter:
    """The run on a terminal: a progress bar per phase, one line per measured cell."""

    def __init__(self, console: Console, err: Console) -> None:
        self.console = console
        self.err = err
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), console=console, transient=False)
        self.tasks: dict[str, TaskID] = {}  # a bar per phase, growing as releases reach it
        self.totals: dict[str, int] = {}

    def warn(self, text: str) -> None:
        self.err.print(f"[yellow]warning:[/] {text}", highlight=False)

    def info(self, text: str) -> None:
        self.console.print(text, highlight=False)

    def phase(self, name: str, todo: int) -> None:
        self.totals[name] = self.totals.get(name, 0) + todo
        if name not in self.tasks:
            self.tasks[name] = self.progress.add_task(name, total=todo)
        self.progress.update(self.tasks[name], total=self.totals[name])

    def row(self, row: Row, phase: str) -> None:
        colour = OUTCOME_INFO[Outcome(row.outcome)][0]
        first = (row.error_message or "").strip().splitlines()[:1]
        what = f" {row.mutation:<27}" if row.mutation else ""
        if row.flaky:
            what += f" [flaky: {' / '.join(row.repeats)}]"
        self.progress.console.print(
            f"  sdk {row.sdk_version:>8} × cli {row.cli_version:>8}{what}  "
            f"[{colour}]{row.outcome:<14}[/] {row.seconds:6.1f}s  {(first[0] if first else '')[:90]}",
            soft_wrap=True, highlight=False)
        if phase in self.tasks:
            self.progress.advance(self.tasks[phase])

    def report(self, rows: list[Row]) -> None:
        if rows:
            print_report(cells_frame(rows), self.console)


def cmd_run(args: argparse.Namespace, console: Console) -> int:
    shard = parse_shard(args.shard) if args.shard else None  # bad input fails before anything is touched
    plan = load(args)
    candidates = []
    for side, path in (("sdk", args.sdk_artifact), ("cli", args.cli_artifact)):
        if path:
            if len(args.family) != 1:
                raise UserError(f"--{side}-artifact: name the family it is a build of with one --family")
            candidates.append(candidate(args.family[0], side, Path(path)))
    # A candidate's cells never go where the published history's are.
    results = Path(args.results or ("candidates" if candidates else plan.run.results))
    request = RunRequest(plan=plan, results=results, data=data_of(args),
                         families=args.family, sdk=args.sdk, cli=args.cli, probes=args.probe, jobs=args.jobs,
                         force=args.force, stale=args.stale, repeat=args.repeat, new=args.new, refresh=args.refresh,
                         shard=shard, wait=args.wait, candidates=candidates)
    ui = RichReporter(console, err_console)
    with ui.progress:
        return execute(request, ui)


def _arguments(r: argparse.ArgumentParser) -> None:
    add_config_arguments(r)
    r.add_argument("--sdk", action="append", default=[], metavar="V", help="only this SDK version (repeatable)")
    r.add_argument("--cli", action="append", default=[], metavar="V", help="only this CLI version (repeatable)")
    r.add_argument("--probe", action="append", default=[], help="only this probe kind (repeatable)")
    r.add_argument("--jobs", type=positive, default=None, help="cells measured at once")
    r.add_argument("--results", default=None, help="results directory (default from the config)")
    r.add_argument("--force", action="store_true", help="re-measure cells already measured")
    r.add_argument("--repeat", type=positive, default=1, metavar="N",
                   help="measure every planned cell N times; one whose outcome differs is marked flaky")
    r.add_argument("--new", action="store_true",
                   help="ask the registries now and measure only cells of releases no earlier run selected")
    r.add_argument("--shard", default=None, metavar="i/n",
                   help="measure only shard i of n (whole SDK versions per shard; merge with `merge`)")
    add_data_argument(r, ": its cells are not measured again")
    r.add_argument("--stale", action="store_true",
                   help="also re-measure cells measured by older rules of their probe, and harness errors")
    r.add_argument("--refresh", action="store_true", help="ask the registries for their releases now")
    r.add_argument("--wait", action="store_true", help="wait for a run that holds the results directory")
    r.add_argument("--sdk-artifact", default=None, metavar="FILE",
                   help="measure a candidate SDK build (wheel, sdist, npm tarball, Go module directory, .crate, "
                        ".jar) instead of the SDK selection; its cells go to candidates/ (never the dataset)")
    r.add_argument("--cli-artifact", default=None, metavar="FILE", help="the same for a candidate CLI build")


COMMAND = Command("run", "measure the cells not yet measured", _arguments, cmd_run)
