"""The session probe's verdict: what an application got from one real conversation.

Pure over the agent's report (each step, each turn, every event it was handed, what its
permission handler was asked and its tool ran), the shim's transcript (every event the CLI
sent), the model stand-in's log (what reached the model) and the files the cell's work
directory holds after it. Whole truth: a turn that never reaches idle is a hang; an exception
in the application is a crash; a scripted turn that does not do what it should (the tool's
result never seen by the model, an approval or a denial that did not hold) degrades the cell;
an event the CLI sent that never reached the application is lost (unless it was sent only after
the application asked to close the session: then it is said, not lost); an event delivered as
the SDK's unknown is surfaced; what stop() left running degrades it too."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from matrix.execute.proc import Result
from matrix.families.copilot.session.model_standin import TURNS, file_name
from matrix.model import Outcome
from matrix.probes.report import AgentReport, ErrorInfo
from matrix.probes.verdict import LEFT_RUNNING, Verdict, after_stop, unmeasured

__all__ = ["AFTER_CLOSE", "CLOSING", "DELIVERIES", "MISSED", "NO_ROUTE", "TYPED", "UNKNOWN", "Evidence", "Facts",
           "classify_session", "cli_events", "model_calls", "route_of"]

NO_ROUTE = "NoLocalRoute"  # the error type of a CLI release with no way to keep its model call on 127.0.0.1
PROVIDER, API_URL = "provider", "api-url"  # how the model call reached the stand-in
# How an event type the CLI sent reached the application: as a type its SDK knows, as the
# SDK's unknown (readable raw), never although sent while the session was open, or never but
# only sent after the application asked to close the session (``AFTER_CLOSE``: whether such an
# event is handed over is a race between the CLI's last events and the SDK's unsubscribing, and
# an application that closed its session has stopped listening; measured and said, not lost).
TYPED, UNKNOWN, AFTER_CLOSE, MISSED = "typed", "unknown", "missed after close", "missed"
DELIVERIES = (TYPED, UNKNOWN, AFTER_CLOSE, MISSED)
# The requests with which an SDK closes a session (``destroy()``/``disconnect()``, ``detach``).
CLOSING = frozenset({"session.destroy", "session.detach"})
# Events the CLI sends an SDK for its own bookkeeping that an application is not handed (the
# SDK answers them itself): not lost when the application never sees them.
_NOT_FOR_THE_APPLICATION: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Evidence:
    """What the harness saw besides the agent's report."""

    sent: list[str] = field(default_factory=list)  # event types the CLI sent, in order (the transcript)
    calls: list[dict[str, Any]] = field(default_factory=list)  # the model stand-in's log of completions
    written: frozenset[str] = frozenset()  # file names in the cell's work directory afterwards
    after_close: list[str] = field(default_factory=list)  # of ``sent``, those sent after the first close request


@dataclass(frozen=True)
class Facts:
    """The verdict's reasons, kept on the row."""

    route: str | None = None  # PROVIDER, API_URL, or None: no model call reached the stand-in
    turns: list[dict[str, Any]] = field(default_factory=list)  # each turn: name, ok, seconds, held, why
    events: dict[str, str] = field(default_factory=dict)  # event type -> typed | unknown | lost
    asked: list[str] = field(default_factory=list)  # the permission kinds the application was asked
    tool_ran: bool | None = None
    model_saw_tool: bool | None = None
    idle_seconds: float | None = None  # the turns' seconds, summed


def _entries(path: Path) -> list[dict[str, Any]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # a line cut short by a kill
        if isinstance(entry, dict):
            out.append(entry)
    return out


def cli_events(transcript: Path) -> tuple[list[str], list[str]]:
    """Every session event type the CLI sent the SDK, in order (``session.event`` notifications),
    and those of them it sent after the SDK's first request to close the session (``CLOSING``)."""
    sent: list[str] = []
    after: list[str] = []
    closing = False
    for entry in _entries(transcript):
        msg = entry.get("msg")
        if not isinstance(msg, dict):
            continue
        if entry.get("dir") == "sdk->cli" and msg.get("method") in CLOSING:
            closing = True
        if entry.get("dir") == "cli->sdk" and msg.get("method") == "session.event":
            event = (msg.get("params") or {}).get("event") or {}
            if isinstance(event, dict) and isinstance(event.get("type"), str):
                sent.append(event["type"])
                if closing:
                    after.append(event["type"])
    return sent, after


def model_calls(log: Path) -> list[dict[str, Any]]:
    """The completions the model stand-in answered (its other requests aside)."""
    return [e for e in _entries(log) if str(e.get("path", "")).endswith("/chat/completions")]


def route_of(calls: list[dict[str, Any]]) -> str | None:
    """How the model calls reached the stand-in: through the session's provider (``/v1``, the
    base URL the agent gives it) or the CLI's API URL; None when none did."""
    if not calls:
        return None
    return PROVIDER if any(str(c.get("path", "")).startswith("/v1/") for c in calls) else API_URL


def _failed(report: AgentReport) -> tuple[str, ErrorInfo] | None:
    for step in report.steps:
        if not step.ok and not step.skipped and step.name != "stop":
            return step.name, step.error or ErrorInfo("StepFailed", f"{step.name} failed")
    return None


def _turn_checks(observed: dict[str, Any], evidence: Evidence, nonces: dict[str, str]) -> list[dict[str, Any]]:
    """Each scripted turn the agent ran, and whether it did what its script says."""
    seen_by_model = " ".join(json.dumps(c.get("messages")) for c in evidence.calls)
    out = []
    for t in observed.get("turns") or []:
        name, nonce = str(t.get("name")), nonces.get(str(t.get("name")), "")
        held, why = True, ""
        if not t.get("ok"):
            held, why = False, "the turn failed"
        elif name == "reply" and f"{name} {nonce}" not in str(t.get("reply") or ""):
            held, why = False, "the application got no reply, or not the model's"
        elif name == "tool":
            if nonce not in (t.get("tool_ran") or []):
                held, why = False, "the application's tool never ran"
            elif nonce.upper() not in seen_by_model:
                held, why = False, "the tool ran, but the model never saw its result"
        elif name == "approved" and file_name(nonce) not in evidence.written:
            held, why = False, "the application approved the tool, but it never ran"
        elif name == "denied" and file_name(nonce) in evidence.written:
            held, why = False, "the application denied the tool, and it ran all the same"
        out.append({"name": name, "ok": bool(t.get("ok")), "seconds": t.get("seconds"), "held": held, "why": why})
    return out


def _delivery(observed: dict[str, Any], sent: list[str], after_close: list[str] | None = None) -> dict[str, str]:
    """For each event type the CLI sent: typed (the application got it as a known type),
    unknown (as the SDK's unknown), missed after close (the copies it did not get were all
    sent after the application asked to close the session), or missed."""
    late = Counter(after_close or [])
    live = [e for e in observed.get("live") or [] if isinstance(e, dict)]
    typed = Counter(str(e.get("type")) for e in live if not e.get("unknown"))
    unknown = Counter(str(e.get("raw_type") or "") for e in live if e.get("unknown"))
    blind = sum(1 for e in live if e.get("unknown") and not e.get("raw_type"))  # unknowns the SDK kept no type of
    out: dict[str, str] = {}
    for kind, n in Counter(sent).items():
        if kind in _NOT_FOR_THE_APPLICATION:
            continue
        if typed[kind] >= n:
            out[kind] = TYPED
        elif typed[kind] + unknown[kind] >= n:
            out[kind] = UNKNOWN
        elif blind >= n - typed[kind] - unknown[kind]:
            blind -= n - typed[kind] - unknown[kind]
            out[kind] = UNKNOWN
        elif typed[kind] + unknown[kind] + blind >= n - late[kind]:
            blind -= max(0, n - late[kind] - typed[kind] - unknown[kind])  # only those sent while open
            out[kind] = AFTER_CLOSE
        else:
            out[kind] = MISSED
    return out


# What a user meets, least to most: a session cell's verdict is the worst of what it saw.
_SEVERITY = {Outcome.COMPATIBLE: 0, Outcome.SURFACED: 1, Outcome.DEGRADED: 2, Outcome.LOST: 3, Outcome.CRASHED: 4,
             Outcome.HANG: 5, Outcome.HARNESS_ERROR: 6}


def _worst(verdicts: list[Verdict]) -> Verdict:
    return max(verdicts, key=lambda v: _SEVERITY.get(v.outcome, 0))


def classify_session(report: AgentReport | None, res: Result, evidence: Evidence,
                     nonces: dict[str, str]) -> tuple[Verdict, Facts]:
    """The session cell's verdict and its reasons (``nonces``: each scripted turn's)."""
    route = route_of(evidence.calls)
    none = unmeasured(report, res)
    if none is not None or report is None:
        return none or Verdict(Outcome.HARNESS_ERROR), Facts(route=route)
    observed = report.extra.get("observed") or {}
    turns = _turn_checks(observed, evidence, nonces)
    events = _delivery(observed, evidence.sent, evidence.after_close)
    asked = [str(a.get("kind")) for t in observed.get("turns") or [] for a in t.get("asked") or []
             if isinstance(a, dict)]
    tool = next((t for t in observed.get("turns") or [] if t.get("name") == "tool"), None)
    facts = Facts(route=route, turns=turns, events=events, asked=asked,
                  tool_ran=bool(tool.get("tool_ran")) if tool else None,
                  model_saw_tool=(nonces.get("tool", "").upper() in json.dumps([c.get("messages") for c in
                                                                              evidence.calls])) if tool else None,
                  idle_seconds=round(sum(float(t.get("seconds") or 0) for t in turns), 3) if turns else None)
    verdicts = [Verdict(Outcome.COMPATIBLE)]
    failed = _failed(report)
    if failed is not None:
        name, error = failed
        if name.startswith("turn:") and route is None:
            return Verdict(Outcome.NOT_APPLICABLE, ErrorInfo(
                NO_ROUTE, "no model call reached the stand-in on 127.0.0.1 (neither through the session's provider "
                          f"nor the CLI's API URL); the turn: {error.message[:500]}")), facts
        what = name.removeprefix("turn:")
        if error.timeout:
            verdicts.append(Verdict(Outcome.HANG, ErrorInfo(error.type, f"{what}: {error.message}", error.module,
                                                            error.traceback, True), {"step": name}))
        else:
            verdicts.append(Verdict(Outcome.CRASHED, ErrorInfo(error.type, f"{what}: {error.message}", error.module,
                                                               error.traceback), {"step": name}))
    wrong = [t for t in turns if t["ok"] and not t["held"]]
    if wrong:
        verdicts.append(Verdict(Outcome.DEGRADED, ErrorInfo(
            "TurnDidNotHold", "; ".join(f"turn {t['name']}: {t['why']}" for t in wrong)), {"step": "turns"}))
    missing = [name for name in TURNS if name not in {t["name"] for t in turns}]
    if failed is None and missing:
        verdicts.append(Verdict(Outcome.HARNESS_ERROR, ErrorInfo("TurnsMissing", f"no report of {missing}")))
    lost = sorted(k for k, v in events.items() if v == MISSED)
    if lost:
        verdicts.append(Verdict(Outcome.LOST, ErrorInfo(
            "EventLost", f"the CLI sent {', '.join(lost)}, which never reached the application")))
    elif any(v == UNKNOWN for v in events.values()):
        kinds = sorted(k for k, v in events.items() if v == UNKNOWN)
        verdicts.append(Verdict(Outcome.SURFACED, ErrorInfo(
            "UnknownEvent", f"delivered as the SDK's unknown event: {', '.join(kinds)}")))
    gone = after_stop(report)
    leaked = (gone or {}).get("leaked") or []
    if leaked:
        verdicts.append(Verdict(Outcome.DEGRADED, ErrorInfo(LEFT_RUNNING, f"left {leaked[0]} running after stop()"),
                                {"phase": "after stop"}))
    return _worst(verdicts), facts
