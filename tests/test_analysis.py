from __future__ import annotations

import pandas as pd

from matrix.analysis import Range, npm_spec, pip_spec, ranges, upgrade_advice, working_ranges


def frame(cells: dict[tuple[str, str], str]) -> pd.DataFrame:
    return pd.DataFrame([{"family": "f", "probe": "handshake", "sdk_version": s, "cli_version": c, "outcome": o}
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
    assert [r.versions for r in working_ranges(f, "f", sdk="0.1")] == [("1.0.2", "1.0.10"), ("1.0.12",)]
    # 1.0.10 was only an infra error: unknown, so not part of a working range.
    assert [r.versions for r in working_ranges(f, "f", sdk="0.2")] == [("1.0.11", "1.0.12")]
    assert [r.versions for r in working_ranges(f, "f", cli="1.0.12")] == [("0.1", "0.2")]


def test_specifiers() -> None:
    r = Range("1.0.2", "1.0.10", ("1.0.2", "1.0.10"))
    assert npm_spec("@github/copilot", r) == '"@github/copilot@>=1.0.2 <=1.0.10"'
    assert pip_spec("github-copilot-sdk", r) == '"github-copilot-sdk>=1.0.2,<=1.0.10"'
    one = Range("1.0.2", "1.0.2", ("1.0.2",))
    assert npm_spec("@github/copilot", one) == "@github/copilot@1.0.2"


def test_upgrade_advice_prefers_the_side_whose_newest_release_reaches_further() -> None:
    advice = upgrade_advice(frame(CELLS), "f")
    assert advice is not None
    assert advice.newest_sdk == "0.2" and advice.newest_cli == "1.0.12"
    assert advice.clis_working_with_newest_sdk == ("1.0.11", "1.0.12")
    assert advice.sdks_working_with_newest_cli == ("0.1", "0.2")
    assert advice.first == "cli"  # newest CLI works with 2/2 SDKs, newest SDK with 2/4 CLIs
