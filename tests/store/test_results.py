from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from matrix.model import Row
from matrix.store.results import ROWS_FILE, Store, frame_of, load_frame
from tests.conftest import make_row


def row(sdk: str = "1.0.0", cli: str = "1.0.102", outcome: str = "compatible", **kw: Any) -> Row:
    return make_row(sdk, cli, outcome, harness_version="1", **kw)


def test_append_and_read_roundtrip(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.append(row(protocol=3, detail={"x": [1, 2]}))
    store.append(row(sdk="0.1.10", outcome="refused", error_message="SDK expects version 1"))
    rows, warnings = store.read()
    assert warnings == []
    assert {r.sdk_version for r in rows} == {"1.0.0", "0.1.10"}
    assert next(r for r in rows if r.sdk_version == "1.0.0").detail == {"x": [1, 2]}


def test_newest_row_per_cell_wins(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.append(row(outcome="infra-error"))
    store.append(row(outcome="compatible"))
    rows, _ = store.read()
    assert [r.outcome for r in rows] == ["compatible"]


def test_truncated_last_line_is_reported_and_valid_rows_kept(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.append(row(sdk="0.1.10"))
    store.append(row(sdk="0.1.11"))
    path = tmp_path / ROWS_FILE
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 20])  # a kill in the middle of the second write
    rows, warnings = store.read()
    assert [r.sdk_version for r in rows] == ["0.1.10"]
    assert len(warnings) == 1
    assert f"{path}:2" in warnings[0] and "truncated" in warnings[0]


def test_the_next_writer_cuts_a_torn_last_line_back_and_says_so(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.append(row(sdk="0.1.10"))
    path = tmp_path / ROWS_FILE
    whole = path.read_bytes()
    with open(path, "a") as f:
        f.write('{"family": "copilot-py')  # torn write, no newline
    store.append(row(sdk="0.1.12"))
    rows, warnings = store.read()
    assert sorted(r.sdk_version for r in rows) == ["0.1.10", "0.1.12"]
    assert warnings == [] and path.read_bytes().startswith(whole + b"{")  # the torn bytes are gone
    assert len(store.notes) == 1 and "never finished" in store.notes[0] and "(22 bytes)" in store.notes[0]


def test_repair_before_a_run(tmp_path: Path) -> None:
    store = Store(tmp_path)
    assert store.repair() is None  # nothing there yet
    store.append(row(sdk="0.1.10"))
    path = tmp_path / ROWS_FILE
    with open(path, "ab") as f:
        f.write(b'{"family": "co')
    note = Store(tmp_path).repair()
    assert note is not None and str(path) in note
    assert path.read_bytes().endswith(b"\n") and Store(tmp_path).repair() is None


def test_corrupt_middle_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / ROWS_FILE
    good = row().to_json()
    path.write_text(good + "\nnot json at all\n" + json.dumps({"unexpected": 1}) + "\n")
    rows, warnings = Store(tmp_path).read()
    assert len(rows) == 1
    assert any(f"{path}:2" in w for w in warnings)
    assert any(f"{path}:3" in w and "unexpected" in w for w in warnings)


def test_a_frame_has_every_core_and_declared_payload_column_even_when_empty(tmp_path: Path) -> None:
    frame, _ = load_frame(tmp_path)
    assert frame.empty and "outcome" in frame.columns and "per_sdk" in frame.columns
    assert "protocol" not in frame.columns and "protocol" in frame_of([], ["protocol"]).columns
    Store(tmp_path).append(row(protocol=3))
    frame, _ = load_frame(tmp_path)
    assert len(frame) == 1 and frame.iloc[0]["protocol"] == 3  # the payload, a column like the core's
