"""The tolerance probe for github-copilot-sdk: mutation rules through the shim, each alone or
every rule of one kind in one relay (a batch), whose clean passes stand and whose other
verdicts are measured again alone."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from matrix.execute import proc
from matrix.execute.storage import ensure_room, writing
from matrix.families.base import Context
from matrix.families.copilot.agent_run import AgentCommand, AgentRun, run_agent
from matrix.families.copilot.cli import CliInstall, Runtime
from matrix.families.copilot.handshake import HandshakeCell, build_row
from matrix.families.copilot.shim import CONTROL_DESCRIPTIONS, RULES, control_of
from matrix.families.copilot.tolerance_verdict import (
    classify_control,
    classify_tolerance,
    injected_answer,
    shim_applied,
    transcript_cut,
)
from matrix.model import Cell, Outcome, Row
from matrix.probes.report import AgentReport, ErrorInfo, Step
from matrix.probes.verdict import Verdict

__all__ = ["BATCH_STANDS", "batch_of", "measure_rule", "run_batch", "run_tolerance", "transcript_path"]

# The verdicts a batch may give: a clean pass. Anything else is measured again alone, so that a
# rule's failure is always what an isolated run gives, never another rule's doing.
# A not-applicable verdict stands too: the CLI sent nothing the rule mutates, or the release has
# no such API, which no other rule of the batch changes.
BATCH_STANDS = (Outcome.IGNORED, Outcome.SURFACED, Outcome.NOT_APPLICABLE)
_STEPS = TypeAdapter(tuple[Step, ...])


def transcript_path(results: Path, family: str, sdk: str, cli: str, rule: str) -> Path:
    # Absolute: the shim that writes it runs with the sandbox as its working directory.
    return results.absolute() / "transcripts" / family / f"sdk-{sdk}" / f"cli-{cli}" / f"{rule}.jsonl"


def batch_of(rule: str) -> tuple[str, ...]:
    """The rules measured in one relay with ``rule``: every rule judged against its control."""
    control = control_of(rule)
    return tuple(r for r in RULES if control_of(r) == control)


def _judge(run: AgentRun, rule: str, transcript: Path, cell: HandshakeCell, runtime: Runtime, cli: CliInstall,
           results: Path, extra: dict[str, Any] | None = None) -> Row:
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
                            "loop_errors": (run.report.extra.get("loop_errors") or [])[:10] if run.report else [],
                            **(extra or {})})


def run_tolerance(agent: Path | None, command: AgentCommand, agent_cfg: dict[str, str], cell: HandshakeCell, rule: str,
                  cli: CliInstall, runtime: Runtime, results: Path, reaper: proc.Reaper | None) -> Row:
    """One rule (or control) alone: its own client, its own CLI."""
    transcript = transcript_path(results, cell.family, cell.sdk_version, cell.cli_version, rule)
    cfg = {"step_timeout": cell.call_timeout, "rule": rule, "event_wait": 6, **agent_cfg}
    run = run_agent(agent, cfg, command, cli, runtime, cell.probe_timeout, cell.grace, cell.scratch, reaper,
                    shim_rule=rule, use_shim=True, transcript=transcript)
    return _judge(run, rule, transcript, cell, runtime, cli, results)


def _rule_report(report: AgentReport, rule: str) -> AgentReport | None:
    """What the application did for ``rule`` in a batch: the client's start and stop, and the
    steps, observations and loop errors of its own session (connection rules share the whole
    run). An agent dispatches a session's events in order, so an error the mutated event causes
    comes before the canary behind it, inside the rule's own steps."""
    own = (report.extra.get("batch") or {}).get(rule) if isinstance(report.extra.get("batch"), dict) else None
    if not RULES[rule].needs_session or report.extra.get("not_applicable"):
        return report
    if not isinstance(own, dict):
        return None  # the agent never came to this rule: no verdict from the batch
    try:
        steps = _STEPS.validate_python([{k: v for k, v in s.items() if v is not None} for s in own.get("steps", [])])
    except (ValidationError, AttributeError, TypeError):
        return None
    # The client's own steps (import, start... and stop) are those before the first session's
    # and after the last one's.
    segments = report.extra["batch"].values()
    first = next((i for i, s in enumerate(report.steps) if s.name == "create_session"), len(report.steps))
    inside = sum(len(seg.get("steps") or []) for seg in segments if isinstance(seg, dict))
    before, after = report.steps[:first], report.steps[first + inside:]
    return replace(report, steps=(*before, *steps, *after),
                   extra={**report.extra, "observed": own.get("observed") or {}, "batch": None,
                          "loop_errors": own.get("loop_errors") or []})


def _split(batch: Path, own: Path, rule: str) -> None:
    """A rule's transcript out of the batch's: every entry of the relay but those of the other
    rules' sessions and mutations."""
    with writing(own):
        own.unlink(missing_ok=True)
        try:
            lines = batch.read_text().splitlines(keepends=True)
        except OSError:
            return
        kept = []
        for line in lines:
            try:
                tag = json.loads(line).get("rule")
            except ValueError:
                tag = None  # a line cut short: kept as it is, so that the cut shows
            if tag in (None, rule):
                kept.append(line)
        own.write_text("".join(kept))


def run_batch(agent: Path | None, command: AgentCommand, agent_cfg: dict[str, str], cell: HandshakeCell,
              rules: Sequence[str], cli: CliInstall, runtime: Runtime, results: Path,
              reaper: proc.Reaper | None) -> dict[str, Row]:
    """``rules`` (of one kind) through one relay: the rows whose verdict stands (a clean pass,
    every step of the client and of the rule's own session worked, and the batch reported
    nothing it cannot attribute: no loop error or warning anywhere); every other rule is
    absent, to be measured alone."""
    name = f"batch-{control_of(rules[0])}"
    transcript = transcript_path(results, cell.family, cell.sdk_version, cell.cli_version, name)
    cfg = {"step_timeout": cell.call_timeout, "rules": list(rules), "event_wait": 6, **agent_cfg}
    run = run_agent(agent, cfg, command, cli, runtime, cell.probe_timeout, cell.grace, cell.scratch, reaper,
                    shim_rule=list(rules), use_shim=True, transcript=transcript)
    report = run.report
    segments = report.extra.get("batch") if report is not None else None
    attributed = sum(len(seg.get("loop_errors") or []) for seg in segments.values()
                     if isinstance(seg, dict)) if isinstance(segments, dict) else 0
    if (report is None or run.result.timed_out or report.warnings
            or len(report.extra.get("loop_errors") or []) > attributed):
        # Something went wrong that no one rule's steps own: the batch says nothing.
        transcript.unlink(missing_ok=True)
        return {}
    rows: dict[str, Row] = {}
    batch_seconds = round(run.result.elapsed, 3)
    for rule in rules:
        own = _rule_report(report, rule)
        if own is None or not all(s.ok for s in own.steps):
            continue
        path = transcript_path(results, cell.family, cell.sdk_version, cell.cli_version, rule)
        _split(transcript, path, rule)
        row = _judge(replace(run, report=own), rule, path, cell, runtime, cli, results,
                     extra={"batch": [r for r in rules if r != rule], "batch_seconds": batch_seconds})
        # Its share of the one run: the timings add up to what the batch cost, not to n times it.
        # Taken from the stored figure, so that a share read back is that figure over n.
        row = row.model_copy(update={"seconds": round(batch_seconds / len(rules), 3)})
        # A session rule the shim never applied had no session of its own: no verdict from the batch.
        unassigned = (row.outcome == Outcome.NOT_APPLICABLE and RULES[rule].needs_session
                      and not report.extra.get("not_applicable"))
        if row.outcome in BATCH_STANDS and not unassigned:
            rows[rule] = row
    transcript.unlink(missing_ok=True)
    return rows


def measure_rule(ctx: Context, cell: Cell, hs: HandshakeCell, alone: Callable[[str], Row],
                 batch: Callable[[Sequence[str]], dict[str, Row]]) -> Row:
    """A rule's row: from the batch it was planned in (``cell.together``: run once per pair and
    run, whichever of its cells asks first) where its verdict stands there, else measured alone."""
    if not cell.together or cell.mutation not in cell.together:
        return alone(cell.mutation)
    rows = ctx.shared(("tolerance-batch", cell.family, cell.sdk_version, cell.cli_version, cell.together),
                      lambda: batch(cell.together))
    row = rows.get(cell.mutation)
    return row if row is not None else alone(cell.mutation)
