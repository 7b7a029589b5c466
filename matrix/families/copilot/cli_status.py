"""Ask a CLI, with no SDK in between, which version it reports: start it as the SDKs do
(`--headless --stdio`), send `status.get`, print the answer's `version` as JSON.

    python cli_status.py RUNTIME ENTRY

Standalone (stdlib and the shim's framing only), run in a sandbox by the harness when an
SDK's `get_status` named a version other than the one installed: if the CLI says the same
thing to us, the CLI misreports its version and the SDK did run ours."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

if __package__:  # imported as matrix.families.copilot.cli_status (tests, type checks)
    from matrix.families.copilot.shim import encode, read_frame
else:  # a script: -I leaves its directory out of sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from shim import encode, read_frame  # type: ignore[import-not-found, no-redef]


def main(argv: list[str]) -> int:
    child = subprocess.Popen([*argv, "--headless", "--no-auto-update", "--log-level", "error", "--stdio"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert child.stdin is not None and child.stdout is not None
    version = None
    try:
        child.stdin.write(encode({"jsonrpc": "2.0", "id": 1, "method": "status.get", "params": {}}))
        child.stdin.flush()
        while (frame := read_frame(child.stdout)) is not None:
            msg = frame.message()
            if msg is not None and msg.get("id") == 1:
                result = msg.get("result")
                version = result.get("version") if isinstance(result, dict) else None
                break
    except OSError:
        pass  # the CLI refused the flags and exited: it says nothing
    finally:
        child.stdin.close()
        child.wait()
    print(json.dumps({"version": version}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
