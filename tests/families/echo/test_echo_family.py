"""The proof that the family interface is enough: a family written for the tests, registered
by the entry point of a distribution of its own, measured end to end by the real runner,
store and site in a ``compat-matrix`` process of its own. Its probe is not called "handshake":
naming its pair probe is what gives it a matrix, release pages, pins and can-i-ship.

Its SDK and CLI are small programs (``programs/``), released as versions that differ in the
protocols they speak and published to a package index on a local port; uv installs them
from there like any release."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from matrix.ecosystems.pypi_env import uv_bin
from tests.conftest import ROOT, site_root
from tests.families.echo.index import serving, write_wheel

pytestmark = pytest.mark.integration

HERE = Path(__file__).parent
SDK_RELEASES = {"1.0.0": (1,), "2.0.0": (1, 2)}  # version -> the protocols it accepts
CLI_RELEASES = {"1.0.0": 1, "2.0.0": 2}  # version -> the protocol it speaks


def program(name: str, version: str, **constants: object) -> str:
    text = (HERE / "programs" / f"{name}.py").read_text()
    text = re.sub(r'^VERSION = .*$', f"VERSION = {version!r}", text, flags=re.M)
    for key, value in constants.items():
        text = re.sub(rf"^{key}(: [^=]+)? = .*$", f"{key} = {value!r}", text, flags=re.M)
    return text


def publish(wheels: Path) -> None:
    for version, accepts in SDK_RELEASES.items():
        sdk = program("echo_sdk", version, ACCEPTS=accepts)
        write_wheel(wheels, "echo-sdk", version, {"echo_sdk/__init__.py": sdk})
    for version, protocol in CLI_RELEASES.items():
        cli = program("echo_cli", version, PROTOCOL=protocol)
        write_wheel(wheels, "echo-cli", version, {"echo_cli/__init__.py": cli},
                    {"console_scripts": {"echo-cli": "echo_cli:main"}})


def install_plugin(tmp: Path) -> Path:
    """The test-only distribution, built from its pyproject.toml and installed with uv into a
    directory the compat-matrix process gets on its path."""
    project = tomllib.loads((HERE / "plugin" / "pyproject.toml").read_text())["project"]
    files = {f"echo_family/{p.name}": p.read_text() for p in (HERE / "plugin" / "echo_family").glob("*.py")}
    wheel = write_wheel(tmp / "plugin-wheel", project["name"], project["version"], files, project["entry-points"])
    target = tmp / "plugins"
    subprocess.run([uv_bin(), "pip", "install", "--quiet", "--no-index", "--no-deps", "--python", sys.executable,
                    "--target", str(target), str(wheel)], check=True, timeout=120)
    return target


@pytest.fixture(scope="module")
def echo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    tmp = tmp_path_factory.mktemp("echo")
    publish(tmp / "wheels")
    plugins = install_plugin(tmp)
    (tmp / "echo.toml").write_text('[run]\njobs = 2\n\n[families.echo]\nprobes = ["roundtrip"]\n'
                                   'sdk.select = ["all"]\ncli.select = ["all"]\n')
    with serving(tmp / "wheels") as index:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugins), str(ROOT)]),
               "UV_DEFAULT_INDEX": index, "UV_INDEX_URL": index, "PIP_INDEX_URL": index,
               "COMPAT_MATRIX_CACHE": str(tmp / "cache")}
        yield tmp, env


def compat_matrix(tmp: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from matrix.commands.cli import main; raise SystemExit(main())",
                           *args], cwd=tmp, env=env, capture_output=True, text=True, timeout=600, check=False)


def test_a_plugin_family_is_measured_stored_and_published(echo: tuple[Path, dict[str, str]]) -> None:
    tmp, env = echo
    listed = compat_matrix(tmp, env, "discover", "--config", "echo.toml")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert "echo-sdk" in listed.stdout and "2.0.0" in listed.stdout

    run = compat_matrix(tmp, env, "run", "--config", "echo.toml", "--results", "results")
    assert run.returncode == 0, run.stdout + run.stderr
    rows = [json.loads(line) for line in (tmp / "results" / "rows.jsonl").read_text().splitlines()]
    outcomes = {(r["sdk_version"], r["cli_version"]): r["outcome"] for r in rows}
    assert outcomes == {("1.0.0", "1.0.0"): "compatible", ("1.0.0", "2.0.0"): "refused",
                        ("2.0.0", "1.0.0"): "compatible", ("2.0.0", "2.0.0"): "compatible"}
    refused = next(r for r in rows if r["outcome"] == "refused")
    assert refused["error_type"] == "VersionMismatch" and "upgrade echo-sdk" in refused["error_message"]

    assert {r["probe"] for r in rows} == {"roundtrip"} and not any(r["per_sdk"] for r in rows)
    again = compat_matrix(tmp, env, "run", "--config", "echo.toml", "--results", "results")
    assert again.returncode == 0 and len((tmp / "results" / "rows.jsonl").read_text().splitlines()) == 4

    pins = compat_matrix(tmp, env, "pins", "--results", "results", "--family", "echo", "--sdk", "1.0.0", "--json")
    assert pins.returncode == 0, pins.stdout + pins.stderr
    assert json.loads(pins.stdout)["works_with"] == ["echo-cli==1.0.0"]
    ship = compat_matrix(tmp, env, "can-i-ship", "--results", "results", "--family", "echo", "--cli", "2.0.0",
                         "--against", "all")
    assert ship.returncode == 1 and "1.0.0" in ship.stdout, ship.stdout + ship.stderr  # it breaks echo-sdk 1.0.0
    fine = compat_matrix(tmp, env, "can-i-ship", "--results", "results", "--family", "echo", "--sdk", "2.0.0",
                         "--against", "all")
    assert fine.returncode == 0, fine.stdout + fine.stderr

    root = site_root(tmp / "repo")
    built = compat_matrix(tmp, env, "build", "--results", "results", "--root", str(root),
                          "--site", str(tmp / "site"))
    assert built.returncode == 0, built.stdout + built.stderr
    matrix_page = (root / "docs" / "matrix" / "echo.md").read_text()
    assert "refused" in matrix_page and "roundtrip" in matrix_page
    release = (root / "docs" / "versions" / "echo" / "sdk-1.0.0.md").read_text()
    assert "echo-cli==1.0.0" in release  # what it works with, in its ecosystem's syntax
    assert (root / "docs" / "versions" / "echo" / "cli-2.0.0.md").is_file()
    assert "echo" in (root / "docs" / "pins.md").read_text()
    assert (tmp / "site" / "matrix" / "echo" / "index.html").is_file()
    own = (tmp / "site" / "echo" / "index.html").read_text()
    assert "echo-sdk 1.0.0 speaks protocol [1], but echo-cli 2.0.0 speaks 2" in own
