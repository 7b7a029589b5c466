"""Our logic for the npm SDK family: the runtime that imports a release, and the page that
compares SDK families against the same CLI versions."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from matrix.ecosystems.npm_env import NpmPrefix
from matrix.families.copilot.cli import Runtime, RuntimeSource
from matrix.families.copilot.compare_pages import compare_page, compared_families
from matrix.families.copilot.family import CopilotFamily
from matrix.families.copilot.node.sdk import prepare_node_sdk
from matrix.site.sitedata import site_view
from matrix.store.results import Store, load_frame
from tests.conftest import make_row

NODE = shutil.which("node")


def fake_prefix(tmp_path: Path, code: str) -> NpmPrefix:
    prefix = NpmPrefix(package="@github/copilot-sdk", version="9.9.9", location=tmp_path / "prefix")
    pkg = prefix.package_dir
    (pkg / "dist").mkdir(parents=True)
    (pkg / "package.json").write_text(json.dumps({"name": "@github/copilot-sdk", "version": "9.9.9",
                                                  "type": "module", "exports": {".": {"import": "./dist/index.js"}}}))
    (pkg / "dist" / "index.js").write_text(code)
    return prefix


def broken_node(tmp_path: Path) -> Runtime:
    script = tmp_path / "old" / "node"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\necho 'SyntaxError: this runtime is too old' >&2\nexit 1\n")
    script.chmod(0o755)
    return Runtime("node-old", script)


@pytest.mark.skipif(NODE is None, reason="no node on PATH")
def test_the_first_runtime_that_imports_the_release_is_chosen_and_remembered(tmp_path: Path) -> None:
    assert NODE is not None
    prefix = fake_prefix(tmp_path, "export class CopilotClient {}\n")
    calls: list[str] = []

    def source(rt: Runtime) -> RuntimeSource:
        return RuntimeSource(rt.label, lambda: calls.append(rt.label) or rt)

    runtimes = [source(broken_node(tmp_path)), source(Runtime("node-system", Path(NODE)))]
    sdk = prepare_node_sdk(prefix, runtimes, tmp_path / "scratch", timeout=60)
    assert sdk.runtime.label == "node-system"
    assert "node-old" in sdk.import_failures
    again = prepare_node_sdk(prefix, runtimes, tmp_path / "scratch", timeout=60)
    assert again.runtime.label == "node-system" and again.import_failures == sdk.import_failures


@pytest.mark.skipif(NODE is None, reason="no node on PATH")
def test_a_release_no_runtime_imports_keeps_the_oldest_and_says_why(tmp_path: Path) -> None:
    assert NODE is not None
    prefix = fake_prefix(tmp_path, "import './missing.js';\n")
    sdk = prepare_node_sdk(prefix, [RuntimeSource("node-system", lambda: Runtime("node-system", Path(NODE)))],
                           tmp_path / "scratch", timeout=60)
    assert sdk.runtime.label == "node-system" and "missing.js" in sdk.import_failures["node-system"]


def test_compare_page_lines_up_families_on_the_same_cli_versions(tmp_path: Path) -> None:
    store = Store(tmp_path / "r")
    cells = [("copilot-python", "1.0.0", "1.0.60", "compatible"), ("copilot-python", "0.3.0", "1.0.60", "crashed"),
             ("copilot-node", "1.0.0", "1.0.60", "compatible"), ("copilot-node", "0.3.0", "1.0.60", "compatible"),
             ("copilot-node", "0.3.0", "0.0.402", "compatible")]
    for family, sdk, cli, outcome in cells:
        store.append(make_row(sdk, cli, outcome, family=family,
                              error_message="<b>int()</b>" if outcome == "crashed" else None))
    for family, outcome in (("copilot-python", "lost"), ("copilot-node", "surfaced")):
        store.append(make_row("1.0.0", "1.0.60", outcome, family=family, probe="tolerance",
                              mutation="event.unknown-enum-value"))
    frame, _ = load_frame(tmp_path / "r")
    assert compared_families(site_view(frame), CopilotFamily) == {"@github/copilot": ["copilot-node", "copilot-python"]}
    page = compare_page(site_view(frame), "@github/copilot", ["copilot-node", "copilot-python"], "x.png")
    assert "works: 0.3.0 … 1.0.0 (2 of 2)" in page and "works: 1.0.0 (1 of 2)" in page
    assert "0.0.402" in page and "not measured" in page  # a CLI only one family was measured against
    assert "<code>event.unknown-enum-value</code>" in page and "lost" in page and "surfaced" in page
    assert "1 cells differ" in page and "&lt;b&gt;int()&lt;/b&gt;" in page and "<b>int()</b>" not in page
