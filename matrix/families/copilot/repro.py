"""Reproduction scripts: for one SDK release, a short self-contained shell script a reader runs
outside our harness (a fresh venv or npm prefix, the two releases from their registries, a few
lines of the SDK's public API) to see what a cell says, ready for an upstream bug report.

The program is written for the constructor style the harness found in that release (recorded
in each row's ``detail.api``); it starts the client against the CLI, pings, asks for status
and stops, printing each step. What it prints is what the cell's verdict is made of: a
refusal's message, a crash's exception, the protocol of a connection."""

from __future__ import annotations

import shlex

__all__ = ["script"]

_PYTHON_CONSTRUCT = {
    "keyword connection": ("from copilot import CopilotClient, RuntimeConnection",
                           "CopilotClient(connection=RuntimeConnection.for_stdio(path=cli))"),
    "config dataclass": ("from copilot import CopilotClient, SubprocessConfig",
                         "CopilotClient(SubprocessConfig(cli_path=cli, use_stdio=True), auto_start=False)"),
    "options dict": ("from copilot import CopilotClient",
                     "CopilotClient({'cli_path': cli, 'use_stdio': True, 'auto_start': False})"),
}

_PYTHON = """\
import asyncio, sys
{imports}

async def main(cli):
    client = {construct}
    await client.start()  # starts the CLI and negotiates the protocol
    print("started")
    if hasattr(client, "ping"):
        print("ping:", await client.ping("repro"))
    if hasattr(client, "get_status"):
        print("status:", await client.get_status())
    await client.stop()
    print("stopped")

asyncio.run(main(sys.argv[1]))
"""

_NODE = """\
import * as sdk from "@github/copilot-sdk";
const cli = process.argv[2];
const client = sdk.RuntimeConnection
  ? new sdk.CopilotClient({ connection: sdk.RuntimeConnection.forStdio({ path: cli }) })
  : new sdk.CopilotClient({ cliPath: cli });
await client.start(); // starts the CLI and negotiates the protocol
console.log("started");
if (client.ping) console.log("ping:", JSON.stringify(await client.ping("repro")));
if (client.getStatus) console.log("status:", JSON.stringify(await client.getStatus()));
await client.stop();
console.log("stopped");
"""

_HEAD = """\
#!/bin/sh
# What {sdk} {sdk_version} does against {cli_package} CLI_VERSION, outside compat-matrix.
# Usage: sh {name} CLI_VERSION      (default {default_cli}; every CLI release of the matrix works)
# Needs: {needs}. Everything goes into a temporary directory, removed at the end.
set -eu
CLI_VERSION="${{1:-{default_cli}}}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
npm install --loglevel=error --no-audit --no-fund --prefix "$work/cli" "{cli_package}@$CLI_VERSION" >/dev/null
CLI="$work/cli/node_modules/.bin/copilot"
# What runs gets a fresh home (no login, no config), as every cell had; the CLI neither
# updates itself nor reports telemetry, as in the measurement.
mkdir -p "$work/home"
run() {{ HOME="$work/home" COPILOT_AUTO_UPDATE=false DO_NOT_TRACK=1 "$@"; }}
if ! run "$CLI" --version >/dev/null 2>&1; then
  # The node on PATH cannot start this CLI release (some need Node 24): npm provides one.
  npm install --loglevel=error --no-audit --no-fund --prefix "$work/node24" node@24 >/dev/null
  PATH="$work/node24/node_modules/node/bin:$PATH"
fi
"""


def script(family: str, sdk_package: str, sdk_version: str, cli_package: str, default_cli: str, api_style: str | None,
           name: str) -> str | None:
    """The script for one SDK release, saved as ``name`` (``None``: this family has no
    reproduction yet). ``api_style``: the constructor style its Python agent recorded."""
    if family == "copilot-python":
        imports, construct = _PYTHON_CONSTRUCT.get(api_style or "", _PYTHON_CONSTRUCT["options dict"])
        head = _HEAD.format(sdk=sdk_package, sdk_version=sdk_version, cli_package=cli_package, name=name,
                            default_cli=default_cli, needs="python3 (3.11+), npm")
        program = _PYTHON.format(imports=imports, construct=construct)
        return (head + 'python3 -m venv "$work/venv"\n'
                f'"$work/venv/bin/pip" install --quiet {shlex.quote(f"{sdk_package}=={sdk_version}")}\n'
                "cat > \"$work/repro.py\" <<'PY'\n" + program + "PY\n"
                'run "$work/venv/bin/python" "$work/repro.py" "$CLI"\n')
    if family == "copilot-node":
        head = _HEAD.format(sdk=sdk_package, sdk_version=sdk_version, cli_package=cli_package, name=name,
                            default_cli=default_cli, needs="node (20+), npm")
        return (head + f'npm install --loglevel=error --no-audit --no-fund --prefix "$work/app" '
                f'{shlex.quote(f"{sdk_package}@{sdk_version}")} >/dev/null\n'
                "cat > \"$work/app/repro.mjs\" <<'JS'\n" + _NODE + "JS\n"
                'run node "$work/app/repro.mjs" "$CLI"\n')
    return None
