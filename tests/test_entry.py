"""The console script's exit (matrix/commands/cli.py ``entry``)."""

from __future__ import annotations

import gc

import pytest

from matrix.commands import cli


def test_the_console_script_exits_with_the_commands_code_and_the_collector_frozen(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The collector's passes over what a command read, at interpreter exit, took a second of
    every command: the script freezes it first, and still exits with the command's code."""
    froze: list[bool] = []
    monkeypatch.setattr(cli, "main", lambda: 3)
    monkeypatch.setattr(gc, "freeze", lambda: froze.append(True))
    with pytest.raises(SystemExit) as ended:
        cli.entry()
    assert ended.value.code == 3 and froze == [True]
