"""The reproduction scripts the site publishes, run as a reader would (plain `sh`, outside
the harness), for three stored cells of different outcomes: each shows the same thing."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from matrix.families.base import SiteView
from matrix.families.copilot.release_pages import reproduction
from matrix.families.registry import FAMILIES
from matrix.site.sitedata import site_view
from matrix.store.dataset import Dataset
from matrix.store.results import frame_of
from tests.conftest import ROOT

pytestmark = pytest.mark.integration  # starts no harness process: tests/conftest.py BESIDE_CELLS

# (family, SDK, CLI, stored outcome): picked from the committed dataset.
CELLS = [("copilot-python", "1.0.27", "1.0.89", "compatible"), ("copilot-python", "1.0.9", "0.0.420", "refused"),
         ("copilot-python", "0.2.0", "1.0.89", "crashed"),
         ("copilot-go", "0.2.0", "1.0.50", "compatible"), ("copilot-go", "0.1.15", "0.0.384", "refused"),
         ("copilot-go", "0.2.0", "1.0.89", "crashed"),
         ("copilot-node", "1.0.14", "1.0.85", "compatible"), ("copilot-node", "0.1.30", "1.0.48", "refused"),
         ("copilot-java", "0.3.0-java.2", "0.0.400", "compatible"),
         ("copilot-java", "0.3.0-java.2", "0.0.388", "refused"),
         ("copilot-java", "0.3.0-java.2", "1.0.102", "crashed")]


@pytest.fixture(scope="module")
def data() -> SiteView:
    wanted = {(f, s) for f, s, _, _ in CELLS}
    rows = [r for r in Dataset(ROOT / "data").read()[0] if (r.family, r.sdk_version) in wanted]
    return site_view(frame=frame_of(rows), releases={}, generated_at="t")


@pytest.mark.parametrize(("family", "sdk", "cli", "outcome"), CELLS)
def test_the_script_shows_what_the_cell_says(data: SiteView, tmp_path: Path, family: str, sdk: str, cli: str,
                                             outcome: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    frame = data.frame
    stored = frame[(frame["family"] == family) & (frame["sdk_version"] == sdk) & (frame["cli_version"] == cli)
                   & (frame["probe"] == "handshake")].iloc[0]
    assert stored["outcome"] == outcome  # the dataset still says what this test was written for
    script = reproduction(data, FAMILIES[family], sdk)
    assert script is not None
    path = tmp_path / f"sdk-{sdk}.repro.sh"
    path.write_text(script)
    cache = tmp_path_factory.getbasetemp() / "npm-cache"
    env = {**os.environ, "npm_config_cache": str(cache)}  # the reader's shell
    res = subprocess.run(["sh", str(path), cli], capture_output=True, text=True, timeout=900, env=env, cwd=tmp_path)
    said = res.stdout + res.stderr
    if outcome == "compatible":
        assert res.returncode == 0 and "started" in said and "stopped" in said, said
    else:
        first = str(stored["error_message"]).splitlines()[0]
        assert res.returncode != 0, said
        assert str(stored["error_type"]) in said, said
        # The message, up to what changes from run to run (a time stamp in a crash).
        assert first[:45] in said, (first, said)
