"""The home page's one line per family: what the newest release of each side works with."""

from __future__ import annotations

from matrix.present.ranges import Range
from matrix.site.answer_lines import span_text


def test_a_release_that_works_with_none_of_the_measured_releases_does_not_read_as_unmeasured() -> None:
    assert span_text([]) == "none of the measured releases"
    assert span_text([Range("1.0.1", "1.0.3", ("1.0.1", "1.0.2", "1.0.3"))]) == "1.0.1–1.0.3"
