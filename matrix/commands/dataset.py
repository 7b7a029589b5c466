"""`compat-matrix fold`, `changes` and `verify`: growing the committed history, saying what a
fold changed, and checking it."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from rich.console import Console

from matrix.commands.common import load, sources_of
from matrix.errors import UserError
from matrix.execute import proc
from matrix.execute.cache import cache_root
from matrix.execute.lock import holding
from matrix.model import Cell
from matrix.pipeline.runner import Runner
from matrix.pipeline.workflow import EXIT_INFRA
from matrix.store.dataset import Dataset
from matrix.store.results import Store

__all__ = ["cmd_changes", "cmd_fold", "cmd_verify"]


def cmd_fold(args: argparse.Namespace, console: Console) -> int:
    """Fold local measurements into the committed history; the diff is for a reviewer."""
    results, data = Path(args.results), Path(args.data)
    if not (results / "rows.jsonl").exists():
        raise UserError(f"no results in {results} to fold; run `compat-matrix run` first or pass --results DIR")
    with holding(results, wait=args.wait), holding(data, wait=args.wait):
        report = Dataset(data).fold(results)
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


def cmd_changes(args: argparse.Namespace, console: Console) -> int:
    """What a fold changed (the newest by default), for a reviewer or a pull request's body."""
    from matrix.answers import changes
    from matrix.store.results import frame_of

    data = Dataset(Path(args.data))
    if not data.exists():
        raise UserError(f"no dataset in {args.data}; pass --data DIR (the committed history, e.g. data)")
    entries = data.changes()
    if not entries:
        console.print(f"{args.data}: no fold recorded yet (`compat-matrix fold` records one)")
        return 0
    if not 1 <= args.entry <= len(entries):
        raise UserError(f"--entry {args.entry}: {args.data} has {len(entries)} fold(s); pass 1 (the newest) to "
                        f"{len(entries)}")
    entry = entries[args.entry - 1]
    frame = frame_of(data.read()[0])
    if args.format == "title":
        print(changes.headline(changes.notes_of(frame, entry), entry))
    else:
        render = {"markdown": changes.render_markdown, "text": changes.render_text, "json": changes.to_json}
        print(render[args.format](frame, entry), end="" if args.format == "text" else "\n")
    return 0


def cmd_verify(args: argparse.Namespace, console: Console) -> int:
    """Re-measure a stratified random sample of stored cells; exit 1 on any disagreement."""
    from matrix.answers.verify import Check, agreement, sample

    plan = load(args)
    sources = sources_of(args)
    rows, _ = sources.rows()
    if args.family:
        rows = [r for r in rows if r.family in args.family]
    chosen = sample(rows, args.sample, args.seed)
    if not chosen:
        raise UserError(f"no stored verdicts to verify in {sources.data or sources.results}")
    console.print(f"verifying {len(chosen)} of {len(rows)} stored cells (seed {args.seed}), stratified by family "
                  "and outcome")
    with tempfile.TemporaryDirectory(prefix="compat-matrix-verify-") as tmp:
        runner = Runner(plan, Store(Path(tmp)), cache_root(), proc.Reaper())
        cells = [Cell(r.family, r.sdk_version, r.cli_version, r.probe, r.mutation) for r in chosen]
        measured = {r.key(): r for r in runner.run(cells, args.jobs or plan.run.jobs)}
    checks = [Check(r, measured.get(r.key())) for r in chosen]
    for c in sorted(checks, key=lambda c: (c.verdict != "disagree", c.stored.key())):
        r = c.stored
        now = c.now.outcome if c.now else "not measured"
        console.print(f"  {c.verdict:<9} {r.family} {r.probe} {r.mutation} sdk {r.sdk_version} × {r.cli_version}: "
                      f"stored {r.outcome}, now {now}", highlight=False, soft_wrap=True)
        if c.verdict == "disagree" and c.now is not None:
            for label, row in (("stored", r), ("now", c.now)):
                console.print(f"      {label:<6} {row.measured_at} harness {row.harness_version}: "
                              f"{(row.error_message or '').strip()[:300]}", highlight=False, soft_wrap=True)
    agree, disagree, unknown = agreement(checks)
    judged = agree + disagree
    share = f"{100 * agree / judged:.1f} %" if judged else "n/a"
    console.print(f"agreement: {agree} of {judged} ({share}); {disagree} disagree; {unknown} could not be "
                  "re-measured (infrastructure or harness errors: not counted)")
    return 1 if disagree else (EXIT_INFRA if unknown else 0)
