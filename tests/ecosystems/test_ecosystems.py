"""Each ecosystem's own version order and pin syntax."""

from __future__ import annotations

import pytest

from matrix.ecosystems import ECOSYSTEMS, Run, get, version_key
from matrix.errors import UserError
from matrix.versions import is_prerelease, sort_key


def ordered(versions: list[str], ecosystem: str | None = None) -> list[str]:
    return sorted(versions, key=lambda v: version_key(v, ecosystem))


@pytest.mark.parametrize("ecosystem", ["npm", "go", None])
def test_semver_prereleases_follow_semver_2_precedence(ecosystem: str | None) -> None:
    # The example from the issue: identifiers compare one by one, numbers numerically.
    assert ordered(["1.0.0-beta.1", "1.0.0-rc.1", "1.0.0-beta.2", "1.0.0-alpha.5", "1.0.0", "1.0.0-beta.11",
                    "1.0.0-beta", "1.0.0-alpha"], ecosystem) == [
        "1.0.0-alpha", "1.0.0-alpha.5", "1.0.0-beta", "1.0.0-beta.1", "1.0.0-beta.2", "1.0.0-beta.11",
        "1.0.0-rc.1", "1.0.0"]


@pytest.mark.parametrize("ecosystem", ["npm", "go", None])
def test_the_clis_dash_number_style_is_a_prerelease_of_its_version(ecosystem: str | None) -> None:
    assert ordered(["0.0.376", "0.0.375", "0.0.375-1", "0.0.374"], ecosystem) == [
        "0.0.374", "0.0.375-1", "0.0.375", "0.0.376"]
    check = get(ecosystem).is_prerelease if ecosystem else is_prerelease
    assert check("0.0.375-1") and not check("0.0.375")


def test_build_metadata_does_not_change_precedence_and_order_is_still_total() -> None:
    npm = get("npm")
    assert npm.key("1.0.0+build.5")[0] == npm.key("1.0.0")[0]
    # Equal precedence, different text: a stable, deterministic order all the same.
    assert ordered(["1.0.0+b", "1.0.0+a", "1.0.0"], "npm") == ["1.0.0", "1.0.0+a", "1.0.0+b"]
    assert ordered(["1.0.1", "1.0.0+build.5", "1.0.0-rc.1"], "npm") == ["1.0.0-rc.1", "1.0.0+build.5", "1.0.1"]


def test_go_tags_with_a_v_order_like_the_bare_numbers() -> None:
    assert ordered(["v1.0.0", "v0.3.0", "v1.0.0-beta.8", "v0.10.0"], "go") == [
        "v0.3.0", "v0.10.0", "v1.0.0-beta.8", "v1.0.0"]


def test_pypi_follows_pep_440() -> None:
    assert ordered(["1.0.0", "1.0.0.post1", "1.0.0rc1", "1.0.0b2", "1.0.0a1", "1.0.0.dev3", "0.9"], "pypi") == [
        "0.9", "1.0.0.dev3", "1.0.0a1", "1.0.0b2", "1.0.0rc1", "1.0.0", "1.0.0.post1"]
    assert get("pypi").is_prerelease("1.0.0rc1") and not get("pypi").is_prerelease("1.0.0.post1")


def test_without_an_ecosystem_each_kind_of_version_keeps_its_own_order() -> None:
    assert [str(v) for v in ordered(["1.0.0", "1.0.0rc1", "0.9", "1.0.1b1"])] == ["0.9", "1.0.0rc1", "1.0.0",
                                                                                 "1.0.1b1"]
    assert sort_key("1.0.10") > sort_key("1.0.9")


def test_pins_speak_each_ecosystems_own_syntax() -> None:
    runs = [Run("0.1.15", "0.2.1"), Run("0.3.0", "1.0.4")]
    assert get("pypi").pin("github-copilot-sdk", runs, ["0.2.3"]) == [
        '"github-copilot-sdk>=0.1.15,<=0.2.1"', '"github-copilot-sdk>=0.3.0,<=1.0.4"']
    assert get("npm").pin("@github/copilot", [Run("1.0.60", "1.0.60")], []) == ["@github/copilot@1.0.60"]
    assert get("npm").pin("@github/copilot", [Run("1.0.48", "1.0.60")], []) == ['"@github/copilot@>=1.0.48 <=1.0.60"']
    go = get("go").pin("github.com/github/copilot-sdk/go", runs, ["0.2.3"])
    # Go has no ranges: the version to get, the require line, and exclude lines for measured-bad versions.
    assert go[0] == "go get github.com/github/copilot-sdk/go@v1.0.4"
    assert go[1] == "require github.com/github/copilot-sdk/go v1.0.4"
    assert "v0.1.15 to v1.0.4" in go[2]
    assert go[3:] == ["exclude github.com/github/copilot-sdk/go v0.2.3"]
    assert not any(">=" in line for line in go)


def test_install_commands() -> None:
    assert get("pypi").install("github-copilot-sdk", "1.0.4") == 'pip install "github-copilot-sdk==1.0.4"'
    assert get("npm").install("@github/copilot", "1.0.102") == "npm install @github/copilot@1.0.102"
    assert get("go").install("github.com/github/copilot-sdk/go", "1.0.4") == \
        "go get github.com/github/copilot-sdk/go@v1.0.4"


def test_an_unknown_ecosystem_names_the_valid_ones() -> None:
    with pytest.raises(UserError) as exc:
        get("cargo")
    assert all(name in str(exc.value) for name in ECOSYSTEMS)
