"""@github/copilot-sdk (npm): its handshake and tolerance agents, run with the Node runtime
that imports the release."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from matrix.execute import proc
from matrix.families.copilot.cli import CliInstall, Runtime
from matrix.families.copilot.handshake import Attempt, HandshakeCell, measure_handshake
from matrix.families.copilot.node.sdk import AGENTS, NodeSdk, agent_command
from matrix.families.copilot.session.probe import run_session
from matrix.families.copilot.tolerance import run_batch, run_tolerance
from matrix.model import Row

__all__ = ["run_node_handshake", "run_node_session", "run_node_tolerance", "run_node_tolerance_batch"]


def run_node_handshake(cell: HandshakeCell, sdk: NodeSdk, cli: CliInstall, runtime: Runtime,
                       reaper: proc.Reaper | None = None) -> Row:
    def once() -> Attempt:
        run = cell.run_agent(AGENTS / "copilot_node_handshake.mjs", agent_command(sdk, cell.ahead), cli, runtime,
                             reaper, sdk_dir=str(sdk.package_dir))
        extra: dict[str, Any] = {"sdk_runtime": sdk.runtime.label, "sdk_import_failures": sdk.import_failures}
        if run.report:
            extra.update(spawned=run.report.launched[:5], uncaught=(run.report.extra.get("uncaught") or [])[:5],
                         ping_protocol=run.report.extra.get("ping_protocol"))
        return Attempt(run, extra)

    return measure_handshake(cell, once, runtime, cli)


def run_node_tolerance(cell: HandshakeCell, rule: str, sdk: NodeSdk, cli: CliInstall, runtime: Runtime,
                       results: Path, reaper: proc.Reaper | None = None) -> Row:
    return run_tolerance(AGENTS / "copilot_node_tolerance.mjs", agent_command(sdk, cell.ahead),
                         {"sdk_dir": str(sdk.package_dir), "log_level": "error"}, cell, rule, cli, runtime, results,
                         reaper)


def run_node_tolerance_batch(cell: HandshakeCell, rules: Sequence[str], sdk: NodeSdk, cli: CliInstall,
                             runtime: Runtime, results: Path, reaper: proc.Reaper | None = None) -> dict[str, Row]:
    return run_batch(AGENTS / "copilot_node_tolerance.mjs", agent_command(sdk, cell.ahead),
                     {"sdk_dir": str(sdk.package_dir), "log_level": "error"}, cell, rules, cli, runtime, results,
                     reaper)


def run_node_session(cell: HandshakeCell, sdk: NodeSdk, cli: CliInstall, runtime: Runtime, results: Path,
                     reaper: proc.Reaper | None = None) -> Row:
    return run_session(AGENTS / "copilot_node_session.mjs", agent_command(sdk, cell.ahead),
                       {"sdk_dir": str(sdk.package_dir), "log_level": "error"}, cell, cli, runtime, results, reaper)
