"""Every exported column has the type the Data page documents, in JSON and in CSV."""

from __future__ import annotations

import csv
import io
import json
import re
from typing import Any

import pandas as pd
import pytest

from matrix.answers.report import records, report_columns, to_csv, to_json
from matrix.families.registry import cells_frame, type_row
from matrix.model import Row
from tests.conftest import ROOT

DATA_PAGE = ROOT / "docs" / "data.md"


def documented() -> dict[str, str]:
    """key -> type, from the Data page's table."""
    types: dict[str, str] = {}
    for line in DATA_PAGE.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`"):
            for key in re.findall(r"`([a-z_]+)`", cells[0]):
                types[key] = cells[1]
    return types


def rows() -> pd.DataFrame:
    base = dict(family="copilot-python", probe="handshake", harness_version="4",
                measured_at="2026-11-30T00:00:00+00:00")
    made = [
        Row(sdk_version="1.0.4", cli_version="1.0.60", outcome="compatible", protocol=3, seconds=1.5,
            start_seconds=0.5, calls_seconds=0.1, stop_seconds=0.2, node_runtime="node20",
            exit_after_stop_seconds=0.31, **base),
        Row(sdk_version="1.0.0", cli_version="1.0.70", outcome="degraded", protocol=3, seconds=6.5,
            error_type="LeftRunning", error_message="left copilot running after stop() in 2 of 5 stops",
            leaked=["copilot"], stops=[0.05, None, 0.06, None, 0.05],
            repeats=["compatible", "degraded"] * 2 + ["compatible"], flaky=True,
            leftovers_killed=["copilot --headless --stdio"], **base),
        Row(sdk_version="0.1.10", cli_version="1.0.60", outcome="refused", seconds=3.0, error_type="RuntimeError",
            error_message="SDK expects version 1, but server reports version 3", message_names_versions=True,
            message_actionable=False, repeats=["refused", "refused"], **base),
    ]
    return cells_frame([type_row(r) for r in made])


_CHECKS: dict[str, Any] = {
    "string": lambda v: isinstance(v, str),
    "string or null": lambda v: v is None or isinstance(v, str),
    "integer or null": lambda v: v is None or (isinstance(v, int) and not isinstance(v, bool)),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "number or null": lambda v: v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)),
    "bool": lambda v: isinstance(v, bool),
    "bool or null": lambda v: v is None or isinstance(v, bool),
    "list of strings": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
    "list of strings or null": lambda v: v is None or (isinstance(v, list) and all(isinstance(x, str) for x in v)),
    "list of numbers or nulls": lambda v: isinstance(v, list) and all(
        x is None or (isinstance(x, (int, float)) and not isinstance(x, bool)) for x in v),
}
_CSV: dict[str, re.Pattern[str]] = {
    "integer or null": re.compile(r"^(-?\d+)?$"),
    "bool": re.compile(r"^(True|False)$"),
    "bool or null": re.compile(r"^(True|False)?$"),
    "number": re.compile(r"^-?\d+(\.\d+)?$"),
    "number or null": re.compile(r"^(-?\d+(\.\d+)?)?$"),
}


def test_the_data_page_documents_every_exported_column_with_a_known_type() -> None:
    types = documented()
    assert set(types) == set(report_columns().names)
    assert set(types.values()) <= set(_CHECKS), set(types.values()) - set(_CHECKS)


@pytest.mark.parametrize("column", report_columns().names)
def test_json_values_have_the_documented_type(column: str) -> None:
    check = _CHECKS[documented()[column]]
    for record in json.loads(to_json(rows())):
        assert check(record[column]), (column, record[column])


@pytest.mark.parametrize("column", report_columns().names)
def test_csv_values_have_the_documented_type(column: str) -> None:
    kind = documented()[column]
    for record in csv.DictReader(io.StringIO(to_csv(rows()))):
        if kind.startswith("list of "):
            assert _CHECKS[kind](json.loads(record[column])), (column, record[column])
        elif kind in _CSV:
            assert _CSV[kind].match(record[column]), (column, record[column])


def test_the_protocol_is_a_whole_number_not_a_float() -> None:
    assert [r["protocol"] for r in records(rows())] == [None, 3, 3]
    assert [r["protocol"] for r in csv.DictReader(io.StringIO(to_csv(rows())))] == ["", "3", "3"]


def test_the_terminal_report_cuts_no_check_name_or_outcome(capsys: pytest.CaptureFixture[str]) -> None:
    """Cosmo's checks have long names and long outcomes ("not-applicable"): each column is as
    wide as they are, on an 80-column terminal too."""
    from rich.console import Console

    from matrix.answers.report import print_report
    from tests.conftest import make_row

    checks = [("set.user-speech-timeout.action.type", "not-applicable"), ("enum.error-code", "downgraded"),
              *((f"set.frame-{n}.a-long-field-name", "not-applicable") for n in range(12))]
    rows = [make_row(sdk, "stand-in-1", outcome, family="cosmo-python", probe="tolerance", mutation=check)
            for sdk in ("0.5.1", "0.6.1") for check, outcome in checks]
    console = Console(width=80, record=True, force_terminal=False)
    print_report(cells_frame(rows), console)
    text = console.export_text() + capsys.readouterr().out  # a table wider than the terminal goes to stdout
    assert "…" not in text
    assert "not-applicable" in text and "user-speech-timeout.action.type" in text
    assert all(f"frame-{n}.a-long-field-name" in text for n in range(12))


def test_the_terminal_matrix_has_a_word_for_every_outcome() -> None:
    """A handshake matrix can hold any outcome (a Node SDK with no client to start is
    not-applicable): none may end the report with a traceback."""
    from rich.console import Console

    from matrix.answers.report import matrix_tables
    from matrix.model import Outcome
    from tests.conftest import make_row

    rows = [make_row(f"1.0.{i}", "1.0.60", o.value, family="copilot-node") for i, o in enumerate(Outcome)]
    console = Console(width=400, record=True)
    for table in matrix_tables(cells_frame(rows)):
        console.print(table)
    assert "n/a" in console.export_text()


def test_a_run_ends_with_the_matrix_of_the_cells_it_measured_alone() -> None:
    """Not the family's whole history again (that is `compat-matrix report`)."""
    from rich.console import Console

    from matrix.commands.run import RichReporter
    from tests.conftest import make_row

    new = [make_row(sdk, "0.0.402", "refused") for sdk in ("1.0.1", "1.0.2")]
    console = Console(width=200, record=True, force_terminal=False)
    RichReporter(console, console).report(new)
    text = console.export_text()
    assert "0.0.402" in text and "1.0.1" in text and "1.0.2" in text and "0.0.401" not in text
    RichReporter(console, console).report([])
    assert console.export_text() == ""  # nothing measured: no empty tables
