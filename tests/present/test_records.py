"""A frame's rows as dicts of the columns a reader asks for, as pandas would give them."""

from __future__ import annotations

import numpy as np
import pandas as pd

from matrix.present.records import records


def test_the_columns_asked_come_as_pandas_gives_them_and_those_the_frame_lacks_are_left_out() -> None:
    frame = pd.DataFrame({
        "outcome": ["compatible", None], "protocol": [3.0, np.nan], "flaky": [True, False],
        "leaked": [["copilot"], None], "count": pd.array([1, None], dtype="Int64"), "unread": ["a", "b"]})
    got = records(frame, ["outcome", "protocol", "leaked", "count", "flaky", "outcome", "missing"])
    want = frame[["outcome", "protocol", "leaked", "count", "flaky"]].to_dict("records")
    assert [list(r) for r in got] == [["outcome", "protocol", "leaked", "count", "flaky"]] * 2
    assert repr(got) == repr(want)  # NaN and NA as pandas gives them (NaN != NaN: compare the text)
    assert got[1]["count"] is None and "unread" not in got[0] and got[0].get("missing") is None


def test_a_frame_with_none_of_the_columns_gives_an_empty_record_per_row() -> None:
    assert records(pd.DataFrame({"a": [1, 2]}), ["b"]) == [{}, {}]
