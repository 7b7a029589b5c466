"""What a registry lists and the dataset has no cell of: grouped by why, oldest first, and a
release measured since is no longer listed as not measured."""

from __future__ import annotations

from matrix.store.listed import NEWER_PREVIEW, NOT_YET, OLDER_PREVIEW, YANKED_WHY, listed_of, unmeasured
from matrix.versions import Release, sort_key


def test_older_pre_releases_newer_ones_yanked_and_unmeasured_releases_are_each_said() -> None:
    listed = listed_of([Release("1.0.0", None, False), Release("1.0.1-beta.1", None, True),
                        Release("1.0.2", None, False), Release("1.0.3", None, False, yanked=True),
                        Release("1.0.3-preview.0", None, True), Release("1.0.1-beta.2", None, True),
                        Release("1.0.4", None, False)])
    got = {u.why: u.versions for u in unmeasured(listed, ["1.0.0", "1.0.3-preview.0"], sort_key)}
    assert got == {
        OLDER_PREVIEW: ["1.0.1-beta.1", "1.0.1-beta.2"], YANKED_WHY: ["1.0.3"], NOT_YET: ["1.0.2", "1.0.4"]}
    newer = listed_of([Release("1.0.0", None, False), Release("1.1.0-preview.1", None, True)])
    assert [(u.why, u.versions) for u in unmeasured(newer, ["1.0.0"], sort_key)] == [
        (NEWER_PREVIEW, ["1.1.0-preview.1"])]
    assert unmeasured(newer, ["1.0.0", "1.1.0-preview.1"], sort_key) == []


def test_the_versions_page_lists_what_was_not_measured_beside_what_was() -> None:
    from pathlib import Path

    from matrix.answers.analysis import rows_of
    from matrix.families.base import SiteView
    from matrix.families.registry import FAMILIES, cells_frame
    from matrix.site.pages import versions_index
    from matrix.store.dataset import Sources
    from tests.conftest import make_row

    rows = [make_row("1.0.2", "1.0.60", "compatible")]
    releases = {"copilot-python": {"sdk": {"1.0.2": None}, "cli": {"1.0.60": None},
                                   "sdk-listed": {"1.0.2": "release", "1.0.1b1": "pre-release", "1.0.3": "release"},
                                   "cli-listed": {"1.0.60": "release"}}}
    page = versions_index(SiteView(rows_of(cells_frame(rows)), releases, Sources(Path("/nonexistent-results")),
                                   FAMILIES, "now"))
    assert "[1.0.2](copilot-python/sdk-1.0.2.md)" in page
    assert "**Not measured** (github-copilot-sdk, 2 releases the registry lists)" in page
    assert "- Pre-releases older than the newest release" in page and "(1): 1.0.1b1" in page
    assert "- Releases not measured yet (no selection has included them) (1): 1.0.3" in page
    assert "@github/copilot, " not in page  # every CLI release it lists is measured
