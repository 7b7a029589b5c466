"""The frame the site's pages read: text as Python strings, numbers as numbers."""

from __future__ import annotations

import pandas as pd

from matrix.site.build import _plain_strings


def test_the_pages_read_text_as_python_strings_and_numbers_as_numbers() -> None:
    """The view the pages read converts no value on the way out (``_plain_strings``); the data
    twin keeps the frame's own types."""
    frame = pd.DataFrame({"sdk_version": ["1.0.0", None], "seconds": [1.5, 2.0], "leaked": [["copilot"], []]})
    assert frame["sdk_version"].dtype == "str"
    plain = _plain_strings(frame)
    assert plain["sdk_version"].dtype == object and plain["seconds"].dtype == "float64"
    assert plain.to_dict("records")[0] == {"sdk_version": "1.0.0", "seconds": 1.5, "leaked": ["copilot"]}
    assert pd.isna(plain["sdk_version"].iloc[1]) and frame["sdk_version"].dtype == "str"
