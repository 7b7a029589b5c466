"""`compat-matrix verify`: a stratified random sample of stored cells measured again; exit 1
on any disagreement, with both rows."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from rich.console import Console

from matrix.answers.verify import Check, agreement, sample
from matrix.commands.command import Command
from matrix.commands.common import add_config_arguments, add_data_argument, load, positive, sources_of
from matrix.errors import EXIT_INFRA, UserError
from matrix.execute import proc
from matrix.execute.cache import cache_root
from matrix.families.registry import FAMILIES
from matrix.model import Cell
from matrix.pipeline.runner import Runner
from matrix.store.results import Store

__all__ = ["COMMAND"]


def cmd_verify(args: argparse.Namespace, console: Console) -> int:
    """Re-measure a stratified random sample of stored cells; exit 1 on any disagreement."""
    known = {p for f in FAMILIES.values() for p in f.probes}
    not_probes = sorted(set(args.probe) - known)
    if not_probes:
        raise UserError(f"--probe {', '.join(not_probes)}: no family has such a probe "
                        f"(probes: {', '.join(sorted(known))})")
    plan = load(args)
    sources = sources_of(args)
    rows, _ = sources.rows()
    if args.family:
        rows = [r for r in rows if r.family in args.family]
    if args.probe:
        rows = [r for r in rows if r.probe in args.probe]
    if args.cli:
        rows = [r for r in rows if r.cli_version in args.cli]
    if args.batched:
        rows = [r for r in rows if r.detail.get("batch")]
    chosen = sample(rows, args.sample, args.seed)
    if not chosen:
        asked = " ".join([*(f"--family {f}" for f in args.family), *(f"--probe {p}" for p in args.probe),
                          *(f"--cli {c}" for c in args.cli), *(["--batched"] if args.batched else [])])
        raise UserError(f"no stored verdicts to verify in {sources.data or sources.results}"
                        + (f" for {asked}: widen the selection" if asked else ""))
    console.print(f"verifying {len(chosen)} of {len(rows)} stored cells (seed {args.seed}), stratified by family "
                  "and outcome")
    with tempfile.TemporaryDirectory(prefix="compat-matrix-verify-") as tmp:
        runner = Runner(plan, Store(Path(tmp)), cache_root(), proc.Reaper())
        # Each alone (no batch): a verdict a batch gave is checked against what an isolated run gives.
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


def _arguments(v: argparse.ArgumentParser) -> None:
    add_config_arguments(v)
    v.add_argument("--sample", type=positive, required=True, metavar="N", help="how many cells")
    v.add_argument("--seed", type=int, default=0, metavar="S", help="the random draw (default: 0)")
    v.add_argument("--results", default="results", help="local results (default: results)")
    add_data_argument(v)
    v.add_argument("--probe", action="append", default=[], help="only cells of this probe (repeatable)")
    v.add_argument("--cli", action="append", default=[], metavar="V",
                   help="only cells with this CLI release (repeatable)")
    v.add_argument("--batched", action="store_true",
                   help="only verdicts a batch gave (tolerance rules measured in one relay), measured again alone")
    v.add_argument("--jobs", type=positive, default=None, help="cells measured at once")


COMMAND = Command("verify", "re-measure a random sample of stored cells; exit 1 on any disagreement", _arguments,
                  cmd_verify)
