"""The model stand-in answers as its script says, streamed or not, only on 127.0.0.1, and logs
what reached the model (never a header's value)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from matrix.families.copilot.session.model_standin import MODEL, TOOL, file_name, prompt, running

SHELL = {"type": "function", "function": {"name": "bash", "parameters": {
    "properties": {"command": {"type": "string"}, "description": {"type": "string"}},
    "required": ["command", "description"]}}}
CREATE = {"type": "function", "function": {"name": "create", "parameters": {
    "properties": {"path": {"type": "string"}, "file_text": {"type": "string"}}, "required": ["path", "file_text"]}}}
ECHO = {"type": "function", "function": {"name": TOOL, "parameters": {"properties": {"text": {"type": "string"}}}}}


def ask(base: str, turn: str, tools: list[dict[str, Any]], after: list[dict[str, Any]] = (), stream: bool = False,
        path: str = "/v1/chat/completions") -> dict[str, Any]:
    body = {"model": MODEL, "stream": stream, "tools": tools,
            "messages": [{"role": "system", "content": "x"}, {"role": "user", "content": prompt(turn, "n1")}, *after]}
    if not stream:
        return httpx.post(base + path, json=body).json()["choices"][0]["message"]  # type: ignore[no-any-return]
    chunks = [json.loads(line[6:]) for line in httpx.post(base + path, json=body).text.splitlines()
              if line.startswith("data: {")]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks)
    calls = [tc for c in chunks for tc in c["choices"][0]["delta"].get("tool_calls") or []]
    return {"content": text, "calls": calls, "finish": chunks[-1]["choices"][0]["finish_reason"]}


def test_each_turn_is_answered_as_scripted(tmp_path: Path) -> None:
    with running(tmp_path / "log.jsonl") as base:
        assert base.startswith("http://127.0.0.1:")
        assert ask(base, "reply", [ECHO])["content"] == "compat-matrix reply n1."
        call = ask(base, "tool", [ECHO, SHELL])["tool_calls"][0]["function"]
        assert call["name"] == TOOL and json.loads(call["arguments"]) == {"text": "n1"}
        answered = ask(base, "tool", [ECHO], after=[{"role": "tool", "tool_call_id": "c", "content": "N1"}])
        assert answered["content"] == "compat-matrix tool n1. The tool said: N1"
        shell = json.loads(ask(base, "approved", [ECHO, SHELL])["tool_calls"][0]["function"]["arguments"])
        assert file_name("n1") in shell["command"] and shell["description"]  # every required parameter given
        create = json.loads(ask(base, "denied", [CREATE])["tool_calls"][0]["function"]["arguments"])
        assert create == {"path": file_name("n1"), "file_text": "compat-matrix\n"}
        assert "no built-in tool offered" in ask(base, "approved", [ECHO])["content"]


def test_a_streamed_answer_is_server_sent_events_ending_in_done(tmp_path: Path) -> None:
    with running(tmp_path / "log.jsonl") as base:
        text = ask(base, "reply", [], stream=True, path="/chat/completions")
        assert text == {"content": "compat-matrix reply n1.", "calls": [], "finish": "stop"}
        calls = ask(base, "tool", [ECHO], stream=True)
        assert calls["finish"] == "tool_calls" and calls["calls"][0]["function"]["name"] == TOOL
        raw = httpx.post(base + "/v1/chat/completions", json={"stream": True, "messages": []}).text
        assert raw.rstrip().endswith("data: [DONE]")


def test_what_a_cli_asks_on_its_way_is_answered_and_anything_else_is_a_404(tmp_path: Path) -> None:
    with running(tmp_path / "log.jsonl") as base:
        assert httpx.get(base + "/models").json()["data"][0]["id"] == MODEL
        assert httpx.get(base + "/copilot_internal/user").json()["endpoints"]["api"] == base
        init = httpx.post(base + "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "initialize"}).json()
        assert init["result"]["serverInfo"]["name"] == "compat-matrix"
        assert httpx.get(base + "/elsewhere").status_code == 404


def test_the_log_holds_what_the_model_was_shown_and_no_header_value(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    with running(log) as base:
        httpx.post(base + "/v1/chat/completions", headers={"Authorization": "Bearer s3cret"},
                   json={"model": MODEL, "messages": [{"role": "user", "content": prompt("reply", "n1")}]})
    text = log.read_text()
    entry = json.loads(text.splitlines()[0])
    assert entry["path"] == "/v1/chat/completions" and entry["messages"][0]["text"].endswith("TURN reply n1")
    assert entry["answer"]["content"] == "compat-matrix reply n1."
    assert "s3cret" not in text
