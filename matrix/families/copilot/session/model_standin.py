"""A stand-in of the model a Copilot CLI talks to: ours, small, scripted, on 127.0.0.1.

It answers what a CLI asks on its way to a turn (the user it acts for, the models it may use,
an MCP endpoint, memory settings: minimal answers, a 404 for anything else) and OpenAI chat
completions (streamed as server-sent events when the request says ``stream``, one JSON object
otherwise). What the model says is scripted by the user's message, so a turn is the same on
every cell: a message carrying ``TURN <name> <nonce>`` asks for turn ``<name>`` of ``TURNS``.

Every request is logged (one JSON object per line: the path, what the model was shown, what it
answered), with no header values: the log is the cell's evidence of what reached the model."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

from matrix.probes.serving import serving

__all__ = ["MODEL", "TOOL", "TURNS", "ModelStandin", "Turn", "prompt", "running"]

MODEL = "compat-matrix-model"  # the one model it serves
TOOL = "compat_matrix_echo"  # the custom tool an application registers: it returns its text, upper-cased
_TURN = re.compile(r"TURN (\w+) (\w+)")


@dataclass(frozen=True)
class Turn:
    name: str
    # What the model does first: answer, call the application's tool, or call a tool of the
    # CLI's own that needs the application's permission (a file written in the work dir).
    calls: str  # "" | "custom" | "builtin"
    what: str


TURNS: dict[str, Turn] = {t.name: t for t in (
    Turn("reply", "", "a plain reply"),
    Turn("tool", "custom", "a call of the application's tool, then a reply using its result"),
    Turn("approved", "builtin", "a built-in tool that needs permission, the application approving it"),
    Turn("denied", "builtin", "a built-in tool that needs permission, the application denying it"),
)}


def prompt(turn: str, nonce: str) -> str:
    """The user's message that asks the model for ``turn``."""
    return f"compat-matrix scripted turn. TURN {turn} {nonce}"


def file_name(nonce: str) -> str:
    """The file a built-in tool turn asks the CLI to write (in the session's work directory)."""
    return f"compat-matrix-{nonce}.txt"


def _text(content: Any) -> str:
    """A message's text, whether a string or a list of content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _builtin_call(tools: list[dict[str, Any]], nonce: str) -> tuple[str, dict[str, Any]] | None:
    """A call of one of the CLI's own tools that writes ``file_name(nonce)``: a shell tool (a
    ``command`` parameter) or a file-creating one (``path`` and the file's text), as offered."""
    functions = [t.get("function", {}) for t in tools if isinstance(t, dict)]
    for fn in functions:
        props = (fn.get("parameters") or {}).get("properties") or {}
        if "command" in props:
            args = {"command": f"echo compat-matrix > {file_name(nonce)}"}
            return str(fn.get("name")), _required(fn, args)
    for fn in functions:
        props = (fn.get("parameters") or {}).get("properties") or {}
        body = next((k for k in ("file_text", "content", "text") if k in props), None)
        if "path" in props and body:
            return str(fn.get("name")), _required(fn, {"path": file_name(nonce), body: "compat-matrix\n"})
    return None


def _required(fn: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
    """``args`` with a plain value for every other required parameter of ``fn``."""
    params = fn.get("parameters") or {}
    for name in params.get("required") or []:
        if name not in args:
            kind = (params.get("properties") or {}).get(name, {}).get("type")
            args[name] = {"boolean": False, "integer": 0, "number": 0}.get(str(kind), "compat-matrix")
    return args


@dataclass
class ModelStandin:
    log: Path
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _calls: int = 0

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        return app

    def _record(self, entry: dict[str, Any]) -> None:
        with self._lock, self.log.open("a", encoding="utf-8") as f:
            f.write(json.dumps({"t": round(time.time(), 3), **entry}, sort_keys=True, default=str) + "\n")

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        path = "/" + request.match_info["tail"]
        body: Any = None
        if request.can_read_body:
            raw = await request.read()
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = {"unparsed": raw[:200].decode("utf-8", "replace")}
        bare = path.removeprefix("/v1")
        if bare.endswith("/chat/completions"):
            return await self._completion(request, path, body if isinstance(body, dict) else {})
        answer, status = self._other(bare, body, str(request.url.origin()))
        self._record({"path": path, "method": request.method, "status": status,
                      "rpc": body.get("method") if isinstance(body, dict) else None})
        return web.json_response(answer, status=status)

    def _other(self, path: str, body: Any, origin: str) -> tuple[Any, int]:
        if path.endswith("/copilot_internal/user") or path == "/user":
            return {"login": "compat-matrix", "copilot_plan": "individual", "is_mcp_enabled": False,
                    "endpoints": {"api": origin}, "organization_list": []}, 200
        if path.endswith("/models"):
            return {"data": [{"id": MODEL, "name": MODEL, "object": "model", "vendor": "compat-matrix",
                              "capabilities": {"type": "chat", "family": MODEL,
                                               "supports": {"tool_calls": True, "streaming": True},
                                               "limits": {"max_context_window_tokens": 128000,
                                                          "max_output_tokens": 4096}}}]}, 200
        if path.endswith("/mcp") and isinstance(body, dict):
            if "id" not in body:
                return {}, 202
            result = ({"protocolVersion": "2025-03-26", "capabilities": {"tools": {}},
                       "serverInfo": {"name": "compat-matrix", "version": "1"}}
                      if body.get("method") == "initialize" else {"tools": []})
            return {"jsonrpc": "2.0", "id": body["id"], "result": result}, 200
        if "/memory" in path:
            return ({"enabled": False} if path.endswith("/enabled") else {"memories": []}), 200
        return {"error": "not served by the compat-matrix stand-in"}, 404

    def decide(self, body: dict[str, Any]) -> dict[str, Any]:
        """The assistant message the script gives for this conversation (the last user message
        chooses the turn; a tool result after it means the call was answered)."""
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
        last = messages[users[-1]] if users else {}
        found = _TURN.search(_text(last.get("content")))
        after = messages[users[-1] + 1:] if users else []
        results = [_text(m.get("content")) for m in after if m.get("role") == "tool"]
        if found is None or found.group(1) not in TURNS:
            return {"role": "assistant", "content": "compat-matrix stand-in: no scripted turn asked for"}
        turn, nonce = TURNS[found.group(1)], found.group(2)
        if results or not turn.calls:
            said = f" The tool said: {results[-1]}" if results else ""
            return {"role": "assistant", "content": f"compat-matrix {turn.name} {nonce}.{said}"}
        if turn.calls == "custom":
            name, args = TOOL, {"text": nonce}
        else:
            call = _builtin_call(body.get("tools") or [], nonce)
            if call is None:
                return {"role": "assistant", "content": f"compat-matrix {turn.name} {nonce}: no built-in tool offered"}
            name, args = call
        return {"role": "assistant", "content": None,
                "tool_calls": [{"id": f"call_{nonce}", "type": "function",
                                "function": {"name": name, "arguments": json.dumps(args)}}]}

    async def _completion(self, request: web.Request, path: str, body: dict[str, Any]) -> web.StreamResponse:
        with self._lock:
            self._calls += 1
            n = self._calls
        message = self.decide(body)
        shown = [{"role": m.get("role"), "text": _text(m.get("content"))[:300],
                  "tool_calls": [c.get("function", {}).get("name") for c in m.get("tool_calls") or []]}
                 for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") != "system"]
        self._record({"path": path, "method": request.method, "status": 200, "model": body.get("model"),
                      "stream": bool(body.get("stream")), "messages": shown,
                      "tools": sorted(str(t.get("function", {}).get("name")) for t in body.get("tools") or []
                                      if isinstance(t, dict)),
                      "answer": message})
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        ident, created = f"chatcmpl-{n}", int(time.time())
        if not body.get("stream"):
            return web.json_response({"id": ident, "object": "chat.completion", "created": created, "model": MODEL,
                                      "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                                      "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}})
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await response.prepare(request)
        for delta, done in _deltas(message):
            chunk = {"id": ident, "object": "chat.completion.chunk", "created": created, "model": MODEL,
                     "choices": [{"index": 0, "delta": delta, "finish_reason": finish if done else None}]}
            await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response


def _deltas(message: dict[str, Any]) -> Iterator[tuple[dict[str, Any], bool]]:
    """The streamed pieces of ``message``: its role, its text in two parts or its tool calls,
    then the end."""
    yield {"role": "assistant", "content": ""}, False
    text = message.get("content") or ""
    if text:
        half = len(text) // 2
        yield {"content": text[:half]}, False
        yield {"content": text[half:]}, False
    for i, call in enumerate(message.get("tool_calls") or []):
        yield {"tool_calls": [{"index": i, "id": call["id"], "type": "function",
                               "function": {"name": call["function"]["name"], "arguments": ""}}]}, False
        yield {"tool_calls": [{"index": i, "function": {"arguments": call["function"]["arguments"]}}]}, False
    yield {}, True


@contextmanager
def running(log: Path) -> Iterator[str]:
    """The stand-in for the block; yields its address (``http://127.0.0.1:PORT``)."""
    standin = ModelStandin(log)
    with serving(standin.app, "the model stand-in") as port:
        yield f"http://127.0.0.1:{port}"
