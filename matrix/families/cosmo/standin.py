"""A local stand-in for the Cosmo backend: REST session start and the websocket lane.

Small on purpose. What it does in a session is data (a ``Scenario``), not code paths; it
logs every request, header and frame it receives to a JSON-lines file; it binds only to
127.0.0.1 on a free port. Strict on inbound keys, as Cosmo's design says the real server is: an
unknown field on session start is a 422 naming the field; on the data channel the frame is
dropped and the rejection recorded here, never sent back.

Run for a probe:  python -m matrix.families.cosmo.standin --scenario S.json --log L.jsonl --port-file P
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
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from aiohttp import WSMsgType, web

from matrix.families.cosmo.contract import SESSION_CONFIG, WS_CLIENT_FRAMES, unknown_keys

__all__ = ["API", "Scenario", "StandIn", "running"]

API = "/api/v1/external"
VERIFY = {"credential": "api_key", "scopes": ["realtime"], "can_start_sessions": True,
          "realtime_voice_available": True}
USAGE = {"status": "completed", "usage_status": "recorded", "duration_seconds": 1.0}
AUDIO_FORMAT = {"type": "ws-audio-format", "input_sample_rate_hz": 16000, "output_sample_rate_hz": 24000,
                "num_channels": 1}


@dataclass(frozen=True)
class Scenario:
    """What the server does, as data.

    ``sessions``: for the n-th session started, the frames (objects, or raw text for
    malformed ones) sent right after ``ready``; the last entry serves every later session.
    ``start_error``: refuse session start with {"status", "code", "message"}.
    ``verify`` / ``usage``: the bodies those calls answer with, in order (the last repeats).
    ``echo_text``: answer send-text with model-text. ``lenient``: places ("session-start",
    "data-channel") where keys beyond the contract are recorded but the message accepted, for
    probes about something else (and to reach the data channel past a refused start).
    ``pre_ready``: frames sent on the data channel before ``ready`` (a server refusing the
    connection there); ``send_ready``: false to never send ``ready``; ``close_after_pre_ready``:
    end the channel right after the ``pre_ready`` frames."""

    sessions: list[list[Any]] = field(default_factory=list)
    start_error: dict[str, Any] | None = None
    verify: list[dict[str, Any]] = field(default_factory=lambda: [dict(VERIFY)])
    usage: list[dict[str, Any]] = field(default_factory=lambda: [dict(USAGE)])
    echo_text: bool = True
    lenient: list[str] = field(default_factory=list)
    pre_ready: list[Any] = field(default_factory=list)
    send_ready: bool = True
    close_after_pre_ready: bool = False

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Scenario:
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown scenario keys {sorted(unknown)}; valid: {sorted(known)}")
        return cls(**data)

    def frames_for(self, index: int) -> list[Any]:
        return self.sessions[min(index, len(self.sessions) - 1)] if self.sessions else []


class _Channel:
    """The server's side of a data channel: a websocket, or the relay's frame queue."""

    def __init__(self, ws: web.WebSocketResponse | None = None) -> None:
        self.ws = ws
        self.queue: asyncio.Queue[str | None] = asyncio.Queue()

    async def send(self, frame: Any) -> None:
        text = frame if isinstance(frame, str) else json.dumps(frame)
        if self.ws is not None:
            await self.ws.send_str(text)
        else:
            await self.queue.put(text)

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
        else:
            await self.queue.put(None)


class StandIn:
    def __init__(self, scenario: Scenario, log: Path) -> None:
        self.scenario = scenario
        self.log_path = log
        self.port = 0
        self.sessions: dict[str, str] = {}  # subprotocol credential -> session id
        self.relays: dict[str, _Channel] = {}  # session id -> the relay's channel
        self.index: dict[str, int] = {}  # session id -> its place in the order of starts
        self.started = 0
        self.calls: dict[str, int] = {}
        self.storage_error: OSError | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log(self, kind: str, **entry: Any) -> None:
        """Record one entry. A disk that refuses it never changes what the SDK sees: the server
        goes on, and the failure waits in ``storage_error`` for the harness to end the run."""
        if self.storage_error is not None:
            return
        try:
            with self.log_path.open("a", encoding="utf-8") as f:
                f.write(json.dumps({"t": round(time.time(), 4), "kind": kind, **entry}, default=str) + "\n")
        except OSError as err:
            self.storage_error = err

    def _request(self, request: web.Request, body: Any) -> None:
        headers = {k.lower(): ("<redacted>" if k.lower() == "authorization" else v)
                   for k, v in request.headers.items()}
        self.log("request", method=request.method, path=request.path, headers=headers, body=body,
                 sdk_header=request.headers.get("X-Cosmo-SDK"))

    def _next(self, name: str, answers: list[dict[str, Any]]) -> dict[str, Any]:
        n = self.calls.get(name, 0)
        self.calls[name] = n + 1
        return answers[min(n, len(answers) - 1)]

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

    def _refuse(self, where: str, unknown: list[str], **entry: Any) -> bool:
        """Record keys beyond the contract; True when the message must be refused."""
        refuse = where not in self.scenario.lenient
        self.log("rejected" if refuse else "would-reject", where=where, unknown=unknown, **entry)
        return refuse

    async def _start(self, request: web.Request, websocket: bool) -> web.Response:
        body = await self._body(request)
        self._request(request, body)
        if not isinstance(body, dict):
            return self._error(400, "invalid_json", "the body is not a JSON object")
        unknown = unknown_keys(body, SESSION_CONFIG)
        if unknown and self._refuse("session-start", unknown):
            return self._error(422, "unknown_field", f"unknown field: {unknown[0]}")
        err = self.scenario.start_error
        if err:
            return self._error(int(err.get("status", 409)), str(err["code"]), str(err.get("message", err["code"])))
        session_id = f"s-{secrets.token_hex(4)}"
        self.index[session_id], self.started = self.started, self.started + 1
        if not websocket:
            # The room lane of 0.1-0.5: no room is hosted here; the probe's relay transport
            # carries the data channel over /relay (see relay_read).
            self.relays[session_id] = _Channel()
            return web.json_response({"livekit_url": f"ws://127.0.0.1:{self.port}/no-room", "token": "relay",
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
        return web.json_response(self._next("verify", self.scenario.verify))

    async def usage(self, request: web.Request) -> web.Response:
        self._request(request, None)
        return web.json_response(self._next("usage", self.scenario.usage))

    async def mint_token(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        self._request(request, body)
        expires = datetime.fromtimestamp(time.time() + 600, UTC).isoformat(timespec="seconds")
        return web.json_response({"jwt": f"jwt-{secrets.token_hex(8)}", "expires_at": expires})

    async def _after_ready(self, channel: _Channel, session_id: str) -> bool:
        """The server's side of a session's start; False when the scenario ends the channel
        before ``ready``."""
        for frame in self.scenario.pre_ready:
            self.log("sent", session_id=session_id, frame=frame, before_ready=True)
            await channel.send(frame)
        if self.scenario.close_after_pre_ready:
            self.log("closed-before-ready", session_id=session_id)
            await channel.close()
            return False
        if not self.scenario.send_ready:
            return True
        await channel.send({"type": "ready", "session_id": session_id, "rejected_tools": []})
        for frame in self.scenario.frames_for(self.index[session_id]):
            self.log("sent", session_id=session_id, frame=frame)
            await channel.send(frame)
        return True

    async def connect(self, request: web.Request) -> web.StreamResponse:
        offered = request.headers.get("Sec-WebSocket-Protocol", "")
        credential = next((p.strip() for p in offered.split(",") if p.strip() in self.sessions), None)
        self._request(request, None)
        if credential is None:
            return self._error(401, "auth_failed", "unknown websocket subprotocol")
        ws = web.WebSocketResponse(protocols=[credential])
        await ws.prepare(request)
        session_id = self.sessions[credential]
        channel = _Channel(ws)
        await ws.send_json(AUDIO_FORMAT)
        if not await self._after_ready(channel, session_id):
            return ws
        async for msg in ws:
            if msg.type == WSMsgType.BINARY:
                continue  # microphone audio: nothing to check
            if msg.type != WSMsgType.TEXT:
                break
            await self._frame(channel, msg.data)
        self.log("closed", session_id=session_id)
        return ws

    async def relay_read(self, request: web.Request) -> web.StreamResponse:
        """Server -> client frames of a room-lane session, one per line, until it ends."""
        session_id = request.match_info["session_id"]
        self._request(request, None)
        channel = self.relays.get(session_id)
        if channel is None:
            return self._error(404, "not_found", f"no room-lane session {session_id}")
        response = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
        await response.prepare(request)
        await self._after_ready(channel, session_id)  # a channel closed before ready ends the loop below
        while (text := await channel.queue.get()) is not None:
            await response.write(text.encode() + b"\n")
        self.log("closed", session_id=session_id)
        return response

    async def relay_write(self, request: web.Request) -> web.Response:
        """Client -> server: one data-channel frame per request, judged like a websocket frame."""
        channel = self.relays.get(request.match_info["session_id"])
        if channel is None:
            return self._error(404, "not_found", "no such room-lane session")
        await self._frame(channel, await request.text())
        return web.Response(status=204)  # accepted or dropped, the client learns nothing either way

    async def _frame(self, channel: _Channel, text: str) -> None:
        try:
            frame = json.loads(text)
        except ValueError:
            self._refuse("data-channel", [], frame=text[:2000], reason="not JSON")
            return
        self.log("frame", frame=frame)
        schema = WS_CLIENT_FRAMES.get(str(frame.get("type"))) if isinstance(frame, dict) else None
        if schema is None:
            if self._refuse("data-channel", [], frame=frame, reason="unknown frame type"):
                return
        else:
            unknown = unknown_keys(frame, schema)
            # Dropped, never answered: an error frame would read as terminal to current clients.
            if unknown and self._refuse("data-channel", unknown, frame=frame):
                return
        kind = frame.get("type") if isinstance(frame, dict) else None
        if kind == "send-text" and self.scenario.echo_text:
            await channel.send({"type": "model-text", "text": f"echo: {frame.get('content', '')}", "is_final": True})
            # The wire spells roles in capitals (every release's own tests do; 0.1.0 knows only those).
            await channel.send({"type": "turn-complete", "role": "ASSISTANT"})
        elif kind == "ping":
            await channel.send({"type": "pong"})
        elif kind == "end":
            await channel.send({"type": "session-ended", "reason": "client_ended"})
            await channel.close()

    def app(self) -> web.Application:
        app = web.Application()
        app.add_routes([
            web.post(f"{API}/realtime/session/ws-start", self.ws_start),
            web.post(f"{API}/realtime/session/start", self.room_start),
            web.post(f"{API}/realtime/session", self.room_start),
            web.get(f"{API}/realtime/verify", self.verify),
            web.get(f"{API}/sessions/{{session_id}}/usage", self.usage),
            web.post(f"{API}/auth/token", self.mint_token),
            web.get("/connect", self.connect),
            web.get("/relay/{session_id}", self.relay_read),
            web.post("/relay/{session_id}", self.relay_write),
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
