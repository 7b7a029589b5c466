"""Cosmo checks: what one cosmo-ai-sdk release did with one scenario, as an outcome.

Pure: the agent's report (what the application was handed), the process result and the
stand-in's log (what went over the wire) in; a ``Verdict`` out."""

from __future__ import annotations

import re
from typing import Any

from matrix.execute.proc import Result
from matrix.families.cosmo.checks import SET_PREFIX, set_target
from matrix.families.cosmo.standin import API, Scenario
from matrix.model import Outcome
from matrix.probes.report import AgentReport, ErrorInfo
from matrix.probes.verdict import Verdict, unmeasured

__all__ = ["UNKNOWN", "judge", "rejections", "session_configs"]

UNKNOWN = "compat-matrix-unknown-value"  # the value no release names (agent and scenarios agree)
_NEW_TYPE = "compat-matrix.new-frame"
_START_PATHS = (f"{API}/realtime/session/ws-start", f"{API}/realtime/session/start", f"{API}/realtime/session")

Entry = dict[str, Any]
_LOCAL_PATH = re.compile(r" \((?:unknown location|/[^)]*)\)")


def session_configs(log: list[Entry]) -> list[Any]:
    return [e.get("body") for e in log if e.get("kind") == "request" and e.get("path") in _START_PATHS]


def rest_requests(log: list[Entry]) -> list[Entry]:
    return [e for e in log if e.get("kind") == "request" and str(e.get("path", "")).startswith(API)]


def rejections(log: list[Entry], kinds: tuple[str, ...] = ("rejected",)) -> list[dict[str, Any]]:
    """Each message the server refused (or, lenient, would have): where, the frame type
    and the keys beyond the published contract."""
    out = []
    for e in log:
        if e.get("kind") in kinds:
            frame = e.get("frame")
            kind = frame.get("type") if isinstance(frame, dict) else None
            out.append({"where": e.get("where"), "message": "session-config" if e.get("where") == "session-start"
                        else kind, "unknown": e.get("unknown") or [], "reason": e.get("reason")})
    return out


def _err(kind: str, message: str) -> ErrorInfo:
    return ErrorInfo(kind, message)


def _is_canary(d: dict[str, Any]) -> bool:
    payload = d.get("payload")
    return d.get("text") == "canary" or (isinstance(payload, dict) and payload.get("text") == "canary")


def _step_error(report: AgentReport, name: str) -> ErrorInfo | None:
    s = report.step(name)
    return s.error if s is not None and not s.ok else None


def _frames(check: str, report: AgentReport, detail: dict[str, Any]) -> Verdict:
    events: list[dict[str, Any]] = report.extra.get("observed", {}).get("events") or []
    failed = _step_error(report, "session")
    if failed is not None and not events:
        return Verdict(Outcome.HARNESS_ERROR, _err("NoSession", f"no session to probe: {failed.type}: "
                                                              f"{failed.message}"), detail)
    if failed is not None:
        return Verdict(Outcome.FATAL, failed, detail)
    if not any(_is_canary(d) for d in events):
        return Verdict(Outcome.FATAL, _err("EventsStopped", "the well-formed frame sent after the one under test "
                                                           "never reached the application"), detail)

    def payload_of(d: dict[str, Any]) -> dict[str, Any]:
        p = d.get("payload")
        return p if isinstance(p, dict) else {}

    if check == "frame.unknown-type":
        hit = next((d for d in events if _NEW_TYPE in (d.get("raw_type"), d.get("type"), payload_of(d).get("type"))),
                   None)
        if hit is None:
            return Verdict(Outcome.IGNORED, None, {**detail, "note": "dropped silently; the session went on"})
        detail["delivered"] = hit
        if hit["class"] == "UnknownEvent":
            detail["raw_type_kept"] = hit.get("raw_type") == _NEW_TYPE
            return Verdict(Outcome.SURFACED, None, detail)
        return Verdict(Outcome.DOWNGRADED, _err("Downgraded", f"delivered as {hit['class']}"), detail)
    if check == "frame.extra-field":
        hit = next((d for d in events if "mutated" in (d.get("text"), payload_of(d).get("text"))), None)
        if hit is None:
            return Verdict(Outcome.LOST, _err("Dropped", "the model-text frame with an extra field never reached "
                                                         "the application"), detail)
        detail["delivered"] = hit
        if hit.get("text") != "mutated":
            return Verdict(Outcome.DOWNGRADED, _err("Downgraded", f"delivered as {hit['class']}, not as model text"),
                           detail)
        return Verdict(Outcome.SURFACED if hit.get("new_field") else Outcome.IGNORED, None, detail)
    # frame.malformed
    hit = next((d for d in events if "compat-matrix" in str(d.get("raw_text") or "")), None)
    if hit is None:
        hit = next((d for d in events if d["class"] == "UnknownEvent" and d.get("raw_type") is None), None)
    if hit is None:
        return Verdict(Outcome.IGNORED, None, {**detail, "note": "dropped silently; the session went on"})
    detail["delivered"] = hit
    return Verdict(Outcome.SURFACED, None, detail)


def _error_event(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    for d in events:
        payload = d.get("payload")
        if "code" in d or "error" in (d.get("raw_type"), isinstance(payload, dict) and payload.get("type")):
            return d
    return None


def _enum_verdict(value: dict[str, Any] | None, where: str, detail: dict[str, Any]) -> Verdict:
    """Cosmo's design promise for an unknown value: a member of the enum carrying the raw
    string, which ``value in list(TheEnum)`` tells apart from the named ones."""
    if not value or value.get("value") is None:
        return Verdict(Outcome.LOST, _err("Lost", f"the unknown value never reached the application ({where})"),
                       detail)
    if value.get("kind") == "enum" and value.get("value") == UNKNOWN and not value.get("in_list"):
        return Verdict(Outcome.SURFACED, None, detail)
    if value.get("value") == UNKNOWN:
        return Verdict(Outcome.DOWNGRADED, _err(
            "NotAMember", f"the raw value arrived as a plain {value.get('kind')}, not as a member of the enum "
                          f"({where})"), detail)
    return Verdict(Outcome.DOWNGRADED, _err("Replaced", f"the unknown value arrived as {value!r} ({where})"), detail)


def _known_ok(value: dict[str, Any] | None, expected: str) -> bool:
    return bool(value and value.get("kind") == "enum" and value.get("value") == expected and value.get("in_list"))


def _error_code(report: AgentReport, scenario: Scenario, detail: dict[str, Any]) -> Verdict:
    observed = report.extra.get("observed", {})
    expected = scenario.frames_for(0)[0]["code"]
    known, unknown = observed.get("known") or [], observed.get("unknown") or []
    detail["known_event"] = known_event = _error_event(known)
    detail["unknown_event"] = unknown_event = _error_event(unknown)
    if not any(_is_canary(d) for d in unknown):
        failed = _step_error(report, "session_unknown_code")
        return Verdict(Outcome.FATAL, failed or _err(
            "EventsStopped", "the session stopped delivering after the error frame with an unknown code"), detail)
    if unknown_event is None:
        return Verdict(Outcome.LOST, _err("Lost", "the error frame with an unknown code never reached the "
                                                  "application"), detail)
    if "code" not in unknown_event:
        return Verdict(Outcome.DOWNGRADED, _err(
            "WholeEventLost", f"the error frame became a {unknown_event['class']}: an unrecognized code failed the "
                              "event carrying it"), detail)
    verdict = _enum_verdict(unknown_event["code"], "error frame", detail)
    if verdict.outcome == Outcome.SURFACED and not (known_event and _known_ok(known_event.get("code"), expected)):
        return Verdict(Outcome.DOWNGRADED, _err("KnownNotMember", f"the known code {expected!r} did not arrive as "
                                                                  "its member"), detail)
    return verdict


def _rest_enum(report: AgentReport, expected: str, where: str, detail: dict[str, Any]) -> Verdict:
    observed = report.extra.get("observed", {})
    known, unknown = observed.get("known") or {}, observed.get("unknown") or {}
    detail.update(known=known, unknown=unknown)
    if not known.get("ok"):
        error = known.get("error") or {}
        return Verdict(Outcome.HARNESS_ERROR, _err(
            "StandInRefused", f"the release refused the stand-in's answer with a known value: "
                              f"{error.get('type')}: {error.get('message')}"), detail)
    if not unknown.get("ok"):
        error = unknown.get("error") or {}
        return Verdict(Outcome.FATAL, ErrorInfo(str(error.get("type")), str(error.get("message")),
                                                traceback=str(error.get("traceback", ""))), detail)
    verdict = _enum_verdict(unknown.get("value"), where, detail)
    if verdict.outcome == Outcome.SURFACED and not _known_ok(known.get("value"), expected):
        return Verdict(Outcome.DOWNGRADED, _err("KnownNotMember", f"the known value {expected!r} did not arrive "
                                                                  "as its member"), detail)
    return verdict


def _identity(check: str, report: AgentReport, log: list[Entry], detail: dict[str, Any]) -> Verdict:
    installed = report.extra.get("installed") or {}
    name, version = installed.get("name"), installed.get("version")
    observed = report.extra.get("observed", {})
    if check == "identity.exports":
        got = observed.get("exports") or {}
        detail["exports"] = got
        if not got.get("ok"):
            error = got.get("error") or {}
            where = (f"; {' and '.join(sorted(got['internal']))} exist only in cosmo_ai._internal.protocol, "
                     "not exported") if got.get("internal") else ""
            message = _LOCAL_PATH.sub("", str(error.get("message")))
            return Verdict(Outcome.BROKEN, _err(str(error.get("type")), f"{message}{where}"), detail)
        if (got.get("SDK_NAME"), got.get("SDK_VERSION")) != (name, version):
            return Verdict(Outcome.BROKEN, _err("Mismatch", f"SDK_NAME, SDK_VERSION = {got.get('SDK_NAME')!r}, "
                                                            f"{got.get('SDK_VERSION')!r}; installed {name} {version}"),
                           detail)
        return Verdict(Outcome.KEPT, None, detail)
    if check == "identity.sdk-block":
        configs = session_configs(log)
        if not configs:
            return Verdict(Outcome.HARNESS_ERROR, _err("NoSessionConfig", "the release never sent a session-config"),
                           detail)
        expected = {"name": name, "version": version}
        sent = [c.get("sdk") if isinstance(c, dict) else None for c in configs]
        detail.update(sent_sdk=sent, sent_keys=[sorted(c) if isinstance(c, dict) else None for c in configs])
        bad = [s for s in sent if s != expected]
        if bad:
            what = "no sdk block" if bad[0] is None else f"sdk={bad[0]!r}"
            keys = (detail["sent_keys"] or [None])[0]
            return Verdict(Outcome.BROKEN, _err("MissingIdentity", f"session-config carried {what} (keys {keys}); "
                                                                   f"installed is {name} {version}"), detail)
        return Verdict(Outcome.KEPT, None, detail)
    if check == "identity.rest-header":
        requests = rest_requests(log)
        expected_header = f"{name}/{version}"
        seen = [{"call": f"{e.get('method')} {e.get('path')}", "header": e.get("sdk_header")} for e in requests]
        detail["requests"] = seen
        if not seen:
            return Verdict(Outcome.HARNESS_ERROR, _err("NoRequests", "the release made no REST call"), detail)
        missing = [s for s in seen if s["header"] != expected_header]
        if missing:
            return Verdict(Outcome.BROKEN, _err(
                "MissingHeader", f"{len(missing)} of {len(seen)} REST calls without X-Cosmo-SDK: {expected_header} "
                                 f"(first: {missing[0]['call']} sent {missing[0]['header']!r})"), detail)
        return Verdict(Outcome.KEPT, None, detail)
    # identity.version-mismatch (REST) and identity.version-mismatch-frame (an error frame before ready)
    raised = observed.get("raised")
    detail["raised"] = {k: v for k, v in (raised or {}).items() if k != "traceback"}
    if raised is None:
        handed = [d for d in observed.get("events") or [] if "code" in d or d.get("raw_type") == "error"]
        detail["events"] = (observed.get("events") or [])[:5]
        what = (f"; the application was handed {handed[0]['class']} (code "
                f"{(handed[0].get('code') or {}).get('value')!r}) on a session that had started" if handed else "")
        return Verdict(Outcome.BROKEN, _err("NoError", f"session start succeeded although the server refused it{what}"),
                       detail)
    if "SessionStartError" not in (raised.get("mro") or []):
        return Verdict(Outcome.BROKEN, _err(str(raised.get("type")), f"not a session-start error: "
                                                                     f"{raised.get('message')}"), detail)
    said = [str(raised.get(k)) for k in ("type", "code", "server_code")]
    if not any("version_mismatch" in s.lower() or "versionmismatch" in s.lower() for s in said):
        return Verdict(Outcome.BROKEN, _err(str(raised.get("type")), (
            f"a session-start error, but nothing in it says version_mismatch (code {raised.get('code')!r}, server "
            f"code {raised.get('server_code')!r}): {raised.get('message')}")), detail)
    return Verdict(Outcome.KEPT, None, detail)


def _strict(check: str, report: AgentReport, log: list[Entry], detail: dict[str, Any]) -> Verdict:
    if not session_configs(log):
        return Verdict(Outcome.HARNESS_ERROR, _err("NoSessionConfig", "the release never sent a session-config"),
                       detail)
    where = "session-start" if check == "strict.session-start" else "data-channel"
    refused = [r for r in rejections(log) if r["where"] == where]
    detail["rejected"] = refused
    if where == "data-channel" and not any(e.get("kind") == "frame" for e in log) and not refused:
        return Verdict(Outcome.HARNESS_ERROR, _err("NoFrames", "the release sent no data-channel frame"), detail)
    if not refused:
        return Verdict(Outcome.KEPT, None, detail)
    found = "; ".join(f"{r['message']}: {', '.join(r['unknown']) or r.get('reason') or '?'}"
                      for r in refused[:4])
    if where == "session-start":
        failed = _step_error(report, "session")
        told = f"{failed.type}: {failed.message}" if failed else "nothing (the session started)"
        detail["application_told"] = told
        names_field = bool(failed) and all(k in told for r in refused for k in r["unknown"])
        detail["error_names_field"] = names_field
        return Verdict(Outcome.BROKEN, _err("UnknownField", f"refused with a 422 for keys beyond the published "
                                                            f"contract ({found}); the application was told: "
                                                            f"{told[:300]}"), detail)
    return Verdict(Outcome.BROKEN, _err("UnknownField", f"{len(refused)} frame(s) dropped by the strict server for "
                                                        f"keys beyond the published contract ({found})"), detail)


def _closed_set(check: str, report: AgentReport, detail: dict[str, Any]) -> Verdict:
    """A closed set read from the release's own models, probed as the design asks of every
    server-authored enum: the unknown value must reach the application (a member carrying the
    raw value, or the raw string), not fail the event carrying it."""
    frame, path = set_target(check)
    observed = report.extra.get("observed", {})
    known, unknown = observed.get("known") or [], observed.get("unknown") or []

    def typed(events: list[dict[str, Any]]) -> dict[str, Any] | None:
        return next((d for d in events if isinstance(d.get("at_path"), dict)), None)

    detail.update(known_event=typed(known), frame=frame, path=path)
    if typed(known) is None:
        failed = _step_error(report, "session_known")
        return Verdict(Outcome.HARNESS_ERROR, failed or _err(
            "TemplateRefused", f"the stand-in's {frame} frame with a known {path} did not reach the application as "
                               f"that event: our frame does not fit this release"), detail)
    if not any(_is_canary(d) for d in unknown):
        failed = _step_error(report, "session_unknown")
        return Verdict(Outcome.FATAL, failed or _err(
            "EventsStopped", f"the session stopped delivering after the {frame} frame with an unknown {path}"), detail)
    hit = typed(unknown)
    whole = next((d for d in unknown if d.get("class") == "UnknownEvent" and d.get("raw_type") == frame), None)
    detail["unknown_event"] = hit or whole
    if hit is not None and hit["at_path"].get("value") == UNKNOWN:
        value = hit["at_path"]
        if value.get("kind") == "enum" and value.get("in_list"):
            return Verdict(Outcome.DOWNGRADED, _err("Replaced", f"the unknown {path} arrived as a named member"),
                           detail)
        return Verdict(Outcome.SURFACED, None, detail)
    if hit is not None:
        return Verdict(Outcome.DOWNGRADED, _err("Replaced", f"the unknown {path} arrived as "
                                                            f"{hit['at_path'].get('value')!r}"), detail)
    if whole is not None:
        return Verdict(Outcome.DOWNGRADED, _err(
            "WholeEventLost", f"the {frame} frame became an UnknownEvent: an unrecognized {path} failed the event "
                              "carrying it"), detail)
    return Verdict(Outcome.LOST, _err("Lost", f"the {frame} frame with an unknown {path} never reached the "
                                              "application"), detail)


def judge(check: str, report: AgentReport | None, res: Result, log: list[Entry], scenario: Scenario) -> Verdict:
    early = unmeasured(report, res)
    if early is not None and early.outcome != Outcome.NOT_APPLICABLE:
        return early
    assert report is not None  # unmeasured() answers for a missing report
    # A release that cannot be imported is a verdict on the release, before "not applicable".
    imported = report.extra.get("import_error")
    if imported:
        return Verdict(Outcome.CRASHED, ErrorInfo(str(imported.get("type")), str(imported.get("message")),
                                                  traceback=str(imported.get("traceback", ""))))
    if early is not None:
        return early
    detail: dict[str, Any] = {"loop_errors": (report.extra.get("loop_errors") or [])[:10]}
    if check.startswith(SET_PREFIX):
        return _closed_set(check, report, detail)
    if check.startswith("frame."):
        return _frames(check, report, detail)
    if check == "enum.error-code":
        return _error_code(report, scenario, detail)
    if check == "enum.credential-kind":
        return _rest_enum(report, scenario.verify[0]["credential"], "verify()", detail)
    if check == "enum.session-status":
        return _rest_enum(report, scenario.usage[0]["status"], "session usage", detail)
    if check == "enum.usage-status":
        return _rest_enum(report, scenario.usage[0]["usage_status"], "session usage", detail)
    if check == "enum.sdk-raised-closed":
        verdicts = report.extra.get("observed", {}).get("sdk_raised") or {}
        detail["sdk_raised"] = verdicts
        open_ = sorted(k for k, v in verdicts.items() if not v.get("closed"))
        if open_:
            return Verdict(Outcome.BROKEN, _err("OpenEnum", f"accept values they do not name: {', '.join(open_)}"),
                           detail)
        return Verdict(Outcome.KEPT, None, detail)
    if check.startswith("identity."):
        return _identity(check, report, log, detail)
    if check.startswith("strict."):
        return _strict(check, report, log, detail)
    return Verdict(Outcome.HARNESS_ERROR, ErrorInfo("UnknownCheck", f"no verdict rule for {check!r}"))
