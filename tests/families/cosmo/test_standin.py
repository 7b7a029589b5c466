"""The Cosmo stand-in's strictness and session flow, over real HTTP and websockets on
loopback (aiohttp's own client plays the SDK)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from matrix.families.cosmo.contract import SESSION_CONFIG, WS_CLIENT_FRAMES, unknown_keys
from matrix.families.cosmo.standin import API, AUDIO_FORMAT, Scenario, running

CONFIG = {"type": "session-config", "sdk": {"name": "cosmo-ai-sdk", "version": "0.6.1"},
          "agent": {"type": "inline", "instructions": "Be terse.", "audio": {"output": False}}, "session": {}}


def entries(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_contract_names_unknown_keys_by_path() -> None:
    assert unknown_keys(CONFIG, SESSION_CONFIG) == []
    bad = {**CONFIG, "agent": {**CONFIG["agent"], "temperature": 1}, "session": {"experimental": {"x": 1}}}
    assert unknown_keys(bad, SESSION_CONFIG) == ["session.experimental.x", "agent.temperature"]
    assert unknown_keys({**CONFIG, "id": "abc"}, SESSION_CONFIG) == []  # the declared legacy field
    assert unknown_keys({"type": "send-text", "content": "x", "options": {}}, WS_CLIENT_FRAMES["send-text"]) == [
        "options"]


async def _session(tmp: Path, config: dict[str, Any], frames: list[Any],
                   scenario: Scenario) -> tuple[int, Any, list[Any]]:
    log = tmp / "log.jsonl"
    async with running(scenario, log) as server, aiohttp.ClientSession() as http:
        base = f"http://127.0.0.1:{server.port}"
        headers = {"Authorization": "Bearer k", "X-Cosmo-SDK": "cosmo-ai-sdk/0.6.1"}
        async with http.post(f"{base}{API}/realtime/session/ws-start", json=config, headers=headers) as resp:
            status, body = resp.status, await resp.json()
        received: list[Any] = []
        if status != 200:
            return status, body, received
        async with http.ws_connect(body["ws_url"], protocols=[body["ws_subprotocol"]]) as ws:
            for frame in frames:
                await ws.send_str(frame if isinstance(frame, str) else json.dumps(frame))
            while True:
                msg = await asyncio.wait_for(ws.receive(), 5)
                if msg.type != aiohttp.WSMsgType.TEXT:
                    break
                try:
                    received.append(json.loads(msg.data))
                except ValueError:
                    received.append(msg.data)  # a malformed frame the scenario sent on purpose
        return status, body, received


def test_session_flow_and_log(tmp_path: Path) -> None:
    frames = [{"type": "send-text", "content": "hello"}, {"type": "end"}]
    status, _, got = asyncio.run(_session(tmp_path, CONFIG, frames, Scenario()))
    assert status == 200
    assert [f["type"] for f in got] == ["ws-audio-format", "ready", "model-text", "turn-complete", "session-ended"]
    assert got[2]["text"] == "echo: hello"
    log = entries(tmp_path / "log.jsonl")
    start = next(e for e in log if e["kind"] == "request" and e["path"].endswith("/ws-start"))
    assert start["sdk_header"] == "cosmo-ai-sdk/0.6.1" and start["headers"]["authorization"] == "<redacted>"
    assert start["body"]["sdk"] == {"name": "cosmo-ai-sdk", "version": "0.6.1"}


def test_unknown_field_on_session_start_is_a_422_naming_it(tmp_path: Path) -> None:
    config = {**CONFIG, "agent": {**CONFIG["agent"], "temperature": 0.2}}
    status, body, _ = asyncio.run(_session(tmp_path, config, [], Scenario()))
    assert status == 422 and "agent.temperature" in body["error"]["message"]


def test_unknown_field_on_the_data_channel_is_dropped_and_recorded_not_answered(tmp_path: Path) -> None:
    frames = [{"type": "send-text", "content": "hi", "options": {"audio_response": True}}, {"type": "end"}]
    _, _, got = asyncio.run(_session(tmp_path, CONFIG, frames, Scenario()))
    assert [f["type"] for f in got] == ["ws-audio-format", "ready", "session-ended"]  # no error frame, no echo
    rejected = [e for e in entries(tmp_path / "log.jsonl") if e["kind"] == "rejected"]
    assert rejected and rejected[0]["unknown"] == ["options"] and rejected[0]["where"] == "data-channel"


def test_scenario_frames_follow_ready_and_start_errors_are_data(tmp_path: Path) -> None:
    scenario = Scenario(sessions=[[{"type": "brand-new-event", "x": 1}, "{not json"]],
                        echo_text=False)
    _, _, got = asyncio.run(_session(tmp_path, CONFIG, [{"type": "end"}], scenario))
    assert got[2:4] == [{"type": "brand-new-event", "x": 1}, "{not json"]
    refused = Scenario(start_error={"status": 409, "code": "version_mismatch", "message": "upgrade"})
    other = tmp_path / "refused"
    other.mkdir()
    status, body, _ = asyncio.run(_session(other, CONFIG, [], refused))
    assert status == 409 and body["error"]["code"] == "version_mismatch"


def test_scenario_rejects_unknown_keys() -> None:
    with pytest.raises(ValueError, match="bogus"):
        Scenario.from_json({"bogus": 1})


def test_lenient_places_record_what_a_strict_server_refuses_but_accept_it(tmp_path: Path) -> None:
    config = {**CONFIG, "version": "1.0"}
    frames = [{"type": "send-text", "content": "hi", "options": {}}, {"type": "end"}]
    lenient = Scenario(lenient=["session-start", "data-channel"])
    status, _, got = asyncio.run(_session(tmp_path, config, frames, lenient))
    assert status == 200 and [f["type"] for f in got][2:4] == ["model-text", "turn-complete"]
    log = entries(tmp_path / "log.jsonl")
    assert not [e for e in log if e["kind"] == "rejected"]
    assert [(e["where"], e["unknown"]) for e in log if e["kind"] == "would-reject"] == [
        ("session-start", ["version"]), ("data-channel", ["options"])]


def test_sessions_get_their_own_frames_and_rest_answers_come_in_order(tmp_path: Path) -> None:
    scenario = Scenario(sessions=[[{"type": "first"}], [{"type": "second"}]], echo_text=False,
                        verify=[{"credential": "api_key"}, {"credential": "new_kind"}])

    async def run() -> tuple[list[str], list[str]]:
        types = []
        async with running(scenario, tmp_path / "log.jsonl") as server, aiohttp.ClientSession() as http:
            for _ in range(3):
                async with http.post(f"{server.url}{API}/realtime/session/ws-start", json=CONFIG) as resp:
                    body = await resp.json()
                async with http.ws_connect(body["ws_url"], protocols=[body["ws_subprotocol"]]) as ws:
                    for _ in range(3):
                        types.append(json.loads((await ws.receive()).data)["type"])
            kinds = []
            for _ in range(3):
                async with http.get(f"{server.url}{API}/realtime/verify") as resp:
                    kinds.append((await resp.json())["credential"])
        return types, kinds

    types, kinds = asyncio.run(run())
    assert types == ["ws-audio-format", "ready", "first"] + ["ws-audio-format", "ready", "second"] * 2
    assert kinds == ["api_key", "new_kind", "new_kind"]


def test_room_lane_relay_carries_frames_both_ways_and_judges_them_like_websocket_frames(tmp_path: Path) -> None:
    scenario = Scenario(sessions=[[{"type": "brand-new-event"}]])

    async def run() -> tuple[int, dict[str, Any], list[dict[str, Any]]]:
        async with running(scenario, tmp_path / "log.jsonl") as server, aiohttp.ClientSession() as http:
            async with http.post(f"{server.url}{API}/realtime/session/start", json=CONFIG) as resp:
                status, body = resp.status, await resp.json()
            url = f"{server.url}/relay/{body['session_id']}"
            got = []
            async with http.get(url) as stream:
                for frame in ({"type": "send-text", "content": "x", "options": {}},
                              {"type": "send-text", "content": "hi"}, {"type": "end"}):
                    async with http.post(url, data=json.dumps(frame)) as resp:
                        assert resp.status == 204  # dropped or not, the client learns nothing
                async for line in stream.content:
                    got.append(json.loads(line))
            return status, body, got

    status, body, got = asyncio.run(run())
    assert status == 200 and {"livekit_url", "token", "room_name", "session_id"} <= set(body)
    assert [f["type"] for f in got] == ["ready", "brand-new-event", "model-text", "turn-complete", "session-ended"]
    assert got[2]["text"] == "echo: hi"
    rejected = [e for e in entries(tmp_path / "log.jsonl") if e["kind"] == "rejected"]
    assert [(e["where"], e["unknown"]) for e in rejected] == [("data-channel", ["options"])]


def _listening(port: int) -> list[str]:
    """Local addresses listening on ``port``, from the kernel's own table."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            addr, hex_port = local.rsplit(":", 1)
            if state == "0A" and int(hex_port, 16) == port:
                found.append(addr)
    return found


def test_the_stand_in_listens_on_loopback_only(tmp_path: Path) -> None:
    async def run() -> list[str]:
        async with running(Scenario(), tmp_path / "log.jsonl") as server:
            return _listening(server.port)

    assert asyncio.run(run()) == ["0100007F"]  # 127.0.0.1, and nothing on any other address


def test_a_server_can_refuse_on_the_data_channel_before_ready(tmp_path: Path) -> None:
    refusal = {"type": "error", "code": "version_mismatch", "message": "upgrade", "fatal": True}
    scenario = Scenario(pre_ready=[refusal], close_after_pre_ready=True, echo_text=False)
    _, _, got = asyncio.run(_session(tmp_path, CONFIG, [], scenario))
    # The audio preamble, the refusal, then the channel closes: no ready, nothing after.
    assert got == [AUDIO_FORMAT, refusal]
    assert [e["kind"] for e in entries(tmp_path / "log.jsonl")][-2:] == ["sent", "closed-before-ready"]
