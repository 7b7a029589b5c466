from __future__ import annotations

from matrix import HARNESS_VERSION
from matrix.runner import Cell, order, pending
from matrix.store import Row


def row(sdk: str, outcome: str, harness: str = HARNESS_VERSION) -> Row:
    return Row(family="f", sdk_version=sdk, cli_version="1.0.0", probe="handshake", outcome=outcome,
               harness_version=harness)


CELLS = [Cell("f", s, "1.0.0", "handshake") for s in ("1", "2", "3", "4")]


def test_incremental_skips_measured_cells_only() -> None:
    rows = [row("1", "compatible"), row("2", "infra-error"), row("3", "refused", harness="0")]
    todo = pending(CELLS, rows, force=False)
    # 2: infra errors are not verdicts, re-measured; 3: another harness version; 4: new.
    assert [c.sdk_version for c in todo] == ["2", "3", "4"]


def test_force_remeasures_everything() -> None:
    assert pending(CELLS, [row("1", "compatible")], force=True) == CELLS


def test_order_groups_by_cli_then_sdk_numerically() -> None:
    cells = [Cell("f", "0.1.10", "1.0.2", "h"), Cell("f", "0.1.9", "1.0.10", "h"), Cell("f", "0.1.9", "1.0.2", "h")]
    assert [(c.cli_version, c.sdk_version) for c in order(cells)] == [
        ("1.0.2", "0.1.9"), ("1.0.2", "0.1.10"), ("1.0.10", "0.1.9")]
