"""A local stand-in for the Cosmo backend: REST session start and the websocket lane.

Small on purpose. What it does in a session is data (a ``Scenario``), not code paths; it
logs every request, header and frame it receives to a JSON-lines file; it binds only to
127.0.0.1 on a free port. Strict on inbound keys, as seed 002 says the real server is: an
unknown field on session start is a 422 naming the field; on the data channel the frame is
dropped and the rejection recorded here, never sent back.

Run for a probe:  python -m matrix.cosmo.standin --scenario S.json --log L.jsonl --port-file P
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import socket
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import WSMsgType, web

from .contract import SESSION_CONFIG, WS_CLIENT_FRAMES, unknown_keys

__all__ = ["API", "Scenario", "StandIn", "running"]

API = "/api/v1/external"
AUDIO_FORMAT = {"type": "ws-audio-format", "input_sample_rate_hz": 16000, "output_sample_rate_hz": 24000,
                "num_channels": 1}


@dataclass(frozen=True)
class Scenario:
    """What the server does in a session. ``after_ready``: frames (objects, or raw text for
    malformed ones) sent right after ``ready``; ``start_error``: refuse session start with
    {"status", "code", "message"}; ``echo_text``: answer send-text with model-text."""

    after_ready: list[Any] = field(default_factory=list)
    start_error: dict[str, Any] | None = None
    echo_text: bool = True

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Scenario:
        unknown = set(data) - {"after_ready", "start_error", "echo_text"}
        if unknown:
            raise ValueError(f"unknown scenario keys {sorted(unknown)}")
        return cls(**data)


class StandIn:
    def __init__(self, scenario: Scenario, log: Path) -> None:
        self.scenario = scenario
        self.log_path = log
        self.port = 0
        self.sessions: dict[str, str] = {}  # subprotocol credential -> session id

    def log(self, kind: str, **entry: Any) -> None:
        with self.log_path.open("a", encoding="utf-8") as f:
            f.write(json.dumps({"t": round(time.time(), 4), "kind": kind, **entry}, default=str) + "\n")

    def _request(self, request: web.Request, body: Any) -> None:
        headers = {k.lower(): ("<redacted>" if k.lower() == "authorization" else v)
                   for k, v in request.headers.items()}
        self.log("request", method=request.method, path=request.path, headers=headers, body=body,
                 sdk_header=request.headers.get("X-Cosmo-SDK"))

    @staticmethod
    def _error(status: int, code: str, message: str) -> web.Response:
        return web.json_response({"error": {"type": "invalid_request_error", "code": code, "message": message}},
                                 status=status)

    async def _body(self, request: web.Request) -> Any:
        raw = await request.text()
        try:
            return json.loads(raw) if raw else {}
        except ValueError:
            return raw

    async def _start(self, request: web.Request, websocket: bool) -> web.Response:
        body = await self._body(request)
        self._request(request, body)
        if not isinstance(body, dict):
            return self._error(400, "invalid_json", "the body is not a JSON object")
        unknown = unknown_keys(body, SESSION_CONFIG)
        if unknown:
            self.log("rejected", where="session-start", unknown=unknown)
            return self._error(422, "unknown_field", f"unknown field: {unknown[0]}")
        err = self.scenario.start_error
        if err:
            return self._error(int(err.get("status", 409)), str(err["code"]), str(err.get("message", err["code"])))
        session_id = f"s-{secrets.token_hex(4)}"
        if not websocket:  # the LiveKit lane of 0.1-0.5: we answer, but host no room
            return web.json_response({"livekit_url": "ws://127.0.0.1:9/unused", "token": "t",
                                      "room_name": session_id, "session_id": session_id})
        credential = f"cap-{secrets.token_hex(8)}"
        self.sessions[credential] = session_id
        return web.json_response({"session_id": session_id, "ws_url": f"ws://127.0.0.1:{self.port}/connect",
                                  "ws_subprotocol": credential})

    async def ws_start(self, request: web.Request) -> web.Response:
        return await self._start(request, websocket=True)

    async def room_start(self, request: web.Request) -> web.Response:
        return await self._start(request, websocket=False)

    async def verify(self, request: web.Request) -> web.Response:
        self._request(request, None)
        return web.json_response({"credential": "api_key", "scopes": ["realtime"], "can_start_sessions": True,
                                  "realtime_voice_available": True})

    async def usage(self, request: web.Request) -> web.Response:
        self._request(request, None)
        return web.json_response({"status": "completed", "usage_status": "recorded", "duration_seconds": 1.0})

    async def connect(self, request: web.Request) -> web.StreamResponse:
        offered = request.headers.get("Sec-WebSocket-Protocol", "")
        credential = next((p.strip() for p in offered.split(",") if p.strip() in self.sessions), None)
        self._request(request, None)
        if credential is None:
            return self._error(401, "auth_failed", "unknown websocket subprotocol")
        ws = web.WebSocketResponse(protocols=[credential])
        await ws.prepare(request)
        session_id = self.sessions[credential]
        await ws.send_json(AUDIO_FORMAT)
        await ws.send_json({"type": "ready", "session_id": session_id, "rejected_tools": []})
        for frame in self.scenario.after_ready:
            self.log("sent", frame=frame)
            await (ws.send_str(frame) if isinstance(frame, str) else ws.send_json(frame))
        async for msg in ws:
            if msg.type == WSMsgType.BINARY:
                continue  # microphone audio: nothing to check
            if msg.type != WSMsgType.TEXT:
                break
            await self._frame(ws, msg.data)
        self.log("closed", session_id=session_id)
        return ws

    async def _frame(self, ws: web.WebSocketResponse, text: str) -> None:
        try:
            frame = json.loads(text)
        except ValueError:
            self.log("rejected", where="data-channel", frame=text[:2000], reason="not JSON")
            return
        self.log("frame", frame=frame)
        schema = WS_CLIENT_FRAMES.get(str(frame.get("type"))) if isinstance(frame, dict) else None
        if schema is None:
            self.log("rejected", where="data-channel", frame=frame, reason="unknown frame type")
            return
        unknown = unknown_keys(frame, schema)
        if unknown:  # dropped; an error frame would read as terminal to current clients
            self.log("rejected", where="data-channel", frame=frame, unknown=unknown)
            return
        kind = frame["type"]
        if kind == "send-text" and self.scenario.echo_text:
            await ws.send_json({"type": "model-text", "text": f"echo: {frame.get('content', '')}", "is_final": True})
            await ws.send_json({"type": "turn-complete", "role": "assistant"})
        elif kind == "ping":
            await ws.send_json({"type": "pong"})
        elif kind == "end":
            await ws.send_json({"type": "session-ended", "reason": "client_ended"})
            await ws.close()

    def app(self) -> web.Application:
        app = web.Application()
        app.add_routes([
            web.post(f"{API}/realtime/session/ws-start", self.ws_start),
            web.post(f"{API}/realtime/session/start", self.room_start),
            web.get(f"{API}/realtime/verify", self.verify),
            web.get(f"{API}/sessions/{{session_id}}/usage", self.usage),
            web.get("/connect", self.connect),
        ])
        return app


@asynccontextmanager
async def running(scenario: Scenario, log: Path) -> AsyncIterator[StandIn]:
    """Serve on 127.0.0.1 at a free port for the duration of the block."""
    server = StandIn(scenario, log)
    runner = web.AppRunner(server.app(), access_log=None)
    await runner.setup()
    # Our own socket: loopback only, a free port the kernel picks, and we can read it back.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    server.port = sock.getsockname()[1]
    await web.SockSite(runner, sock).start()
    try:
        yield server
    finally:
        await runner.cleanup()


async def _serve(scenario: Scenario, log: Path, port_file: Path) -> None:
    async with running(scenario, log) as server:
        port_file.write_text(str(server.port))
        await asyncio.Event().wait()  # until the harness terminates the process


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scenario", type=Path, required=True)
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("--port-file", type=Path, required=True)
    args = parser.parse_args()
    scenario = Scenario.from_json(json.loads(args.scenario.read_text()))
    asyncio.run(_serve(scenario, args.log, args.port_file))


if __name__ == "__main__":
    main()
