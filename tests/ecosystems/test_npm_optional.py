"""What npm left out of an install: not served (recorded), another platform (normal), or
dropped although this platform needs it (an infrastructure error)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from matrix.ecosystems import npm_optional
from matrix.ecosystems.npm_env import NpmPrefix
from matrix.ecosystems.npm_optional import PlatformPackage, applies_here, not_served
from matrix.errors import InfraError

LINUX_X64 = PlatformPackage(frozenset({"1.0.22", "1.0.102"}), ("linux",), ("x64",), ("glibc",))
LINUX_MUSL = PlatformPackage(frozenset({"1.0.22", "1.0.102"}), ("linux",), ("x64",), ("musl",))
DARWIN = PlatformPackage(frozenset({"1.0.7", "1.0.22"}), ("darwin",), ("arm64",))
REGISTRY = {"@github/copilot-linux-x64": LINUX_X64, "@github/copilot-linuxmusl-x64": LINUX_MUSL,
            "@github/copilot-darwin-arm64": DARWIN}


@pytest.fixture(autouse=True)
def linux_glibc_x64(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(npm_optional, "this_platform", lambda: ("linux", "x64", "glibc"))
    monkeypatch.setattr(npm_optional, "lookup", REGISTRY.get)


def declared(version: str) -> dict[str, str]:
    return {name: version for name in REGISTRY} | {"@github/copilot-gone": version}


def test_the_platforms_npm_would_install_here() -> None:
    assert applies_here(LINUX_X64)
    assert not applies_here(LINUX_MUSL) and not applies_here(DARWIN)
    assert applies_here(PlatformPackage(frozenset(), ("!win32",), ()))
    assert not applies_here(PlatformPackage(frozenset(), ("linux",), ("!x64",)))


def test_a_version_the_registry_does_not_serve_is_named(tmp_path: Path) -> None:
    # 1.0.7: the registry has no linux-x64 build of it (nor a musl one: another platform's).
    got = not_served(tmp_path, declared("1.0.7"), "installing @github/copilot==1.0.7")
    assert got == ["@github/copilot-gone@1.0.7", "@github/copilot-linux-x64@1.0.7"]


def test_other_platforms_and_installed_ones_are_not_reported(tmp_path: Path) -> None:
    pkg = tmp_path / "@github" / "copilot-linux-x64"
    pkg.mkdir(parents=True)
    (pkg / "package.json").write_text("{}")
    assert not_served(tmp_path, declared("1.0.22"), "x") == ["@github/copilot-gone@1.0.22"]


def test_a_package_this_platform_needs_and_the_registry_serves_is_an_infra_error(tmp_path: Path) -> None:
    with pytest.raises(InfraError, match=r"copilot-linux-x64@1\.0\.102.*retried"):
        not_served(tmp_path, declared("1.0.102"), "installing @github/copilot==1.0.102")


def test_ranges_are_not_judged(tmp_path: Path) -> None:
    assert not_served(tmp_path, {"@github/copilot-linux-x64": "^1.0.0"}, "x") == []


def test_an_install_from_before_the_check_is_checked_once_and_reinstalled_when_not_whole(tmp_path: Path) -> None:
    prefix = NpmPrefix("@github/copilot", "1.0.102", tmp_path / "p")
    (prefix.package_dir).mkdir(parents=True)
    (prefix.package_dir / "package.json").write_text(json.dumps({"optionalDependencies": declared("1.0.102")}))
    (prefix.location / ".compat-matrix-env.json").write_text("{}")
    with pytest.raises(InfraError):
        prefix.optional_not_served()
    assert not (prefix.location / ".compat-matrix-env.json").exists()  # the next use installs it again
    (prefix.package_dir.parent / "copilot-linux-x64").mkdir()
    (prefix.package_dir.parent / "copilot-linux-x64" / "package.json").write_text("{}")
    assert prefix.optional_not_served() == ["@github/copilot-gone@1.0.102"]
    (prefix.package_dir.parent / "copilot-linux-x64" / "package.json").unlink()
    assert prefix.optional_not_served() == ["@github/copilot-gone@1.0.102"]  # remembered, not asked again
