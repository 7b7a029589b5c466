"""Proof and benchmark: tolerance rules measured in batches give the verdicts of isolated runs.

Every stored tolerance rule cell of a family (the dataset's, each measured alone) is measured
again with every rule of its kind in one batch, the way a release no one measured before is
planned (no rule left out for having failed before), and each verdict is compared with the
stored one. Prints, per family: cells compared, agreed, disagreed (each named), how many
verdicts the batches gave and how many were measured again alone, and the CLI starts the
batches took against the one per rule of isolated runs. Exit 1 on any disagreement.

    .venv/bin/python scripts/batch_proof.py [--family copilot-python] [--sdk V ...]
        [--kind event|history|result] [--jobs 4] [--results DIR]

``--results``: keep the batched rows there (default: a temporary directory). ``--alone-too``:
measure the same cells each alone as well, in the same sitting, and print both wall times. A disagreement
names both rows; that cell's stored verdict is then measured again alone by `compat-matrix
verify --batched` to tell a race from a batch that changes a verdict.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from matrix.execute import proc  # noqa: E402
from matrix.execute.cache import cache_root  # noqa: E402
from matrix.families.copilot.shim import CONTROL_DESCRIPTIONS, control_of  # noqa: E402
from matrix.families.copilot.tolerance import batch_of  # noqa: E402
from matrix.families.registry import FAMILIES  # noqa: E402
from matrix.model import NO_CLI, Cell, Row  # noqa: E402
from matrix.pipeline.config import Plan  # noqa: E402
from matrix.pipeline.runner import Runner  # noqa: E402
from matrix.store.dataset import Dataset  # noqa: E402
from matrix.store.results import Store  # noqa: E402


def stored_rules(family: str, sdks: list[str], kind: str | None) -> list[Row]:
    rows, _ = Dataset(ROOT / "data").read()
    return sorted((r for r in rows if r.family == family and r.probe == "tolerance" and r.cli_version != NO_CLI
                   and r.mutation not in CONTROL_DESCRIPTIONS and (not sdks or r.sdk_version in sdks)
                   and (kind is None or control_of(r.mutation) == f"{kind}.control")), key=Row.key)


Key = tuple[str, str, str, str, str]


def measure(family: str, cells: list[Cell], jobs: int, results: Path) -> tuple[dict[Key, Row], float]:
    plan = Plan.model_validate({"families": {family: {}}})
    runner = Runner(plan, Store(results), cache_root(), proc.Reaper())
    t0 = time.monotonic()
    rows = {r.key(): r for r in runner.run(cells, jobs)}
    return rows, time.monotonic() - t0


def prove(family: str, sdks: list[str], kind: str | None, jobs: int, results: Path, alone_too: bool) -> bool | None:
    """True: every verdict agreed; False: some disagreed; None: nothing stored to compare."""
    stored = stored_rules(family, sdks, kind)
    if not stored:
        print(f"{family}: no stored tolerance rule cells{' for sdk ' + ', '.join(sdks) if sdks else ''}: nothing "
              "to compare")
        return None
    cells = [Cell(r.family, r.sdk_version, r.cli_version, "tolerance", r.mutation, together=batch_of(r.mutation))
             for r in stored]
    now, wall = measure(family, cells, jobs, results / "batched")
    batches = {(c.sdk_version, c.cli_version, c.together) for c in cells}
    tally: Counter[str] = Counter()
    disagreed = []
    for old in stored:
        new = now.get(old.key())
        if new is None or new.outcome in ("infra-error", "harness-error"):
            tally["not measured"] += 1
            continue
        tally["from a batch" if new.detail.get("batch") else "measured again alone"] += 1
        if new.outcome == old.outcome:
            tally["agreed"] += 1
        else:
            disagreed.append((old, new))
    alone = tally["measured again alone"]
    print(f"{family}: {len(stored)} stored rule cells of {len({r.sdk_version for r in stored})} SDK releases, "
          f"measured in batches in {wall:.0f} s at {jobs} jobs")
    print(f"  agreed {tally['agreed']}, disagreed {len(disagreed)}, not measured {tally['not measured']} "
          "(infrastructure or harness errors: not compared)")
    print(f"  verdicts from a batch: {tally['from a batch']}; measured again alone (not a clean pass in the batch): "
          f"{alone}")
    starts = len(batches) + alone
    print(f"  CLI starts: {starts} ({len(batches)} batches + {alone} alone) against {len(stored)} isolated "
          f"({starts / len(stored):.2f}x)")
    if alone_too:  # the same cells each alone, in the same sitting: the before of the same machine
        isolated, alone_wall = measure(family, [replace(c, together=()) for c in cells], jobs, results / "alone")
        same = sum(1 for k, r in now.items() if k in isolated and isolated[k].outcome == r.outcome)
        print(f"  the same cells each alone: {alone_wall:.0f} s; batched / alone {wall / alone_wall:.2f}; "
              f"{same} of {len(now)} verdicts the same both ways")
    for old, new in disagreed:
        print(f"  DISAGREES {old.mutation} sdk {old.sdk_version} x {old.cli_version}: stored {old.outcome}, "
              f"batched {new.outcome} ({'from the batch' if new.detail.get('batch') else 'alone'}): "
              f"{(new.error_message or '').strip()[:200]}")
    return not disagreed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    batching = sorted(name for name, fam in FAMILIES.items() if getattr(fam, "batches", False))
    parser.add_argument("--family", action="append", default=[], choices=batching)
    parser.add_argument("--sdk", action="append", default=[], help="only these SDK releases")
    parser.add_argument("--kind", choices=("event", "history", "result"), help="only the rules of this kind")
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--results", type=Path, help="keep the batched rows here")
    parser.add_argument("--alone-too", action="store_true",
                        help="measure the same cells each alone as well, and print both times")
    args = parser.parse_args()
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="batch-proof-") as tmp:
        for family in args.family or batching:
            out = (args.results or Path(tmp)) / family
            outcomes.append(prove(family, args.sdk, args.kind, args.jobs, out, args.alone_too))
    if all(o is None for o in outcomes):
        raise SystemExit("no stored tolerance rule cells in this selection: widen it (--family, --sdk, --kind)")
    sys.exit(1 if False in outcomes else 0)


if __name__ == "__main__":
    main()
