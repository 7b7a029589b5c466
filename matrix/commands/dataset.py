"""`compat-matrix fold`, `changes` and `verify`: growing the committed history, saying what a
fold changed, and checking it."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from rich.console import Console

from matrix.commands.common import data_of, load, sources_of
from matrix.errors import UserError
from matrix.execute import proc
from matrix.execute.cache import cache_root
from matrix.execute.lock import holding
from matrix.families.registry import FAMILIES
from matrix.model import NO_CLI, Cell, Row
from matrix.pipeline.runner import Runner
from matrix.pipeline.workflow import EXIT_INFRA
from matrix.store.dataset import Dataset
from matrix.store.migrate import migrate
from matrix.store.results import Releases, Store

__all__ = ["cmd_changes", "cmd_check", "cmd_fold", "cmd_migrate", "cmd_verify"]


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
        report = Dataset(data).fold(results, accept=_accept, wait=args.wait)
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


def cmd_changes(args: argparse.Namespace, console: Console) -> int:
    """What a fold changed (the newest by default), for a reviewer or a pull request's body."""
    from matrix.answers import changes
    from matrix.store.results import frame_of

    where = data_of(args)
    if where is None:
        raise UserError("no dataset here; pass --data DIR (the committed history, e.g. data)")
    data = Dataset(where)
    entries = data.changes()
    if not entries:
        console.print(f"{where}: no fold recorded yet (`compat-matrix fold` records one)")
        return 0
    if not 1 <= args.entry <= len(entries):
        raise UserError(f"--entry {args.entry}: {where} has {len(entries)} fold(s); pass 1 (the newest) to "
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


def cmd_check(args: argparse.Namespace, console: Console) -> int:
    """Every rule the dataset breaks, one line each (exit 2 when it breaks any)."""
    where = data_of(args)
    if where is None:
        raise UserError("no dataset here; pass --data DIR (the committed history, e.g. data)")
    snap, violations = Dataset(where).verify()
    for v in violations:
        console.print(str(v), highlight=False, soft_wrap=True, markup=False)
    files = len(snap.manifest.files) if snap.manifest else 0
    console.print(f"{where}: {files} files, {len(snap.rows)} rows, {len(snap.entries)} changelog entries: "
                  + (f"{len(violations)} violations" if violations else "every rule kept"), highlight=False)
    return 2 if violations else 0


def cmd_migrate(args: argparse.Namespace, console: Console) -> int:
    """Bring a dataset written by an older compat-matrix to the schema this one reads, as a whole."""
    where = data_of(args)
    if where is None:
        raise UserError("no dataset here; pass --data DIR (the committed history, e.g. data)")
    console.print(migrate(where), highlight=False)
    return 0
