"""The tolerance probe for github-copilot-sdk: one mutation rule through the shim."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from matrix.execute import proc
from matrix.execute.storage import ensure_room
from matrix.families.copilot.agent_run import AgentCommand, run_agent
from matrix.families.copilot.cli import CliInstall, Runtime
from matrix.families.copilot.handshake import HandshakeCell, build_row
from matrix.families.copilot.shim import CONTROL_DESCRIPTIONS
from matrix.families.copilot.tolerance_verdict import (
    classify_control,
    classify_tolerance,
    injected_answer,
    shim_applied,
    transcript_cut,
)
from matrix.model import Outcome, Row
from matrix.probes.report import ErrorInfo
from matrix.probes.verdict import Verdict

__all__ = ["run_tolerance", "transcript_path"]


def transcript_path(results: Path, family: str, sdk: str, cli: str, rule: str) -> Path:
    # Absolute: the shim that writes it runs with the sandbox as its working directory.
    return results.absolute() / "transcripts" / family / f"sdk-{sdk}" / f"cli-{cli}" / f"{rule}.jsonl"


def run_tolerance(agent: Path | None, command: AgentCommand, agent_cfg: dict[str, str], cell: HandshakeCell, rule: str,
                   cli: CliInstall, runtime: Runtime, results: Path, reaper: proc.Reaper | None) -> Row:
    transcript = transcript_path(results, cell.family, cell.sdk_version, cell.cli_version, rule)
    cfg = {"step_timeout": cell.call_timeout, "rule": rule, "event_wait": 6, **agent_cfg}
    run = run_agent(agent, cfg, command, cli, runtime, cell.probe_timeout, cell.grace, cell.scratch, reaper,
                    shim_rule=rule, use_shim=True, transcript=transcript)
    if rule in CONTROL_DESCRIPTIONS:
        verdict = classify_control(run.report, run.result, rule, shim_applied(transcript))
    else:
        verdict = classify_tolerance(run.report, run.result, rule, shim_applied(transcript),
                                     injected_answer(transcript))
    if transcript_cut(transcript):
        ensure_room(transcript.parent)  # a full disk ends the run here; otherwise the cell is ours to redo
        verdict = Verdict(Outcome.HARNESS_ERROR, ErrorInfo(
            "TranscriptCut", "the shim's transcript was cut short (it could not be written); re-measured next run"))
    observed = run.report.extra.get("observed") if run.report else None
    return build_row(replace(cell, transcript=transcript), "tolerance", rule, run, verdict, runtime, cli,
                     extra={"transcript": str(transcript.relative_to(results.absolute())), "observed": observed,
                            "loop_errors": (run.report.extra.get("loop_errors") or [])[:10] if run.report else []})
