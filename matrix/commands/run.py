"""`compat-matrix run`: arguments to a ``RunRequest``, the run's steps, and what a person
sees of them (a progress bar per phase, a line per cell, the matrix at the end)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from matrix.answers.report import print_report
from matrix.commands.common import data_of
from matrix.errors import UserError
from matrix.model import OUTCOME_INFO, Outcome, Row
from matrix.pipeline.candidates import candidate
from matrix.pipeline.config import Plan
from matrix.pipeline.shard import parse_shard
from matrix.pipeline.workflow import RunRequest, execute
from matrix.store.dataset import Sources

__all__ = ["cmd_run"]


class RichReporter:
    """The run on a terminal: a progress bar per phase, one line per measured cell."""

    def __init__(self, console: Console, err: Console) -> None:
        self.console = console
        self.err = err
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), console=console, transient=False)
        self.task: TaskID | None = None

    def warn(self, text: str) -> None:
        self.err.print(f"[yellow]warning:[/] {text}", highlight=False)

    def info(self, text: str) -> None:
        self.console.print(text, highlight=False)

    def phase(self, name: str, todo: int) -> None:
        self.task = self.progress.add_task(name, total=todo)

    def row(self, row: Row) -> None:
        colour = OUTCOME_INFO[Outcome(row.outcome)][0]
        first = (row.error_message or "").strip().splitlines()[:1]
        what = f" {row.mutation:<27}" if row.mutation else ""
        if row.flaky:
            what += f" [flaky: {' / '.join(row.repeats)}]"
        self.progress.console.print(
            f"  sdk {row.sdk_version:>8} × cli {row.cli_version:>8}{what}  "
            f"[{colour}]{row.outcome:<14}[/] {row.seconds:6.1f}s  {(first[0] if first else '')[:90]}",
            soft_wrap=True, highlight=False)
        if self.task is not None:
            self.progress.advance(self.task)

    def report(self, sources: Sources, families: list[str]) -> None:
        frame, _ = sources.frame()
        print_report(frame[frame["family"].isin(families)], self.console)


def cmd_run(args: argparse.Namespace, console: Console, err: Console, load: Callable[[], Plan]) -> int:
    shard = parse_shard(args.shard) if args.shard else None  # bad input fails before anything is touched
    plan = load()
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
    ui = RichReporter(console, err)
    with ui.progress:
        return execute(request, ui)
