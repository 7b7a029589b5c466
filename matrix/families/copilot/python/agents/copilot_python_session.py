"""Session agent for github-copilot-sdk. Runs with the SDK venv's interpreter, in the cell's
work directory; the CLI's model is the harness's scripted stand-in on 127.0.0.1.

Usage: python copilot_python_session.py '{"cli_path": ..., "model_url": ..., "model": ...,
    "tool": ..., "turns": [[name, prompt], ...], "step_timeout": ..., "turn_timeout": ...}'

As an application would: it starts the client, creates a session whose model calls go to the
stand-in (the SDK's own provider option, "bring your own key"), registers one tool and a
permission handler, sends each scripted turn and waits until the session is idle, reads the
session's history back, closes the session and stops. It reports what each step did, every
event the application was handed (typed, or as the SDK's unknown), what the permission handler
was asked and answered, and what the tool handler ran; the harness classifies them. Each API
is found by inspecting the version (its signatures, its classes), never by its number.
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
IDLE = "session.idle"


def value_of(x):
    return getattr(x, "value", x)


def describe_event(event):
    """What the application was handed: the event's type as the SDK typed it, and whether the
    SDK knew it (an ``UNKNOWN`` member, a raw-data class and its raw type mean it did not)."""
    kind = value_of(getattr(event, "type", None))
    data = getattr(event, "data", None)
    raw_type = getattr(event, "raw_type", None)
    unknown = str(kind).lower() == "unknown" or type(data).__name__.startswith("Raw")
    return {"type": str(kind), "raw_type": raw_type, "unknown": unknown, "data_class": type(data).__name__}


def _first(*candidates):
    for mod, name in candidates:
        try:
            found = getattr(__import__(mod, fromlist=[name]), name, None)
        except ImportError:
            continue
        if found is not None:
            return found
    return None


class Permissions:
    """The application's permission handler: approves the application's own tool always, and
    the CLI's built-in tools while ``allow`` is set; answers in this version's own result type
    (the one its ``approve_all`` gives, or a plain dict where it has none)."""

    def __init__(self):
        self.allow = True
        self.asked = []
        self.approve_all = None
        ph = _first(("copilot", "PermissionHandler"), ("copilot.session", "PermissionHandler"),
                    ("copilot.types", "PermissionHandler"))
        if ph is not None and hasattr(ph, "approve_all"):
            self.approve_all = ph.approve_all
            report["api"]["permission"] = "PermissionHandler.approve_all's result, its deny of the same type"
        else:
            report["api"]["permission"] = "a dict {'kind': 'approved' | 'denied-interactively-by-user'}"

    def deny_like(self, approved):
        """A denial of the kind this version's approvals are."""
        kind = value_of(getattr(approved, "kind", None) if not isinstance(approved, dict) else approved.get("kind"))
        if type(approved).__name__ == "PermissionDecisionApproveOnce":
            reject = _first(("copilot.session", "PermissionDecisionReject"),
                            ("copilot.generated.rpc", "PermissionDecisionReject"), ("copilot", "PermissionDecisionReject"))
            return reject(feedback="compat-matrix denies it") if reject is not None else None
        deny = "reject" if kind == "approve-once" else "denied-interactively-by-user"
        if isinstance(approved, dict):
            return {**approved, "kind": deny}
        try:
            return type(approved)(kind=deny)
        except TypeError:
            return {"kind": deny}

    def __call__(self, request, invocation=None):
        kind = value_of(request.get("kind") if isinstance(request, dict) else getattr(request, "kind", None))
        if callable(kind):  # a request whose kind is a method
            kind = value_of(kind())
        kind = str(kind)
        approved = self.approve_all(request, invocation) if self.approve_all is not None else {"kind": "approved"}
        allowed = self.allow or kind == "custom-tool"
        self.asked.append({"kind": kind, "allowed": allowed})
        return approved if allowed else self.deny_like(approved)


def make_tool(name, ran):
    """The application's tool: it returns the text it is given, upper-cased, through this
    version's own way of defining a tool."""
    from pydantic import BaseModel

    class Args(BaseModel):
        text: str

    def handler(params, *_):
        text = params.text if hasattr(params, "text") else dict(params.get("arguments") or params).get("text", "")
        ran.append(text)
        return str(text).upper()

    define = _first(("copilot", "define_tool"), ("copilot.tools", "define_tool"))
    if define is not None:
        params = inspect.signature(define).parameters
        description = "Returns the text it is given, upper-cased."
        if "handler" in params:
            kw = {"description": description, "handler": handler}
            if "params_type" in params:
                kw["params_type"] = Args
            report["api"]["tool"] = "define_tool(name, description=..., handler=..., params_type=...)"
            return define(name, **kw)

        def typed(params: Args) -> str:
            return handler(params)

        report["api"]["tool"] = "@define_tool(name=..., description=...)"
        return define(name=name, description=description)(typed)
    tool_cls = _first(("copilot", "Tool"), ("copilot.types", "Tool"))
    if tool_cls is None:
        return None
    report["api"]["tool"] = "Tool(name, description, handler, parameters)"
    return tool_cls(name=name, description="Returns the text it is given, upper-cased.",
                    handler=lambda inv: handler(inv.get("arguments", {}) if isinstance(inv, dict) else inv.arguments),
                    parameters=Args.model_json_schema())


async def open_session(client, cfg, tool, permissions, on_event):
    """Create a session through this version's API: the stand-in as its model provider, the
    tool, the permission handler, events to ``on_event``."""
    create = client.create_session
    params = inspect.signature(create).parameters
    provider = {"type": "openai", "base_url": cfg["model_url"] + "/v1", "api_key": "compat-matrix",
                "wire_api": "completions"}
    config = {"model": cfg["model"], "provider": provider, "on_permission_request": permissions,
              "tools": [tool] if tool is not None else []}
    if "on_permission_request" in params:  # keyword arguments
        if "on_event" in params:
            config["on_event"] = on_event
        session = await create(**{k: v for k, v in config.items() if k in params or k == "on_event"})
        report["api"]["session"] = "create_session(model=..., provider=..., tools=..., on_permission_request=...)"
    else:
        session = await create(config)
        report["api"]["session"] = "create_session({model, provider, tools, on_permission_request})"
    if "on_event" not in config:
        session.on(on_event)
        report["api"]["events"] = "session.on(handler)"
    else:
        report["api"]["events"] = "create_session(on_event=handler)"
    return session


async def turn(session, prompt, events, timeout):
    """Send one message and wait until the session is idle: ``send_and_wait`` where the version
    has it, else ``send`` and the application's own wait for ``session.idle``."""
    wait = getattr(session, "send_and_wait", None)
    positional = "prompt" in inspect.signature(session.send).parameters
    message = prompt if positional else {"prompt": prompt}
    if wait is not None:
        params = inspect.signature(wait).parameters
        report["api"]["turn"] = "send_and_wait(...)"
        return await (wait(message, timeout=timeout) if "timeout" in params else wait(message))
    report["api"]["turn"] = "send(...), then the first session.idle"
    seen = len(events)
    await session.send(message)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(value_of(getattr(e, "type", None)) == IDLE for e in events[seen:]):
            return next((e for e in reversed(events[seen:])
                         if value_of(getattr(e, "type", None)) == "assistant.message"), None)
        await asyncio.sleep(0.05)
    raise asyncio.TimeoutError(f"no {IDLE} within {timeout:.0f}s")


def reply_text(message):
    data = getattr(message, "data", None)
    content = getattr(data, "content", None) if data is not None else None
    return content if isinstance(content, str) else None


async def read_history(session, t):
    name = "get_events" if hasattr(session, "get_events") else "get_messages"
    if not hasattr(session, name):
        return None
    report["api"]["history"] = f"session.{name}()"
    return await base.step("get_history", getattr(session, name), t)


async def close_session(session):
    for name in ("disconnect", "destroy"):
        if hasattr(session, name):
            return await getattr(session, name)()
    return None


async def main(cfg):
    t = float(cfg.get("step_timeout", 30))
    turn_timeout = float(cfg.get("turn_timeout", 45))
    loop = asyncio.get_running_loop()
    report["loop_errors"] = []
    loop.set_exception_handler(lambda _l, ctx: report["loop_errors"].append(
        f"{ctx.get('message')}: {ctx.get('exception')!r}"[:1500]))
    client = base.client_for(cfg)
    if client is None:
        return
    observed = report.setdefault("observed", {"turns": [], "live": [], "history": None})
    events, ran = [], []
    permissions = Permissions()
    try:
        await base.step("start", client.start, t)
        if not report["steps"][-1]["ok"]:
            return
        if not hasattr(client, "create_session"):
            report["not_applicable"] = "this version has no create_session"
            return
        tool = make_tool(cfg["tool"], ran)

        async def opened():
            return await open_session(client, cfg, tool, permissions, events.append)

        session = await base.step("create_session", opened, t)
        if session is None:
            return
        for name, prompt in cfg["turns"]:
            permissions.allow = name != "denied"
            before_ran, before_asked, seen = len(ran), len(permissions.asked), len(events)
            message = await base.step(f"turn:{name}", lambda p=prompt: turn(session, p, events, turn_timeout),
                                      turn_timeout + 5)
            observed["turns"].append({
                "name": name, "ok": report["steps"][-1]["ok"], "seconds": report["steps"][-1].get("seconds"),
                "reply": reply_text(message), "tool_ran": ran[before_ran:],
                "asked": permissions.asked[before_asked:],
                "idle": any(value_of(getattr(e, "type", None)) == IDLE for e in events[seen:])})
            if not report["steps"][-1]["ok"]:
                break
        history = await read_history(session, t)
        if history is not None:
            observed["history"] = [describe_event(e) for e in history]
        await base.step("close_session", lambda: close_session(session), t)
    finally:
        observed["live"] = [describe_event(e) for e in events]
        await base.step("stop", client.stop, t, watch=False)
        report["after_stop"] = await base.watch_gone(float(cfg.get("leak", 5)))


if __name__ == "__main__":
    config = json.loads(sys.argv[1])
    try:
        asyncio.run(main(config))
    except BaseException as exc:  # our own bug outside the SDK's calls
        import traceback

        report["harness_error"] = f"agent failed: {type(exc).__name__}: {exc}\n{traceback.format_exc()[-3000:]}"
    print(base.PREFIX + json.dumps(report, default=repr), flush=True)
