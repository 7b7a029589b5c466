"""The rows a build's pages ask of: slices made once and handed to every page that asks."""

from __future__ import annotations

from matrix.answers.analysis import rows_of
from matrix.families.registry import cells_frame
from tests.conftest import make_row


def test_a_release_gets_its_own_rows_of_a_probe_with_every_column_and_none_of_another() -> None:
    rows = rows_of(cells_frame([
        make_row("1.0.0", "1.0.101"), make_row("1.0.0", "1.0.102", "refused", error_message="old"),
        make_row("1.0.1", "1.0.102"), make_row("1.0.0", "1.0.102", "hang", family="copilot-node"),
    ]))
    mine = rows.of_sdk("copilot-python", "handshake", "1.0.0")
    assert sorted(mine["cli_version"]) == ["1.0.101", "1.0.102"]
    assert set(mine["family"]) == {"copilot-python"} and "error_message" in mine.columns
    assert list(rows.of_sdk("copilot-python", "handshake", "1.0.1")["cli_version"]) == ["1.0.102"]
    none = rows.of_sdk("copilot-python", "session", "1.0.0")
    assert none.empty and list(none.columns) == list(mine.columns)
    assert rows.of_sdk("copilot-python", "handshake", "1.0.0") is mine  # made once, asked again


def test_a_release_gets_every_row_of_every_probe_of_its_family_and_none_of_another_release() -> None:
    rows = rows_of(cells_frame([
        make_row("1.0.0", "1.0.101"), make_row("1.0.0", "1.0.102", "refused", error_message="old"),
        make_row("1.0.1", "1.0.102"), make_row("1.0.0", "1.0.102", "hang", family="copilot-node"),
        make_row("1.0.0", "1.0.102", "compatible", probe="session"),
    ]))
    mine = rows.of_release("copilot-python", "sdk_version", "1.0.0")
    assert sorted(zip(mine["probe"], mine["cli_version"], strict=True)) == [
        ("handshake", "1.0.101"), ("handshake", "1.0.102"), ("session", "1.0.102")]
    assert set(mine["family"]) == {"copilot-python"} and "error_message" in mine.columns
    cli = rows.of_release("copilot-python", "cli_version", "1.0.102")
    assert sorted(zip(cli["probe"], cli["sdk_version"], strict=True)) == [
        ("handshake", "1.0.0"), ("handshake", "1.0.1"), ("session", "1.0.0")]
    none = rows.of_release("copilot-python", "sdk_version", "9.9.9")
    assert none.empty and list(none.columns) == list(mine.columns)
    assert rows.of_release("copilot-python", "sdk_version", "1.0.0") is mine  # made once, asked again
