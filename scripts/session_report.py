"""Print what the session cells of a dataset say, per family: cells by outcome, the wall time
they took, which route kept the model call on this machine for each CLI release (and where it
changes along the releases), and the SDK releases that fail on an event type (an event the CLI
sent that never reached the application, or an exception naming one), with the CLI releases.

    .venv/bin/python scripts/session_report.py [--data data] [--results DIR] [--probe session]
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from pathlib import Path

import pandas as pd

from matrix.families.registry import cells_frame
from matrix.present.ranges import ranges
from matrix.store.dataset import Dataset
from matrix.store.results import Store
from matrix.versions import sorted_versions

FAILED = {"hang", "crashed", "lost", "fatal"}
# An event type as the CLIs name them ("session.idle", "assistant.message_delta", "model.x").
EVENT = re.compile(r"\b([a-z_]+\.[a-z_]+(?:\.[a-z_]+)?)\b")


def spans(axis: list[str], good: set[str]) -> str:
    return ", ".join(r.first if r.first == r.last else f"{r.first}-{r.last}" for r in ranges(axis, good))


def routes(cells: pd.DataFrame, axis: list[str]) -> list[str]:
    """Each route the model call took, with the CLI releases that took it (in release order)."""
    by_route: dict[str, set[str]] = defaultdict(set)
    for cli, route in zip(cells["cli_version"], cells["route"], strict=True):
        by_route[str(route) if isinstance(route, str) else "none"].add(cli)
    return [f"{route}: {spans(axis, clis)}" for route, clis in sorted(by_route.items())]


def event_failures(cells: pd.DataFrame) -> dict[tuple[str, str], set[str]]:
    """(SDK release, event type) -> the CLI releases where that event failed it: it never reached
    the application (``events``: "lost"), or the SDK raised naming it."""
    out: dict[tuple[str, str], set[str]] = defaultdict(set)
    for rec in cells.to_dict("records"):
        events = rec.get("events") if isinstance(rec.get("events"), dict) else {}
        for kind, state in events.items():
            if state == "lost":
                out[(rec["sdk_version"], kind)].add(rec["cli_version"])
        if rec["outcome"] in ("crashed", "fatal") and isinstance(rec.get("error_message"), str):
            for kind in set(EVENT.findall(rec["error_message"])) & set(events):
                out[(rec["sdk_version"], kind)].add(rec["cli_version"])
    return out


def report(frame: pd.DataFrame, probe: str) -> str:
    lines: list[str] = []
    cells = frame[frame["probe"] == probe]
    if cells.empty:
        return f"no {probe} cells"
    for family, mine in cells.groupby("family", sort=True):
        measured = mine[~mine["outcome"].isin(["infra-error", "harness-error"])]
        counts = ", ".join(f"{o} {n}" for o, n in measured["outcome"].value_counts().sort_index().items())
        lines.append(f"{family}: {len(measured)} {probe} cells ({counts}); "
                     f"{len(sorted_versions(measured['sdk_version']))} SDK releases, "
                     f"{len(sorted_versions(measured['cli_version']))} CLI releases; "
                     f"{measured['seconds'].sum():.0f} s of cell time, median {measured['seconds'].median():.1f} s")
        # Every CLI release the family has a cell of: one without a session verdict breaks a span.
        axis = sorted_versions(frame.loc[frame["family"] == family, "cli_version"].dropna())
        if "route" in mine.columns:
            lines += [f"  route {r}" for r in routes(measured, axis)]
        for (sdk, kind), clis in sorted(event_failures(measured).items()):
            lines.append(f"  sdk {sdk} fails on {kind} with CLI {spans(axis, clis)}")
        failing = measured[measured["outcome"].isin(FAILED)]
        for (sdk, outcome), part in failing.groupby(["sdk_version", "outcome"], sort=True):
            first = str(part["error_message"].dropna().iloc[0]).splitlines()[0][:160] \
                if part["error_message"].notna().any() else ""
            lines.append(f"  sdk {sdk} {outcome} with CLI {spans(axis, set(part['cli_version']))}: {first}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="data", help="the dataset ('' for none)")
    parser.add_argument("--results", default=None, help="local results to read as well (they win over the dataset)")
    parser.add_argument("--probe", default="session")
    args = parser.parse_args()
    rows = list(Dataset(Path(args.data)).read()[0]) if args.data else []
    if args.results:
        local = Store(Path(args.results)).read()[0]
        mine = {r.key() for r in local}
        rows = [r for r in rows if r.key() not in mine] + local
    print(report(cells_frame(rows), args.probe))


if __name__ == "__main__":
    main()
