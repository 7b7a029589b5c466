"""Reproduction scripts: for one SDK release, a short self-contained shell script a reader runs
outside our harness (a fresh venv or npm prefix, the two releases from their registries, a few
lines of the SDK's public API) to see what a cell says, ready for an upstream bug report.

The program is written for the API the harness found in that release (recorded in each row's
``detail.api``: the Python constructor style, the Go methods' signatures); it starts the client
against the CLI, pings, asks for status and stops, printing each step. What it prints is what
the cell's verdict is made of: a refusal's message, a crash's exception, the protocol of a
connection."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any

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


def script(family: str, sdk_package: str, sdk_version: str, cli_package: str, default_cli: str,
           api: Mapping[str, Any], name: str) -> str | None:
    """The script for one SDK release, saved as ``name`` (``None``: this family has no
    reproduction). ``api``: what its agent recorded of the release's API."""
    def head(needs: str) -> str:
        return _HEAD.format(sdk=sdk_package, sdk_version=sdk_version, cli_package=cli_package, name=name,
                            default_cli=default_cli, needs=needs)

    if family == "copilot-python":
        imports, construct = _PYTHON_CONSTRUCT.get(str(api.get("style") or ""), _PYTHON_CONSTRUCT["options dict"])
        program = _PYTHON.format(imports=imports, construct=construct)
        return (head("python3 (3.11+), npm") + 'python3 -m venv "$work/venv"\n'
                f'"$work/venv/bin/pip" install --quiet {shlex.quote(f"{sdk_package}=={sdk_version}")}\n'
                "cat > \"$work/repro.py\" <<'PY'\n" + program + "PY\n"
                'run "$work/venv/bin/python" "$work/repro.py" "$CLI"\n')
    if family == "copilot-node":
        return (head("node (20+), npm") + f'npm install --loglevel=error --no-audit --no-fund --prefix "$work/app" '
                f'{shlex.quote(f"{sdk_package}@{sdk_version}")} >/dev/null\n'
                "cat > \"$work/app/repro.mjs\" <<'JS'\n" + _NODE + "JS\n"
                'run node "$work/app/repro.mjs" "$CLI"\n')
    if family == "copilot-go":
        go = go_program(api)
        if go is None:
            return None
        return (head("go (1.21+), npm") + 'mkdir -p "$work/app" && cd "$work/app"\n'
                "printf 'module repro\\n\\ngo 1.21\\n' > go.mod\n"
                "cat > main.go <<'GO'\n" + go + "GO\n"
                f"go get {shlex.quote(f'{sdk_package}@v{sdk_version}')}\n"
                'go build -o repro . && run ./repro "$CLI"\n')
    if family == "copilot-rust":
        # The release's own switch keeps its build script from fetching a CLI to embed.
        return (head("cargo (Rust 1.94+), npm; the first build takes minutes") +
                'cargo new --quiet --name repro "$work/app" && cd "$work/app"\n'
                f'dep={shlex.quote(f"{sdk_package}@={sdk_version}")}\n'
                'cargo add --quiet "$dep" --no-default-features -F runtime 2>/dev/null || '
                'cargo add --quiet "$dep" --no-default-features\n'
                "cargo add --quiet tokio -F rt-multi-thread,macros\n"
                "cat > src/main.rs <<'RS'\n" + _RUST + "RS\n"
                'COPILOT_SKIP_CLI_DOWNLOAD=1 cargo build --quiet && run ./target/debug/repro "$CLI"\n')
    if family == "copilot-java":
        group, _, artifact = sdk_package.partition(":")
        pom = (f"<project><modelVersion>4.0.0</modelVersion><groupId>repro</groupId><artifactId>repro</artifactId>"
               f"<version>0</version><dependencies><dependency><groupId>{group}</groupId>"
               f"<artifactId>{artifact}</artifactId><version>{sdk_version}</version></dependency>"
               "</dependencies></project>")
        return (head("a JDK 17+, mvn, npm") + 'mkdir -p "$work/app" && cd "$work/app"\n'
                f"cat > pom.xml <<'POM'\n{pom}\nPOM\n"
                "mvn --batch-mode --quiet dependency:build-classpath -Dmdep.outputFile=cp.txt\n"
                "cat > Repro.java <<'JAVA'\n" + _JAVA + "JAVA\n"
                'javac -cp "$(cat cp.txt)" Repro.java && run java -cp ".:$(cat cp.txt)" Repro "$CLI"\n')
    return None


_RUST = """\
use github_copilot_sdk::{CliProgram, Client, ClientOptions};

fn fail(step: &str, err: impl std::fmt::Debug) -> ! {
    println!("{step} failed: {err:?}");
    std::process::exit(1)
}

#[tokio::main]
async fn main() {
    let cli = std::env::args().nth(1).expect("the CLI's path");
    let mut options = ClientOptions::default();
    options.program = CliProgram::Path(cli.into());
    // starts the CLI and negotiates the protocol
    let client = Client::start(options).await.unwrap_or_else(|e| fail("start", e));
    println!("started");
    println!("ping: {:?}", client.ping(Some("repro")).await.unwrap_or_else(|e| fail("ping", e)));
    println!("status: {:?}", client.get_status().await.unwrap_or_else(|e| fail("get_status", e)));
    client.stop().await.unwrap_or_else(|e| fail("stop", e));
    println!("stopped");
}
"""

_JAVA = """\
import com.github.copilot.sdk.CopilotClient;
import com.github.copilot.sdk.json.CopilotClientOptions;

public class Repro {
    public static void main(String[] args) throws Exception {
        CopilotClient client = new CopilotClient(new CopilotClientOptions()
                .setCliPath(args[0]).setUseStdio(true).setAutoStart(false).setAutoRestart(false));
        client.start().get(); // starts the CLI and negotiates the protocol
        System.out.println("started");
        System.out.println("ping: " + client.ping("repro").get());
        System.out.println("status: " + client.getStatus().get().getVersion());
        client.stop().get();
        System.out.println("stopped");
        System.exit(0);
    }
}
"""


# Go has no duck typing: the program is written for the signatures the agent recorded.
_GO = """\
package main

import (
{imports}	"fmt"
	"os"
	"reflect"

	copilot "github.com/github/copilot-sdk/go"
)

// set sets a bool option whichever type this release gives it (bool or *bool).
func set(opts *copilot.ClientOptions, name string, value bool) {{
	f := reflect.ValueOf(opts).Elem().FieldByName(name)
	if f.Kind() == reflect.Pointer {{
		f.Set(reflect.ValueOf(&value))
	}} else {{
		f.SetBool(value)
	}}
}}

func main() {{
{ctx}	opts := {options}
{stdio}	client := copilot.NewClient(opts)
	fail := func(step string, err error) {{
		fmt.Printf("%s failed: %T: %v\\n", step, err, err)
		client.Stop()
		os.Exit(1)
	}}
	if err := client.Start({c}); err != nil {{ // starts the CLI and negotiates the protocol
		fail("start", err)
	}}
	fmt.Println("started")
	pong, err := client.Ping({c_}"repro")
	if err != nil {{
		fail("ping", err)
	}}
	fmt.Printf("ping: %+v\\n", pong)
{status}	fmt.Println("stop:", client.Stop())
	fmt.Println("stopped")
}}
"""


def go_program(api: Mapping[str, Any]) -> str | None:
    """``main.go`` for the recorded API: ``None`` when the agent recorded none (a release that
    never built)."""
    methods = api.get("methods")
    if not isinstance(methods, dict) or "Start" not in methods:
        return None
    ctx = "context.Context" in str(methods["Start"])
    c = "ctx" if ctx else ""
    status = ""
    if "GetStatus" in methods:
        status = (f"\tstatus, err := client.GetStatus({c})\n\tif err != nil {{\n\t\tfail(\"status\", err)\n\t}}\n"
                  "\tfmt.Printf(\"status: %+v\\n\", status)\n")
    if api.get("constructor") == "connection":
        options, stdio = "&copilot.ClientOptions{Connection: copilot.StdioConnection{Path: os.Args[1]}}", ""
    else:
        options, stdio = "&copilot.ClientOptions{CLIPath: os.Args[1]}", '\tset(opts, "UseStdio", true)\n'
    return _GO.format(imports='\t"context"\n' if ctx else "", ctx="\tctx := context.Background()\n" if ctx else "",
                      options=options, stdio=stdio, c=c, c_=f"{c}, " if ctx else "", status=status)
