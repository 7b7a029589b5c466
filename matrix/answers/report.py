"""Terminal, JSON and CSV views of the results DataFrame."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
from rich.console import Console
from rich.table import Table

from matrix.model import OUTCOME_INFO, Outcome
from matrix.versions import sort_key

__all__ = ["REPORT_COLUMNS", "matrix_tables", "records", "summary_table"]

REPORT_COLUMNS = [
    "family", "sdk_version", "cli_version", "probe", "mutation", "outcome", "protocol",
    "observed_cli_version", "error_type", "error_message", "message_names_versions",
    "message_actionable", "seconds", "start_seconds", "calls_seconds", "stop_seconds",
    "node_runtime", "wrong_cli", "leftovers_killed", "exit_after_stop_seconds", "leaked", "stops", "flaky", "repeats",
    "harness_version", "measured_at",
]
# pandas holds these as floats beside missing values; they are whole numbers (missing: none).
INTEGER_COLUMNS = frozenset({"protocol"})
LIST_COLUMNS = ("leftovers_killed", "leaked", "stops", "repeats")
_SHORT = {
    Outcome.COMPATIBLE: "ok", Outcome.DEGRADED: "deg", Outcome.REFUSED: "REF",
    Outcome.LAUNCH_FAILED: "LAUNCH", Outcome.HANG: "HANG", Outcome.CRASHED: "CRASH",
    Outcome.UNINSTALLABLE: "gone", Outcome.INFRA_ERROR: "infra", Outcome.HARNESS_ERROR: "harn",
    Outcome.NOT_APPLICABLE: "n/a",
}


def _clean(value: Any, integer: bool = False) -> Any:
    if isinstance(value, float) and pd.isna(value):
        return None
    if integer and value is not None:
        return int(value)
    return value


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The JSON report: a list of objects with the documented keys, in a stable order."""
    ordered = frame.assign(_s=frame["sdk_version"].map(sort_key), _c=frame["cli_version"].map(sort_key))
    ordered = ordered.sort_values(["family", "probe", "_s", "_c", "mutation"])
    return [{k: _clean(row[k], k in INTEGER_COLUMNS) for k in REPORT_COLUMNS} for _, row in ordered.iterrows()]


def to_json(frame: pd.DataFrame) -> str:
    return json.dumps(records(frame), indent=1, default=str)


def to_csv(frame: pd.DataFrame) -> str:
    table = pd.DataFrame(records(frame), columns=REPORT_COLUMNS)
    for col in INTEGER_COLUMNS:
        table[col] = table[col].astype("Int64")
    for col in LIST_COLUMNS:  # JSON arrays, as in the site's rows.csv: any reader can parse them
        table[col] = table[col].map(json.dumps)
    return table.to_csv(index=False)


def _cell(outcome: str, protocol: Any) -> str:
    o = Outcome(outcome)
    colour = OUTCOME_INFO[o][0]
    text = _SHORT.get(o, o.value) + (f"{int(protocol)}" if protocol is not None and not pd.isna(protocol) else "")
    return f"[{colour}]{text}[/]"


def matrix_tables(frame: pd.DataFrame, probe: str = "handshake") -> list[Table]:
    """One table per family. The longer side becomes the rows so the table fits a terminal."""
    tables = []
    sub = frame[frame["probe"] == probe]
    for family, part in sub.groupby("family"):
        clis = sorted(part["cli_version"].unique(), key=sort_key)
        sdks = sorted(part["sdk_version"].unique(), key=sort_key)
        cells = {(r.sdk_version, r.cli_version): _cell(str(r.outcome), r.protocol) for r in part.itertuples()}
        by_cli = len(clis) > len(sdks)
        rows, cols = (clis, sdks) if by_cli else (sdks, clis)
        corner = "CLI \\ SDK" if by_cli else "SDK \\ CLI"
        table = Table(title=f"{family} · {probe}", show_lines=False, pad_edge=False)
        table.add_column(corner, style="bold", no_wrap=True)
        for c in cols:
            table.add_column(c, justify="center", no_wrap=True)
        for r in rows:
            table.add_row(r, *[cells.get((c, r) if by_cli else (r, c), "·") for c in cols])
        tables.append(table)
    return tables


def tolerance_tables(frame: pd.DataFrame) -> list[Table]:
    """Rows SDK versions (with the CLI they were probed against), columns rules."""
    tables = []
    sub = frame[frame["probe"] == "tolerance"]
    for family, part in sub.groupby("family"):
        rules = list(dict.fromkeys(part["mutation"]))
        table = Table(title=f"{family} · tolerance", pad_edge=False)
        table.add_column("SDK (CLI)", style="bold", no_wrap=True)
        for rule in rules:
            heading = rule.replace(".", ".\n", 1)
            said = part[part["mutation"] == rule]["outcome"].astype(str)
            # Wide enough for the heading's longest line and the longest outcome: never cut.
            width = max([len(line) for line in heading.splitlines()] + [len(o) for o in said])
            table.add_column(heading, justify="center", no_wrap=True, min_width=width)
        for sdk in sorted(part["sdk_version"].unique(), key=sort_key):
            rows = part[part["sdk_version"] == sdk]
            got = {str(r.mutation): str(r.outcome) for r in rows.itertuples()}
            cells = [f"[{OUTCOME_INFO[Outcome(got[r])][0]}]{got[r]}[/]" if r in got else "·" for r in rules]
            table.add_row(f"{sdk} ({rows['cli_version'].iloc[0]})", *cells)
        tables.append(table)
    return tables


def summary_table(frame: pd.DataFrame) -> Table:
    table = Table(title="Outcomes")
    table.add_column("outcome")
    table.add_column("cells", justify="right")
    table.add_column("meaning")
    counts = frame["outcome"].value_counts()
    for o, (colour, meaning) in OUTCOME_INFO.items():
        if counts.get(o.value, 0):
            table.add_row(f"[{colour}]{o.value}[/]", str(counts[o.value]), meaning)
    return table


def _print_wide(table: Table, console: Console, first: int, each: int) -> None:
    """A matrix cut to the terminal's width hides cells; print it at the width it needs."""
    need = first + sum(max(each, (c.min_width or 0) + 3) for c in table.columns[1:]) + 2
    wide = console if console.width >= need else Console(
        width=need, force_terminal=console.is_terminal, no_color=console.no_color)
    wide.print(table)


def print_report(frame: pd.DataFrame, console: Console) -> None:
    for table in matrix_tables(frame):
        _print_wide(table, console, 12, 9)
    for table in tolerance_tables(frame):
        _print_wide(table, console, 20, 16)
    console.print(summary_table(frame))
