"""The release gate on real candidate builds of two families, made from the newest release the
dataset holds: the same artifact (the gate says yes) and one whose protocol window was moved
to 4 (the gate says no, naming each pair as a regression against the published release).
Terminal, Markdown and JUnit are written to ``$COMPAT_MATRIX_GATE_OUT`` when set."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from matrix.store.dataset import Dataset
from matrix.versions import newest_release
from tests.answers.candidate_builds import download_wheel, edit_tarball, edit_wheel, npm_pack
from tests.conftest import ROOT

pytestmark = pytest.mark.integration

CLI = "1.0.102"  # a CLI release every SDK release of the dataset was measured against (or is, here)


def newest(family: str) -> str:
    """The newest release (no preview): what the gate compares a candidate with."""
    rows, _ = Dataset(ROOT / "data").read()
    version = newest_release([r.sdk_version for r in rows if r.family == family and r.probe == "handshake"])
    assert version is not None, f"data/ has no {family} handshake cell"
    return version


def builds(family: str, where: Path) -> tuple[Path, Path]:
    version = newest(family)
    if family == "copilot-python":
        same = download_wheel("github-copilot-sdk", version, where / "same")
        changed = edit_wheel(same, where / "changed" / same.name, {
            "copilot/_sdk_protocol_version.py": ("SDK_PROTOCOL_VERSION = 3", "SDK_PROTOCOL_VERSION = 4"),
            "copilot/client.py": ("_MIN_PROTOCOL_VERSION = 3", "_MIN_PROTOCOL_VERSION = 4")})
    else:
        same = npm_pack("@github/copilot-sdk", version, where / "same")
        changed = edit_tarball(same, where / "changed" / same.name, {
            "package/dist/sdkProtocolVersion.js": ("SDK_PROTOCOL_VERSION = 3", "SDK_PROTOCOL_VERSION = 4"),
            "package/dist/client.js": ("MIN_PROTOCOL_VERSION = 3", "MIN_PROTOCOL_VERSION = 4")})
    return same, changed


@pytest.mark.parametrize("family", ["copilot-python", "copilot-node"])
def test_the_gate_passes_the_same_build_and_stops_a_changed_one(family: str, tmp_path: Path) -> None:
    same, changed = builds(family, tmp_path / "builds")
    fleet = tmp_path / "fleet.toml"
    fleet.write_text(f'other = ["{CLI}"]\n')
    out = {}
    for name, artifact in (("same", same), ("changed", changed)):
        res = subprocess.run(
            [sys.executable, "-m", "matrix.commands.cli", "can-i-ship", "--family", family, "--sdk-artifact",
             str(artifact), "--fleet", str(fleet), "--results", str(tmp_path / "candidates"),
             "--data", str(ROOT / "data"), "--config", str(ROOT / "matrix.toml"),
             "--markdown", str(tmp_path / f"{name}.md"), "--junit", str(tmp_path / f"{name}.xml")],
            capture_output=True, text=True, timeout=1800, env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1"})
        out[name] = (res.returncode, res.stdout)
        target = os.environ.get("COMPAT_MATRIX_GATE_OUT")
        if target:
            Path(target).mkdir(parents=True, exist_ok=True)
            (Path(target) / f"{family}-{name}.txt").write_text(res.stdout)
            for ext in ("md", "xml"):
                shutil.copy(tmp_path / f"{name}.{ext}", Path(target) / f"{family}-{name}.{ext}")
    code, text = out["same"]
    assert code == 0 and "? yes" in text, text
    code, text = out["changed"]
    assert code == 1 and "? no" in text, text
    assert f"× cli  {CLI}  no       refused: SDK protocol version mismatch" in text
    assert f"regression   cli {CLI}: {newest(family)} compatible -> this build refused" in text
    failures = [c for c in ET.parse(tmp_path / "changed.xml").getroot().iter("testcase")
                if c.find("failure") is not None]
    assert len(failures) == 1 and CLI in str(failures[0].get("name"))
    assert "**regression**" in (tmp_path / "changed.md").read_text()
    assert not any(p.name.startswith("cli-") for p in (ROOT / "data" / family / "handshake").glob("*candidate*"))
