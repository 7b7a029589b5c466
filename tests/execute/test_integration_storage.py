"""A run whose results fill their disk (the issue's own fault): real cosmo-ai-sdk releases
against the stand-in, the results directory on a small tmpfs. The run ends with one line
naming the path and exit 3, the store holds only whole rows, and a rerun after freeing space
measures the rest and keeps every row the first run stored."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

CONFIG = '[families.cosmo-python]\nprobes = ["tolerance", "identity", "strictness"]\nsdk.select = ["0.6.1", "0.5.1"]\n'


def run(config: Path, results: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "matrix.commands.cli", "run", "--config", str(config), "--results",
                           str(results)], capture_output=True, text=True, timeout=900, env=dict(os.environ),
                          check=False)


def test_results_on_a_full_disk(tmpfs, fill, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    config = tmp_path / "m.toml"
    config.write_text(CONFIG)
    results = tmpfs("4m")
    filler = fill(results, leave=48 * 1024)
    first = run(config, results)
    assert first.returncode == 3, first.stdout[-3000:] + first.stderr
    said = [ln for ln in first.stderr.splitlines() if ln.strip()]
    assert said[-1].startswith("infrastructure error: cannot write ") and str(results) in said[-1], first.stderr
    assert "No space left on device" in said[-1] and "Traceback" not in first.stderr
    lines = (results / "rows.jsonl").read_text().splitlines(keepends=True)
    assert lines and all(ln.endswith("\n") for ln in lines)
    kept = {(r["mutation"], r["sdk_version"]): r["measured_at"] for r in map(json.loads, lines)}
    filler.unlink()
    second = run(config, results)
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr
    stored = (results / "rows.jsonl").read_text().splitlines()
    rows = {(r["mutation"], r["sdk_version"]): r for r in map(json.loads, stored)}
    assert all(rows[k]["measured_at"] == v for k, v in kept.items())  # nothing the first run stored was lost or redone
    assert len(rows) > len(kept) and {r["outcome"] for r in rows.values()} & {"kept", "surfaced", "ignored"}
