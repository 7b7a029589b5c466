"""Agent: drive one installed cosmo-ai-sdk release against the Cosmo stand-in for one check.

Runs inside the SDK's own venv (python -I), so only the stdlib and what the SDK depends
on. The stand-in's address arrives in COSMO_BASE_URL, the one way every release reads it.
Prints one report line; the harness classifies it together with the stand-in's log.

Two paths, picked by what the release has:
- ``websocket``: the release's own websocket transport (0.6+), end to end.
- ``room-relay``: releases whose only transport is a LiveKit room, which cannot be hosted
  here. Their real REST code talks to the stand-in; the room is replaced where the SDK's
  own tests replace it (``RealtimeSession._make_transport``) by a transport that carries
  the same data-channel frames over HTTP to the stand-in, so the real frame encoder and
  decoder run.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import importlib
import importlib.metadata
import inspect
import json
import os
import pkgutil
import sys
import time
import traceback
import types
import typing
from typing import Any, Callable

PREFIX = "@@compat-matrix-report@@ "
CFG: dict[str, Any] = json.loads(sys.argv[1])
BASE = os.environ["COSMO_BASE_URL"]
STEP = float(CFG.get("step_timeout", 20))
WAIT = float(CFG.get("event_wait", 8))
DIST = "cosmo-ai-sdk"
UNKNOWN = "compat-matrix-unknown-value"

steps: list[dict[str, Any]] = []
report: dict[str, Any] = {"schema": 1, "steps": steps, "observed": {}, "loop_errors": [],
                          "env_names": sorted(os.environ)}  # names only, checked by the harness


def emit() -> None:
    print(PREFIX + json.dumps(report, default=repr), flush=True)


def err(e: BaseException) -> dict[str, Any]:
    return {"type": type(e).__name__, "module": type(e).__module__, "message": str(e)[:2000],
            "mro": [c.__name__ for c in type(e).__mro__][:8],
            "code": jsonable(getattr(e, "code", None)), "server_code": jsonable(getattr(e, "server_code", None)),
            "status": jsonable(getattr(e, "status", None)),
            "traceback": "".join(traceback.format_exception(e))[-3000:]}


def jsonable(x: Any) -> Any:
    if isinstance(x, enum.Enum):
        return x.value
    if x is None or isinstance(x, (str, int, float, bool)):
        return x
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    return repr(x)[:500]


def enum_info(x: Any) -> dict[str, Any]:
    """What the application holds for a server-authored enum value. ``in_list`` is the
    design's own test: ``value in list(TheEnum)``."""
    if isinstance(x, enum.Enum):
        members = list(type(x))
        return {"kind": "enum", "class": type(x).__name__, "value": x.value, "in_list": x in members,
                "is_member": any(x is m for m in members)}
    return {"kind": type(x).__name__, "value": jsonable(x)}


def describe(ev: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"class": type(ev).__name__}
    for key in ("type", "raw_type", "text", "message", "reason", "payload", "raw_text"):
        if hasattr(ev, key):
            d[key] = jsonable(getattr(ev, key))
    if hasattr(ev, "code"):
        d["code"] = enum_info(ev.code)
    extra = getattr(ev, "model_extra", None) or {}
    d["new_field"] = jsonable(extra.get("compat_matrix_new_field", getattr(ev, "compat_matrix_new_field", None)))
    if CFG.get("path"):  # a closed-set check: what the application holds at the field under test
        d["at_path"] = enum_info(_at(ev, CFG["path"])) if _at(ev, CFG["path"]) is not None else None
    return d


async def step(name: str, fn: Callable[[], Any], timeout: float = STEP) -> Any:
    t0 = time.monotonic()
    entry: dict[str, Any] = {"name": name, "ok": False}
    steps.append(entry)
    try:
        result = await asyncio.wait_for(fn(), timeout)
        entry.update(ok=True, result=jsonable(result) if not isinstance(result, list) else None)
        return result
    except BaseException as e:  # noqa: BLE001 - every failure is an observation
        entry["error"] = {**err(e), "timeout": isinstance(e, (asyncio.TimeoutError, TimeoutError))}
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        return e
    finally:
        entry["seconds"] = round(time.monotonic() - t0, 4)


# -- the room lane's relay transport ------------------------------------------------------


class RelayTransport:
    """The Transport protocol of 0.1-0.5, minus media: frames go to and come from the
    stand-in's /relay endpoints over HTTP (httpx is one of the SDK's own dependencies)."""

    def __init__(self) -> None:
        import httpx

        self.http = httpx.AsyncClient(timeout=None)
        self.up = False
        self.url = ""
        self.reader: asyncio.Task[None] | None = None

    async def connect(self, response: Any, callbacks: Any) -> None:
        self.url = f"{BASE}/relay/{response.session_id}"
        self.up = True
        self.reader = asyncio.get_running_loop().create_task(self._read(callbacks))

    async def _read(self, callbacks: Any) -> None:
        async with self.http.stream("GET", self.url) as resp:
            async for line in resp.aiter_lines():
                if line:
                    callbacks.on_frame(line.encode())
        if self.up:
            from cosmo_ai._internal.transport import TransportClose

            self.up = False
            callbacks.on_closed(TransportClose(kind="server_ended", detail=None))

    def is_connected(self) -> bool:
        return self.up

    async def disconnect(self) -> None:
        self.up = False
        if self.reader is not None:
            self.reader.cancel()
        await self.http.aclose()

    async def send_frame(self, payload: bytes) -> None:
        await self.http.post(self.url, content=payload)

    def register_rpc_method(self, name: str, handler: Any) -> None:
        pass  # no client tools in these probes


# -- the release under test ---------------------------------------------------------------


class Sdk:
    def __init__(self) -> None:
        import cosmo_ai

        self.mod = cosmo_ai
        self.client_cls = getattr(cosmo_ai, "RealtimeClient", None) or getattr(cosmo_ai, "CosmoRealtime", None)
        self.path = "none"
        if self.client_cls is not None:
            params = inspect.signature(self.client_cls.__init__).parameters
            self.path = "websocket" if "transport" in params else "room-relay"

    def client(self) -> Any:
        assert self.client_cls is not None
        kw: dict[str, Any] = {"api_key": "cosmo_compat_matrix_key"}
        if self.path == "websocket":
            kw["transport"] = "websocket"
        return self.client_cls(**kw)

    def patch_room(self) -> None:
        if self.path == "room-relay":
            from cosmo_ai.session._engine import RealtimeSession

            RealtimeSession._make_transport = lambda self: RelayTransport()  # type: ignore[method-assign]


def is_canary(d: dict[str, Any]) -> bool:
    return d.get("text") == "canary" or (isinstance(d.get("payload"), dict) and d["payload"].get("text") == "canary")


async def session_events(client: Any, name: str, send_text: bool = False, wait: float = WAIT) -> list[dict[str, Any]]:
    """Start one session, collect what the application is handed until the canary (or the
    echo of the text sent), the end of the stream, or ``wait`` seconds; then end it."""
    events: list[dict[str, Any]] = []

    async def run() -> list[dict[str, Any]]:
        async with client.agent(instructions="Be terse.").start() as session:
            if send_text:
                await session.send_text("hello")

            async def collect() -> None:
                async for ev in session:
                    d = describe(ev)
                    events.append(d)
                    if is_canary(d) or (send_text and str(d.get("text", "")).startswith("echo:")):
                        return

            try:
                await asyncio.wait_for(collect(), wait)
            except (asyncio.TimeoutError, TimeoutError):
                events.append({"class": "<wait ended>", "after_s": wait})
        return events

    await step(name, run, timeout=STEP + WAIT)
    return events


async def rest_value(name: str, call: Callable[[], Any], attr: str) -> dict[str, Any]:
    result = await step(name, call)
    if isinstance(result, BaseException):
        return {"ok": False, "error": err(result)}
    return {"ok": True, "value": enum_info(getattr(result, attr, None)), "has_attr": hasattr(result, attr)}


# -- the closed sets this release decodes, read from its own models ---------------------------


def _enum_entry(cls: type) -> dict[str, Any]:
    """An enum's members, and what the release itself does with a value it does not name."""
    entry: dict[str, Any] = {"kind": "Enum", "class": f"{cls.__module__}.{cls.__qualname__}",
                             "values": [m.value for m in cls]}
    try:
        got = cls(UNKNOWN)
        entry["unknown"] = "member" if got not in list(cls) else "named member"
    except ValueError:
        entry["unknown"] = "refused"
    return entry


def _walk(tp: Any, path: str, out: list[dict[str, Any]], seen: frozenset, disc: str | None = None) -> None:
    """Every closed set (Enum, Literal, discriminated-union tag) under one annotation."""
    from pydantic import BaseModel

    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Annotated:
        for meta in args[1:]:
            found = getattr(meta, "discriminator", None)
            disc = found if isinstance(found, str) else disc
        _walk(args[0], path, out, seen, disc)
    elif origin is typing.Literal:
        out.append({"path": path, "kind": "Literal", "values": list(args)})
    elif origin in (typing.Union, types.UnionType):
        members = [a for a in args if a is not type(None)]
        models = [a for a in members if isinstance(a, type) and issubclass(a, BaseModel)]
        if disc and models:
            tags = []
            for m in models:
                ann = m.model_fields[disc].annotation if disc in m.model_fields else None
                tags += list(typing.get_args(ann)) if typing.get_origin(ann) is typing.Literal else []
            out.append({"path": f"{path}.{disc}", "kind": "tag", "values": tags})
            for m in models:  # the variants' own fields, but not their tags again
                _walk_model(m, path, out, seen, skip=disc)
            return
        start = len(out)
        for a in members:
            _walk(a, path, out, seen)
        if any(a is str for a in members):  # ``Enum | str``: the set is there, the field is open
            for entry in out[start:]:
                if entry["path"] == path:
                    entry["unknown"] = "plain str"
    elif origin in (list, tuple, set, frozenset) or (origin is not None and getattr(origin, "__name__", "") in
                                                    ("Sequence", "list", "tuple")):
        for a in args:
            if a is not Ellipsis:
                _walk(a, f"{path}[]", out, seen)
    elif origin is dict and len(args) == 2:
        _walk(args[1], f"{path}{{}}", out, seen)
    elif isinstance(tp, type) and issubclass(tp, enum.Enum):
        out.append({"path": path, **_enum_entry(tp)})
    elif isinstance(tp, type) and issubclass(tp, BaseModel) and tp not in seen:
        _walk_model(tp, path, out, seen | {tp})


def _walk_model(model: Any, prefix: str, out: list[dict[str, Any]], seen: frozenset, skip: str | None = None) -> None:
    for name, f in model.model_fields.items():
        key = f.alias or name  # the key the server sends
        if key == skip:
            continue
        ann = f.annotation
        disc = f.discriminator if isinstance(f.discriminator, str) else None
        _walk(ann, f"{prefix}.{key}" if prefix else key, out, seen, disc)


# REST calls whose answer the release decodes into a model: client method -> where it lands.
_REST = {"verify": "verify", "get_session_usage": "usage", "mint_token": "mint"}


def closed_sets(sdk: "Sdk") -> list[dict[str, Any]]:
    """Every closed set in what the server sends this release: the decoder's own table of
    frame types (the frame's ``type`` itself is the dispatch key, checked as frame.unknown-type)
    and the models its REST calls return, read from the release's source."""
    found: list[dict[str, Any]] = []
    try:
        engine = importlib.import_module("cosmo_ai.session._engine")
        table = dict(getattr(engine, "_SERVER_EVENT_BY_TYPE", {}) or {})
    except ImportError:
        table = {}
    for wire, model in sorted(table.items()):
        sets: list[dict[str, Any]] = []
        _walk_model(model, "", sets, frozenset({model}), skip="type")
        found += [{"where": "frame", "name": str(wire), "model": model.__name__, **s} for s in sets]
    client = sdk.client_cls
    module = sys.modules.get(client.__module__) if client is not None else None
    for method, where in _REST.items():
        fn = getattr(client, method, None)
        if fn is None or module is None:
            continue
        try:
            model = typing.get_type_hints(fn, vars(module), include_extras=True).get("return")
        except Exception as e:  # noqa: BLE001 - a name imported only for type checkers
            found.append({"where": "rest", "name": where, "path": "", "kind": "unresolved", "values": [],
                          "model": f"{type(e).__name__}: {e}"[:200]})
            continue
        if isinstance(model, type) and hasattr(model, "model_fields"):
            sets = []
            _walk_model(model, "", sets, frozenset({model}))
            found += [{"where": "rest", "name": where, "model": model.__name__, **s} for s in sets]
    return found


def _at(obj: Any, path: str) -> Any:
    """The attribute at a dotted path of a decoded event (``action.type``), or None."""
    for part in path.split("."):
        obj = obj.get(part) if isinstance(obj, dict) else getattr(obj, part, None)
        if obj is None:
            return None
    return obj


# -- checks -------------------------------------------------------------------------------


async def check_frames(sdk: Sdk, observed: dict[str, Any]) -> None:
    client = sdk.client()
    observed["events"] = await session_events(client, "session")


async def check_error_code(sdk: Sdk, observed: dict[str, Any]) -> None:
    client = sdk.client()
    observed["known"] = await session_events(client, "session_known_code")
    observed["unknown"] = await session_events(client, "session_unknown_code")


async def check_credential_kind(sdk: Sdk, observed: dict[str, Any]) -> None:
    client = sdk.client()
    if not hasattr(client, "verify"):
        report["not_applicable"] = "this release has no verify() call, so no credential kind reaches it"
        return
    observed["known"] = await rest_value("verify_known", client.verify, "credential")
    observed["unknown"] = await rest_value("verify_unknown", client.verify, "credential")


async def check_usage(sdk: Sdk, observed: dict[str, Any], attr: str) -> None:
    client = sdk.client()
    if not hasattr(client, "get_session_usage"):
        report["not_applicable"] = "this release has no session usage call, so no session or usage status reaches it"
        return
    observed["known"] = await rest_value("usage_known", lambda: client.get_session_usage("s-probe"), attr)
    observed["unknown"] = await rest_value("usage_unknown", lambda: client.get_session_usage("s-probe"), attr)


async def tour(sdk: Sdk, observed: dict[str, Any]) -> None:
    """Every REST call the release has, and one session with text: what the identity and
    strictness checks read from the server's log."""
    client = sdk.client()
    calls = []
    if hasattr(client, "verify"):
        calls.append("verify")
        await step("verify", client.verify)
    if hasattr(client, "mint_token"):
        calls.append("mint_token")
        await step("mint_token", lambda: client.mint_token("compat-matrix-user"))
    calls.append("session")
    # A strict server drops a frame without a word, so the echo may never come: wait less.
    observed["events"] = await session_events(client, "session", send_text=True, wait=min(WAIT, 3.0))
    if hasattr(client, "get_session_usage"):
        calls.append("usage")
        await step("usage", lambda: client.get_session_usage("s-probe"))
    observed["calls"] = calls


def exports(observed: dict[str, Any]) -> None:
    try:
        ns: dict[str, Any] = {}
        exec("from cosmo_ai import SDK_NAME, SDK_VERSION", ns)  # the design's own line
        observed["exports"] = {"ok": True, "SDK_NAME": ns["SDK_NAME"], "SDK_VERSION": ns["SDK_VERSION"]}
    except Exception as e:  # noqa: BLE001
        internal = None
        try:
            proto = importlib.import_module("cosmo_ai._internal.protocol")
            internal = {k: getattr(proto, k) for k in ("SDK_NAME", "SDK_VERSION") if hasattr(proto, k)}
        except Exception:  # noqa: BLE001
            pass
        observed["exports"] = {"ok": False, "error": err(e), "internal": internal}


async def check_version_mismatch(sdk: Sdk, observed: dict[str, Any]) -> None:
    """The server refuses the session (over REST, or with an error frame before ``ready``):
    what start() raised, and what the application was handed if it did not raise."""
    client = sdk.client()
    events: list[dict[str, Any]] = []

    async def start() -> None:
        async with client.agent(instructions="Be terse.").start() as session:
            async def collect() -> None:
                async for ev in session:
                    events.append(describe(ev))

            with contextlib.suppress(asyncio.TimeoutError, TimeoutError):
                await asyncio.wait_for(collect(), 3.0)

    result = await step("start", start)
    observed["raised"] = err(result) if isinstance(result, BaseException) else None
    observed["events"] = events[:10]


def server_error_enum(mod: Any) -> Any:
    """The enum type of the error frame's ``code``, read from the release's own model."""
    for name in ("ErrorEvent", "RealtimeError"):
        model = getattr(mod, name, None)
        fields = getattr(model, "model_fields", None)
        if fields and "code" in fields:
            ann = fields["code"].annotation
            return ann if isinstance(ann, type) and issubclass(ann, enum.Enum) else None
    return None


def check_sdk_raised_closed(sdk: Sdk, observed: dict[str, Any]) -> None:
    server = server_error_enum(sdk.mod)
    found: dict[str, Any] = {}
    skipped = []
    for info in pkgutil.walk_packages(sdk.mod.__path__, "cosmo_ai."):
        try:
            module = importlib.import_module(info.name)
        except Exception as e:  # noqa: BLE001 - an optional extra that is not installed
            skipped.append(f"{info.name}: {type(e).__name__}")
            continue
        for name, obj in vars(module).items():
            if (isinstance(obj, type) and issubclass(obj, enum.Enum) and name.endswith("ErrorCode")
                    and obj is not server and obj.__module__.startswith("cosmo_ai")):
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    verdicts = {}
    for qual, cls in sorted(found.items()):
        try:
            value = cls(UNKNOWN)
            verdicts[qual] = {"closed": False, "got": repr(value)}
        except ValueError:
            verdicts[qual] = {"closed": True}
    observed["server_enum"] = f"{server.__module__}.{server.__qualname__}" if server else None
    observed["sdk_raised"] = verdicts
    observed["modules_not_imported"] = skipped[:20]
    if not verdicts:
        report["not_applicable"] = ("this release raises no enum-typed error codes of its own (no *ErrorCode enum "
                                    "besides the server-authored one)")


async def main() -> None:
    check = CFG["check"]
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _l, ctx: report["loop_errors"].append(
        f"{ctx.get('message')}: {ctx.get('exception')!r}"[:1000]))
    try:
        report["sdk_version"] = importlib.metadata.version(DIST)
        report["installed"] = {"name": DIST, "version": report["sdk_version"]}
        sdk = Sdk()
    except Exception as e:  # noqa: BLE001
        report["import_error"] = err(e)
        return
    report["path"] = sdk.path
    observed: dict[str, Any] = report["observed"]
    if sdk.client_cls is None:
        names = sorted(n for n in dir(sdk.mod) if not n.startswith("_"))
        report["not_applicable"] = f"the release contains no client (cosmo_ai exports {names[:20]})"
        return
    report["api"] = {"client": sdk.client_cls.__name__, "path": sdk.path}
    try:
        report["closed_sets"] = closed_sets(sdk)
    except Exception as e:  # noqa: BLE001 - the inventory is evidence, not the check
        report["closed_sets_error"] = f"{type(e).__name__}: {e}"[:500]
    sdk.patch_room()
    if check.startswith(("frame.", "set.")) and CFG.get("two_sessions"):
        client = sdk.client()
        observed["known"] = await session_events(client, "session_known")
        observed["unknown"] = await session_events(client, "session_unknown")
    elif check.startswith("frame."):
        await check_frames(sdk, observed)
    elif check == "enum.error-code":
        await check_error_code(sdk, observed)
    elif check == "enum.credential-kind":
        await check_credential_kind(sdk, observed)
    elif check == "enum.session-status":
        await check_usage(sdk, observed, "status")
    elif check == "enum.usage-status":
        await check_usage(sdk, observed, "usage_status")
    elif check == "enum.sdk-raised-closed":
        check_sdk_raised_closed(sdk, observed)
    elif check.startswith("identity.version-mismatch"):
        await check_version_mismatch(sdk, observed)
    elif check in ("identity.sdk-block", "identity.rest-header", "identity.exports",
                   "strict.session-start", "strict.data-channel"):
        exports(observed)
        await tour(sdk, observed)
    else:
        report["harness_error"] = f"unknown check {check!r}"


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except BaseException as e:  # noqa: BLE001
        report["harness_error"] = f"agent crashed: {type(e).__name__}: {e}"[:2000]
    emit()
