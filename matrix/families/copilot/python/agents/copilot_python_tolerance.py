"""Tolerance agent for github-copilot-sdk. Runs with the SDK venv's interpreter; the shim
between this SDK and the real CLI applies one mutation rule.

Usage: python copilot_python_tolerance.py '{"cli_path": ..., "rule": ..., "step_timeout": ...}'

It starts the client, then either looks at what the handshake calls return (result and
notification rules) or opens a real session, collects every event the application is
handed, and waits for the shim's mutated event and the canary behind it. A follow-up ping
proves the client still works. It reports observations; the harness classifies them.
"""

import asyncio
import importlib.util
import inspect
import json
import os
import sys
import time

_spec = importlib.util.spec_from_file_location(
    "handshake_agent", os.path.join(os.path.dirname(os.path.abspath(__file__)), "copilot_python_handshake.py"))
base = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(base)

report = base.report
MUTATED_ID = "00000000-0000-4000-8000-00000000c0de"
CANARY_ID = "00000000-0000-4000-8000-00000000ca9a"
UNKNOWN_FIELD = "compatMatrixUnknownField"
UNKNOWN_VALUE = "compat_matrix_unknown_value"
UNKNOWN_CAPABILITY = "compat-matrix.unknown-capability"


def value_of(x):
    return getattr(x, "value", x)


def contains(obj, needle, depth=0):
    """Is ``needle`` (a key or a value) anywhere in what the application can reach?"""
    if depth > 6:
        return False
    if obj == needle or (isinstance(obj, str) and needle in obj):
        return True
    if isinstance(obj, dict):
        return any(k == needle or contains(v, needle, depth + 1) for k, v in obj.items())
    if isinstance(obj, (list, tuple, set)):
        return any(contains(v, needle, depth + 1) for v in obj)
    if hasattr(obj, "__dict__") and not isinstance(obj, type):
        return contains(vars(obj), needle, depth + 1)
    return value_of(obj) == needle if obj is not None and hasattr(obj, "value") else False


def describe_event(event):
    data = getattr(event, "data", None)
    raw = getattr(data, "raw", None) if data is not None else None
    return {
        "type": str(value_of(getattr(event, "type", None))),
        "raw_type": getattr(event, "raw_type", None),
        "id": str(getattr(event, "id", "")),
        "data_class": type(data).__name__ if data is not None else None,
        "raw_data": base.jsonable(raw) if raw is not None else None,
        "message": base.jsonable(getattr(data, "message", None)),
        "role": base.jsonable(value_of(getattr(data, "role", None))),
        "role_is_member": getattr(data, "role", None) is not None and not isinstance(getattr(data, "role", None), str),
        "name": base.jsonable(getattr(data, "name", None)),
        "has_unknown_field": contains(event, UNKNOWN_FIELD),
        "has_unknown_value": contains(event, UNKNOWN_VALUE),
    }


async def open_session(client, handler):
    """Create a session through this version's API and subscribe ``handler`` to its events."""
    create = client.create_session
    params = inspect.signature(create).parameters
    kwargs = {}
    approve = None
    for mod in ("copilot", "copilot.session", "copilot.types"):
        try:
            ph = getattr(__import__(mod, fromlist=["PermissionHandler"]), "PermissionHandler", None)
        except ImportError:
            continue
        if ph is not None and hasattr(ph, "approve_all"):
            approve = ph.approve_all
            break
    if "on_permission_request" in params:
        if approve is not None:
            kwargs["on_permission_request"] = approve
        if "on_event" in params:
            kwargs["on_event"] = handler
        session = await create(**kwargs)
        report["api"]["session"] = "create_session(on_permission_request=..., on_event=...)"
    else:
        config = {"on_permission_request": approve} if approve is not None else {}
        session = await create(config)
        report["api"]["session"] = "create_session({...})"
    if "on_event" not in kwargs:
        session.on(handler)
        report["api"]["events"] = "session.on(handler)"
    else:
        report["api"]["events"] = "create_session(on_event=handler)"
    return session


async def read_history(session, observed, t):
    """Read the session's stored events back, as an application replaying a session does
    (get_events from 1.0, get_messages before), and describe what it was handed."""
    name = "get_events" if hasattr(session, "get_events") else "get_messages"
    if not hasattr(session, name):
        report["not_applicable"] = "this version cannot read a session's events back"
        return
    report["api"]["history"] = f"session.{name}()"
    events = await base.step("get_history", getattr(session, name), t)
    if events is None:
        return
    described = [describe_event(e) for e in events]
    observed["events"] = described[-20:]
    observed["canary"] = any(d["id"] == CANARY_ID for d in described)
    mutated = [d for d in described if d["id"] == MUTATED_ID]
    observed["mutated"] = mutated[0] if mutated else None


async def close_session(session):
    for name in ("disconnect", "destroy"):
        if hasattr(session, name):
            return await getattr(session, name)()
    return None


async def session_rule(client, rule, observed, t, wait):
    """One session-scoped rule's steps on a session of its own."""
    events = []

    def handler(event):
        events.append(event)

    async def opened():
        return await open_session(client, handler)

    session = await base.step("create_session", opened, t)
    if session is None:
        return
    if rule.startswith("history."):
        await read_history(session, observed, t)
        await base.step("ping", lambda: client.ping("compat-matrix"), t)
        await base.step("close_session", lambda: close_session(session), t)
        return
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and not any(str(getattr(e, "id", "")) == CANARY_ID for e in events):
        await asyncio.sleep(0.05)
    described = [describe_event(e) for e in events]
    observed["events"] = described[-20:]
    observed["canary"] = any(d["id"] == CANARY_ID for d in described)
    mutated = [d for d in described if d["id"] == MUTATED_ID]
    observed["mutated"] = mutated[0] if mutated else None
    await base.step("ping", lambda: client.ping("compat-matrix"), t)
    await base.step("close_session", lambda: close_session(session), t)


async def main(cfg):
    # "rules": a batch (one client; connection rules observed together, each session rule on a
    # session of its own, in this order, as the shim assigns them); "rule": one rule alone.
    rules = cfg.get("rules") or [cfg["rule"]]
    batch = "rules" in cfg
    t = float(cfg.get("step_timeout", 30))
    wait = float(cfg.get("event_wait", 6))
    loop = asyncio.get_running_loop()
    report["loop_errors"] = []
    loop.set_exception_handler(lambda _l, ctx: report["loop_errors"].append(
        f"{ctx.get('message')}: {ctx.get('exception')!r}"[:1500]))
    client = base.client_for(cfg)
    if client is None:
        return
    observed = report.setdefault("observed", {})
    try:
        await base.step("start", client.start, t)
        if not report["steps"][-1]["ok"]:
            return
        if rules[0].startswith(("result.", "notification.", "request.")):
            if hasattr(client, "ping"):
                res = await base.step("ping", lambda: client.ping("compat-matrix"), t)
                observed["ping_unknown_field"] = contains(res, UNKNOWN_FIELD)
            if hasattr(client, "get_status"):
                res = await base.step("get_status", client.get_status, t)
                observed["status_unknown_field"] = contains(res, UNKNOWN_FIELD)
            # Whatever the client kept from the handshake (capabilities, task kinds...).
            observed["client_has_unknown_capability"] = contains(vars(client), UNKNOWN_CAPABILITY)
            observed["client_has_unknown_value"] = contains(vars(client), UNKNOWN_VALUE)
            # Let a notification or request injected after the handshake land (and be answered).
            await asyncio.sleep(1.0 if any(r.startswith("request.") for r in rules) else 0.5)
        elif not hasattr(client, "create_session"):
            report["not_applicable"] = "this version has no create_session"
        elif not batch:
            await session_rule(client, rules[0], observed, t, wait)
        else:
            report["batch"] = {}
            for rule in rules:
                mark, errors = len(report["steps"]), len(report["loop_errors"])
                seen = {}
                await session_rule(client, rule, seen, t, wait)
                report["batch"][rule] = {"steps": report["steps"][mark:], "observed": seen,
                                         "loop_errors": report["loop_errors"][errors:]}
    finally:
        await base.step("stop", client.stop, t)


if __name__ == "__main__":
    config = json.loads(sys.argv[1])
    try:
        asyncio.run(main(config))
    except BaseException as exc:  # our own bug outside the SDK's calls
        import traceback

        report["harness_error"] = f"agent failed: {type(exc).__name__}: {exc}\n{traceback.format_exc()[-3000:]}"
    print(base.PREFIX + json.dumps(report, default=repr), flush=True)
