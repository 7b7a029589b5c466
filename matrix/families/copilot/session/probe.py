"""The session probe of a Copilot SDK release against a CLI release: the scripted turns through
the SDK's own session API, the CLI's model a stand-in of ours on 127.0.0.1, the JSON-RPC
between them relayed (unchanged) through the shim so every event the CLI sent is on record."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

from matrix.execute import proc
from matrix.families.copilot.agent_run import AgentCommand, run_agent
from matrix.families.copilot.cli import CliInstall, Runtime
from matrix.families.copilot.handshake import HandshakeCell, build_row
from matrix.families.copilot.payload import SESSION
from matrix.families.copilot.session.model_standin import MODEL, TOOL, TURNS, prompt, running
from matrix.families.copilot.session.verdict import Evidence, classify_session, cli_events, model_calls
from matrix.model import GOOD_OUTCOMES, Row

__all__ = ["TURN_TIMEOUT", "run_session", "standin_log_path"]

# Seconds a scripted turn may take to reach idle: the model answers at once, so a turn that
# has not settled by then is not going to (the SDKs' own default wait is 60 s).
TURN_TIMEOUT = 30.0


def standin_log_path(results: Path, family: str, sdk: str, cli: str) -> Path:
    # Absolute: the stand-in writes it from the harness, whatever the working directory.
    return results.absolute() / "standin" / family / f"sdk-{sdk}" / f"cli-{cli}" / f"{SESSION}.jsonl"


def _transcript_path(results: Path, family: str, sdk: str, cli: str) -> Path:
    return results.absolute() / "transcripts" / family / f"sdk-{sdk}" / f"cli-{cli}" / f"{SESSION}.jsonl"


def nonces_of(family: str, sdk: str, cli: str) -> dict[str, str]:
    """Each turn's token: the same for the same cell on every run, so its evidence compares."""
    return {name: hashlib.sha256(f"{family}:{sdk}:{cli}:{name}".encode()).hexdigest()[:10] for name in TURNS}


def run_session(agent: Path | None, command: AgentCommand, agent_cfg: dict[str, object], cell: HandshakeCell,
                cli: CliInstall, runtime: Runtime, results: Path, reaper: proc.Reaper | None) -> Row:
    log = standin_log_path(results, cell.family, cell.sdk_version, cell.cli_version)
    transcript = _transcript_path(results, cell.family, cell.sdk_version, cell.cli_version)
    log.parent.mkdir(parents=True, exist_ok=True)
    log.unlink(missing_ok=True)
    nonces = nonces_of(cell.family, cell.sdk_version, cell.cli_version)
    with running(log) as url:
        cfg = {"step_timeout": cell.call_timeout, "turn_timeout": TURN_TIMEOUT, "leak": cell.leak, "model_url": url,
               "model": MODEL, "tool": TOOL, "turns": [[name, prompt(name, nonces[name])] for name in TURNS],
               **agent_cfg}
        # The CLI's API URL points at the stand-in too: a release that ignores the session's
        # provider still reaches it (the log says which way each call came).
        run = run_agent(agent, cfg, command, cli, runtime, cell.probe_timeout + len(TURNS) * TURN_TIMEOUT, cell.grace,
                        cell.scratch, reaper, use_shim=True, transcript=transcript,
                        extra_env={"COPILOT_API_URL": url}, waiting=cell.waiting)
    sent, after_close = cli_events(transcript)
    evidence = Evidence(sent, model_calls(log), frozenset(run.work_files), after_close)
    verdict, facts = classify_session(run.report, run.result, evidence, nonces)
    observed = run.report.extra.get("observed") if run.report else None
    # A session's transcript is ~80 KB compressed against a recent CLI: the dataset keeps it
    # where the session did not work (it is the evidence of what went wrong); the row's facts
    # say the rest, and the local results keep every transcript.
    kept = None if verdict.outcome in GOOD_OUTCOMES else str(transcript.relative_to(results.absolute()))
    row = build_row(replace(cell, transcript=transcript), SESSION, "", run, verdict, runtime, cli,
                    extra={"transcript": kept,
                           "standin_log": str(log.relative_to(results.absolute())), "observed": observed,
                           "work_files": run.work_files[:20],
                           "loop_errors": (run.report.extra.get("loop_errors") or [])[:10] if run.report else []})
    return row.updated(route=facts.route, turns=facts.turns, events=facts.events, asked=facts.asked,
                       tool_ran=facts.tool_ran, model_saw_tool=facts.model_saw_tool, idle_seconds=facts.idle_seconds)
