"""The real shim script between a test and an echo "CLI" that sends every frame back."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from matrix.families.copilot import shim
from matrix.families.copilot.shim import encode
from tests.conftest import ROOT

FRAMES = encode({"jsonrpc": "2.0", "id": 1, "method": "ping"}) + encode({"jsonrpc": "2.0", "id": 2, "method": "x"})


def relay(tmp_path: Path, transcript: Path, data: bytes = FRAMES) -> subprocess.CompletedProcess[bytes]:
    """``data`` sent through the shim (no rule) to the echo CLI, recording into ``transcript``."""
    echo = tmp_path / "echo.py"
    echo.write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from matrix.families.copilot.shim import read_frame\n"
        "while (f := read_frame(sys.stdin.buffer)) is not None:\n"
        "    sys.stdout.buffer.write(f.raw); sys.stdout.buffer.flush()\n")
    config = tmp_path / "shim.json"
    config.write_text(json.dumps({"transcript": str(transcript), "rule": None}))
    return subprocess.run([sys.executable, shim.__file__, str(config), "--", sys.executable, str(echo)],
                          input=data, capture_output=True, timeout=30, check=False)
