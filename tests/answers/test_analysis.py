from __future__ import annotations

import pandas as pd

from matrix.answers.analysis import Range, caveat_ranges, pin_lines, ranges, upgrade_advice, working_ranges


def frame(cells: dict[tuple[str, str], str], family: str = "copilot-python") -> pd.DataFrame:
    """``outcome`` "leak": degraded only because stop() left the CLI running."""
    return pd.DataFrame([{"family": family, "probe": "handshake", "sdk_version": s, "cli_version": c,
                          "outcome": "degraded" if o == "leak" else o,
                          "error_type": "LeftRunning" if o == "leak" else None}
                         for (s, c), o in cells.items()])


CELLS = {
    ("0.1", "1.0.2"): "compatible", ("0.1", "1.0.10"): "compatible", ("0.1", "1.0.11"): "refused",
    ("0.1", "1.0.12"): "compatible",
    ("0.2", "1.0.2"): "launch-failed", ("0.2", "1.0.10"): "infra-error", ("0.2", "1.0.11"): "compatible",
    ("0.2", "1.0.12"): "compatible",
}


def test_ranges_split_at_every_non_working_version() -> None:
    assert ranges(["a", "b", "c", "d"], {"a", "b", "d"}) == [Range("a", "b", ("a", "b")), Range("d", "d", ("d",))]


def test_working_ranges_follow_numeric_order_and_never_count_infra_errors() -> None:
    f = frame(CELLS)
    assert [r.versions for r in working_ranges(f, "copilot-python", sdk="0.1")] == [("1.0.2", "1.0.10"), ("1.0.12",)]
    # 1.0.10 was only an infra error: unknown, so not part of a working range.
    assert [r.versions for r in working_ranges(f, "copilot-python", sdk="0.2")] == [("1.0.11", "1.0.12")]
    assert [r.versions for r in working_ranges(f, "copilot-python", cli="1.0.12")] == [("0.1", "0.2")]


def test_pins_are_in_the_other_sides_ecosystem_and_leaks_stand_apart() -> None:
    cells = {("0.1.15", "1.0.2"): "compatible", ("0.1.15", "1.0.10"): "compatible", ("0.1.15", "1.0.11"): "leak",
             ("0.1.15", "1.0.12"): "leak", ("0.2.1", "1.0.12"): "compatible", ("0.3.0", "1.0.12"): "refused",
             ("1.0.4", "1.0.12"): "compatible", ("1.0.4", "1.0.2"): "compatible"}
    f = frame(cells, "copilot-go")
    # An SDK's CLIs are npm ranges; the leaking ones are not among them.
    assert pin_lines(f, "copilot-go", sdk="0.1.15") == ['"@github/copilot@>=1.0.2 <=1.0.10"']
    assert pin_lines(f, "copilot-go", sdk="0.1.15", caveat=True) == ['"@github/copilot@>=1.0.11 <=1.0.12"']
    assert [r.versions for r in caveat_ranges(f, "copilot-go", sdk="0.1.15")] == [("1.0.11", "1.0.12")]
    # A CLI's Go SDKs: the version to get, its require line, and the measured-bad one excluded.
    go = pin_lines(f, "copilot-go", cli="1.0.12")
    assert go[0] == "go get github.com/github/copilot-sdk/go@v1.0.4"
    assert go[1] == "require github.com/github/copilot-sdk/go v1.0.4"
    assert go[-1] == "exclude github.com/github/copilot-sdk/go v0.3.0"
    assert not any(">=" in line for line in go)
    py = frame({("1.0.2", "1.0.10"): "compatible", ("1.0.10", "1.0.10"): "compatible"}, "copilot-python")
    assert pin_lines(py, "copilot-python", cli="1.0.10") == ['"github-copilot-sdk>=1.0.2,<=1.0.10"']


def test_upgrade_advice_prefers_the_side_whose_newest_release_reaches_further() -> None:
    advice = upgrade_advice(frame(CELLS), "copilot-python")
    assert advice is not None
    assert advice.newest_sdk == "0.2" and advice.newest_cli == "1.0.12"
    assert advice.clis_working_with_newest_sdk == ("1.0.11", "1.0.12")
    assert advice.sdks_working_with_newest_cli == ("0.1", "0.2")
    assert advice.first == "cli"  # newest CLI works with 2/2 SDKs, newest SDK with 2/4 CLIs
