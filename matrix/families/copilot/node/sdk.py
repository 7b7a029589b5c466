"""An npm SDK side (@github/copilot-sdk): where the installed package is, and which Node
runtime imports it.

Like the CLI's, the runtime is measured, not read from ``engines`` (0.1.23 declares Node 24
and runs on 20): the agent imports the package with each runtime we can provide, oldest
first, and the first that imports it is recorded in the prefix. A release no runtime can
import keeps the oldest, and its cells report the import error."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from matrix.ecosystems.npm_env import NpmPrefix
from matrix.execute import proc
from matrix.execute.aheadstart import AheadStarts
from matrix.execute.sandbox import sandbox
from matrix.families.copilot.agent_run import AgentCommand, node_agent
from matrix.families.copilot.cli import Runtime, RuntimeSource, first_runtime
from matrix.probes.report import parse_report

__all__ = ["NodeSdk", "agent_command", "prepare_node_sdk"]

RUNTIME_FILE = ".compat-matrix-sdk-runtime.json"
AGENTS = Path(__file__).parent / "agents"
AGENT = AGENTS / "copilot_node_handshake.mjs"
PRELOAD = AGENTS / "copilot_node_preload.mjs"


@dataclass(frozen=True)
class NodeSdk:
    version: str
    package_dir: Path
    runtime: Runtime
    import_failures: dict[str, str]  # runtime label -> why it could not import the package


def _imports(rt: Runtime, package_dir: Path, scratch: Path, timeout: float) -> str | None:
    """None when ``rt`` imports the package, else why not."""
    cfg = json.dumps({"sdk_dir": str(package_dir), "import_only": True})
    with sandbox(scratch, path_dirs=[rt.node.parent]) as box:
        res = proc.run(proc.Request((str(rt.node), str(AGENT), cfg), box.env, box.root, timeout=timeout))
    report = parse_report(res.stdout)
    step = report.step("import") if report else None
    if step is not None and step.ok:
        return None
    if step is not None and step.error:
        return f"{step.error.type}: {step.error.message}"[:600]
    return ("timed out" if res.timed_out else f"exit {res.returncode}: ") + res.stderr[-600:]


def prepare_node_sdk(prefix: NpmPrefix, runtimes: list[RuntimeSource], scratch: Path, timeout: float) -> NodeSdk:
    def imports(rt: Runtime) -> tuple[str | None, str]:
        return _imports(rt, prefix.package_dir, scratch, timeout), ""

    chosen, failures, _ = first_runtime(prefix.location / RUNTIME_FILE, runtimes, imports)
    return NodeSdk(prefix.version, prefix.package_dir, chosen or runtimes[0].get(), failures)


def agent_command(sdk: NodeSdk, ahead: AheadStarts | None) -> AgentCommand:
    """How this release's agents run: its runtime, each started ahead of its cell with the
    release imported (``copilot_node_preload.mjs``)."""
    return node_agent(sdk.runtime.node, ahead, (str(PRELOAD), str(sdk.package_dir)), f"npm {sdk.version}")
