"""Terminal, JSON and CSV views of the results DataFrame."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd
from rich.console import Console
from rich.table import Table

from matrix.answers.analysis import rows_of
from matrix.families.base import LETTERS, Family
from matrix.families.payload import kind_of, payload_fields
from matrix.families.registry import FAMILIES
from matrix.model import OUTCOME_INFO, Outcome
from matrix.versions import sort_key

__all__ = ["Columns", "check_tables", "matrix_tables", "print_report", "records", "report_columns",
           "summary_table"]

# The core's columns a report shows, around every payload column the families declare.
_HEAD = ["family", "sdk_version", "cli_version", "probe", "mutation", "outcome"]
_TAIL = ["error_type", "error_message", "seconds", "leftovers_killed", "flaky", "repeats", "harness_version",
         "measured_at"]


@dataclass(frozen=True)
class Columns:
    """What a report holds: its columns in order, the whole numbers among them (pandas holds
    them as floats beside missing values), and the columns whose values are lists or mappings
    (JSON in a CSV)."""

    names: list[str]
    integers: frozenset[str]
    nested: frozenset[str]


def report_columns() -> Columns:
    """The core's columns and every payload column a family here declares; a mapping-valued
    payload field (``sdk_declared``) is in rows.csv and rows.parquet, not in the report."""
    fields = payload_fields(FAMILIES.values())
    kinds = {name: kind_of(info) for name, info in fields.items()}
    names = [*_HEAD, *(n for n, k in kinds.items() if k != "nested"), *_TAIL]
    return Columns(names, frozenset(n for n, k in kinds.items() if k == "integer"),
                   frozenset([*(n for n, k in kinds.items() if k in ("list", "nested")), "leftovers_killed",
                              "repeats", "detail"]))


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


def records(frame: pd.DataFrame, columns: Columns | None = None) -> list[dict[str, Any]]:
    """The JSON report: a list of objects with the documented keys, in a stable order (a column
    no row has is null)."""
    cols = columns or report_columns()
    ordered = frame.assign(_s=frame["sdk_version"].map(sort_key), _c=frame["cli_version"].map(sort_key))
    ordered = ordered.sort_values(["family", "probe", "_s", "_c", "mutation"])
    # Column by column: a row at a time (``iterrows``) made a Series of each row and took 5 s.
    values = [ordered[k].astype(object).tolist() if k in ordered.columns else [None] * len(ordered)
              for k in cols.names]
    integer = [k in cols.integers for k in cols.names]
    return [{k: _clean(v, i) for k, v, i in zip(cols.names, row, integer, strict=True)}
            for row in zip(*values, strict=True)]


def to_json(frame: pd.DataFrame) -> str:
    return json.dumps(records(frame), indent=1, default=str)


def to_csv(frame: pd.DataFrame) -> str:
    cols = report_columns()
    table = pd.DataFrame(records(frame, cols), columns=cols.names)
    for col in cols.integers:
        table[col] = table[col].astype("Int64")
    for col in cols.nested & set(cols.names):  # JSON, as in the site's rows.csv: any reader can parse them
        table[col] = table[col].map(json.dumps)
    return table.to_csv(index=False)


def _cell(family: Family, rec: Mapping[Any, Any]) -> str:
    """A cell of a terminal matrix: its outcome, short, and what the family's own matrix says of
    it besides its outcome's letter (``Family.cell_label``: a number, a mark)."""
    o = Outcome(rec["outcome"])
    label = family.cell_label(rec)
    more = "" if label == LETTERS.get(o, "") else label
    return f"[{OUTCOME_INFO[o][0]}]{_SHORT.get(o, o.value)}{more}[/]"


def matrix_tables(frame: pd.DataFrame) -> list[Table]:
    """One table per family, of its pair cells. The longer side becomes the rows so the table
    fits a terminal."""
    tables = []
    rows_all = rows_of(frame)
    for family, part in rows_all.pairs().groupby("family"):
        fam = FAMILIES[str(family)]
        clis = sorted(part["cli_version"].unique(), key=sort_key)
        sdks = sorted(part["sdk_version"].unique(), key=sort_key)
        cells = {(r["sdk_version"], r["cli_version"]): _cell(fam, r) for r in part.to_dict("records")}
        by_cli = len(clis) > len(sdks)
        rows, cols = (clis, sdks) if by_cli else (sdks, clis)
        corner = "CLI \\ SDK" if by_cli else "SDK \\ CLI"
        table = Table(title=f"{family} · {fam.pair_probe}", show_lines=False, pad_edge=False)
        table.add_column(corner, style="bold", no_wrap=True)
        for c in cols:
            table.add_column(c, justify="center", no_wrap=True)
        for r in rows:
            table.add_row(r, *[cells.get((c, r) if by_cli else (r, c), "·") for c in cols])
        tables.append(table)
    return tables


def check_tables(frame: pd.DataFrame) -> list[Table]:
    """One table per family and probe of checks of one SDK release (``per_sdk``): rows SDK
    versions (with the release of the other side they were measured against), columns checks."""
    tables = []
    sub = frame[frame["per_sdk"].astype(bool)]
    for (family, probe), part in sub.groupby(["family", "probe"], sort=True):
        rules = list(dict.fromkeys(part["mutation"]))
        table = Table(title=f"{family} · {probe}", pad_edge=False)
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
    for table in check_tables(frame):
        _print_wide(table, console, 20, 16)
    console.print(summary_table(frame))
