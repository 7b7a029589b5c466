"""The tolerance probe for github-copilot-sdk: one mutation rule through the shim."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from .. import proc
from ..envs import UvVenv
from ..products.copilot_cli import CliInstall, Runtime
from ..store import Row
from ..tolerance import classify_tolerance, shim_applied
from .agent_run import python_agent, run_agent
from .handshake import HandshakeCell, build_row

__all__ = ["run_python_tolerance", "transcript_path"]


def transcript_path(results: Path, family: str, sdk: str, cli: str, rule: str) -> Path:
    # Absolute: the shim that writes it runs with the sandbox as its working directory.
    return results.absolute() / "transcripts" / family / f"sdk-{sdk}" / f"cli-{cli}" / f"{rule}.jsonl"


def run_python_tolerance(cell: HandshakeCell, rule: str, venv: UvVenv, cli: CliInstall, runtime: Runtime,
                         results: Path, reaper: proc.Reaper | None = None) -> Row:
    transcript = transcript_path(results, cell.family, cell.sdk_version, cell.cli_version, rule)
    cfg = {"step_timeout": cell.call_timeout, "rule": rule, "event_wait": 6}
    run = run_agent("copilot_python_tolerance.py", cfg, python_agent(venv), cli, runtime, cell.probe_timeout,
                    cell.grace, cell.scratch, reaper, shim_rule=rule, use_shim=True, transcript=transcript)
    verdict = classify_tolerance(run.report, run.result, rule, shim_applied(transcript))
    observed = run.report.extra.get("observed") if run.report else None
    return build_row(replace(cell, transcript=transcript), "tolerance", rule, run, verdict, runtime, cli,
                     extra={"transcript": str(transcript.relative_to(results.absolute())), "observed": observed,
                            "loop_errors": (run.report.extra.get("loop_errors") or [])[:10] if run.report else []})
