from __future__ import annotations

import pytest

from matrix.errors import ConfigError, UnknownVersionError
from matrix.versions import Release, apply_selection, check_selector, is_prerelease, sort_key

PY = [Release(v, None, is_prerelease(v)) for v in
      ["0.1.10", "0.1.9", "0.1.11rc1", "0.1.11", "0.2.0", "1.0.0", "1.0.1", "1.0.10", "1.0.2"]]
NPM = [Release(v, None, is_prerelease(v)) for v in ["0.0.354", "1.0.89-0", "1.0.89", "1.0.92", "1.0.102"]]


def sel(select, exclude=(), pre=False, releases=PY):
    return apply_selection("pkg", releases, list(select), list(exclude), pre)


def test_ordering_is_numeric_not_lexical() -> None:
    assert sorted(["1.0.10", "1.0.2", "0.1.9", "0.1.10"], key=sort_key) == ["0.1.9", "0.1.10", "1.0.2", "1.0.10"]


def test_npm_dash_suffix_is_a_prerelease_before_its_release() -> None:
    assert is_prerelease("1.0.89-0")
    assert not is_prerelease("1.0.89")
    assert sort_key("1.0.89-0") < sort_key("1.0.89") < sort_key("1.0.92")


def test_latest_skips_prereleases_unless_asked() -> None:
    assert sel(["latest:2"]) == ["1.0.2", "1.0.10"]
    assert sel(["latest:2"], releases=NPM) == ["1.0.92", "1.0.102"]
    assert "1.0.89-0" in sel(["all"], pre=True, releases=NPM)
    assert "1.0.89-0" not in sel(["all"], releases=NPM)


def test_range_and_exclusion() -> None:
    assert sel([">=0.1.10,<1.0.2"], exclude=["0.2.0"]) == ["0.1.10", "0.1.11", "1.0.0", "1.0.1"]


def test_explicit_prerelease_is_honoured() -> None:
    assert sel(["0.1.11rc1"]) == ["0.1.11rc1"]


def test_every_keeps_oldest_and_newest() -> None:
    picked = sel(["every:3"])
    assert picked[0] == "0.1.9" and picked[-1] == "1.0.10"


def test_union_of_selectors_is_sorted_and_deduplicated() -> None:
    assert sel(["1.0.0", "latest:1", "1.0.0"]) == ["1.0.0", "1.0.10"]


def test_unknown_version_names_it_and_the_newest() -> None:
    with pytest.raises(UnknownVersionError) as exc:
        sel(["9.9.9"])
    assert "9.9.9" in str(exc.value) and "1.0.10" in str(exc.value)


@pytest.mark.parametrize("bad", ["latest:", "lates:2", "newest", ">>1", "every:0"])
def test_bad_selectors_rejected(bad: str) -> None:
    with pytest.raises(ConfigError):
        check_selector(bad, "here")


def test_preview_is_the_prereleases_newer_than_the_newest_release() -> None:
    crate = [Release(v, None, is_prerelease(v)) for v in
             ["1.0.0-beta.4", "1.0.0", "1.0.28", "1.0.27-unstable.4.g1", "1.0.29-preview.2", "1.0.29-preview.4"]]
    assert sel(["all", "preview"], releases=crate) == ["1.0.0", "1.0.28", "1.0.29-preview.2", "1.0.29-preview.4"]
    yanked = [*crate, Release("1.0.30-beta.1", None, True, yanked=True)]
    assert sel(["preview"], releases=yanked) == ["1.0.29-preview.2", "1.0.29-preview.4"]
    assert sel(["preview"], releases=NPM) == []  # 1.0.89-0 came before a release
    check_selector("preview", "here")
