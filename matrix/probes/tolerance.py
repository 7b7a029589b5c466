"""The tolerance probe for github-copilot-sdk: one mutation rule through the shim."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from .. import proc
from ..classify import Verdict
from ..envs import GoAgent, UvVenv
from ..outcomes import Outcome
from ..products.copilot_cli import CliInstall, Runtime
from ..products.node_sdk import NodeSdk
from ..report_schema import ErrorInfo
from ..storage import ensure_room
from ..store import Row
from ..tolerance import classify_tolerance, injected_answer, shim_applied, transcript_cut
from .agent_run import AgentCommand, node_agent, run_agent
from .handshake import HandshakeCell, build_row, compile_error_row

__all__ = ["run_go_tolerance", "run_node_tolerance", "run_python_tolerance", "transcript_path"]


def transcript_path(results: Path, family: str, sdk: str, cli: str, rule: str) -> Path:
    # Absolute: the shim that writes it runs with the sandbox as its working directory.
    return results.absolute() / "transcripts" / family / f"sdk-{sdk}" / f"cli-{cli}" / f"{rule}.jsonl"


def run_python_tolerance(cell: HandshakeCell, rule: str, venv: UvVenv, cli: CliInstall, runtime: Runtime,
                         results: Path, reaper: proc.Reaper | None = None) -> Row:
    return _run_tolerance("copilot_python_tolerance.py", cell.python_agent(venv), {}, cell, rule, cli, runtime, results,
                          reaper)


def run_node_tolerance(cell: HandshakeCell, rule: str, sdk: NodeSdk, cli: CliInstall, runtime: Runtime,
                       results: Path, reaper: proc.Reaper | None = None) -> Row:
    return _run_tolerance("copilot_node_tolerance.mjs", node_agent(sdk.runtime.node),
                          {"sdk_dir": str(sdk.package_dir), "log_level": "error"}, cell, rule, cli, runtime, results,
                          reaper)


def run_go_tolerance(cell: HandshakeCell, rule: str, agent: GoAgent, cli: CliInstall, runtime: Runtime,
                     results: Path, reaper: proc.Reaper | None = None) -> Row:
    if agent.build_errors is not None:
        return compile_error_row(cell, "tolerance", rule, agent, cli, runtime)
    return _run_tolerance("", AgentCommand((str(agent.binary),)), {"sdk_dir": agent.module_dir, "log_level": "error"},
                          cell, rule, cli, runtime, results, reaper)


def _run_tolerance(agent: str, command: AgentCommand, agent_cfg: dict[str, str], cell: HandshakeCell, rule: str,
                   cli: CliInstall, runtime: Runtime, results: Path, reaper: proc.Reaper | None) -> Row:
    transcript = transcript_path(results, cell.family, cell.sdk_version, cell.cli_version, rule)
    cfg = {"step_timeout": cell.call_timeout, "rule": rule, "event_wait": 6, **agent_cfg}
    run = run_agent(agent, cfg, command, cli, runtime, cell.probe_timeout, cell.grace, cell.scratch, reaper,
                    shim_rule=rule, use_shim=True, transcript=transcript)
    verdict = classify_tolerance(run.report, run.result, rule, shim_applied(transcript), injected_answer(transcript))
    if transcript_cut(transcript):
        ensure_room(transcript.parent)  # a full disk ends the run here; otherwise the cell is ours to redo
        verdict = Verdict(Outcome.HARNESS_ERROR, ErrorInfo(
            "TranscriptCut", "the shim's transcript was cut short (it could not be written); re-measured next run"))
    observed = run.report.extra.get("observed") if run.report else None
    return build_row(replace(cell, transcript=transcript), "tolerance", rule, run, verdict, runtime, cli,
                     extra={"transcript": str(transcript.relative_to(results.absolute())), "observed": observed,
                            "loop_errors": (run.report.extra.get("loop_errors") or [])[:10] if run.report else []})
