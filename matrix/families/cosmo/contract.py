"""The published inbound contract of the Cosmo backend, as data: which keys a client may
send in each message. Anything else is a schema error (Cosmo's design: "the server is strict
about inbound keys").

Taken from cosmo-ai-sdk 0.6.x's protocol models (the websocket lane). The local message
``id`` the 0.x SDKs stamp is accepted as a declared legacy field, as the design says."""

from __future__ import annotations

from typing import Any

__all__ = ["LEGACY_FIELDS", "SESSION_CONFIG", "WS_CLIENT_FRAMES", "unknown_keys"]

# A nested dict maps a key to the allowed keys of its object value; None: any value.
Schema = dict[str, Any]

LEGACY_FIELDS = frozenset({"id"})

_VOICE: Schema = {"name": None, "speaking_style": None}
_AUDIO: Schema = {"output": None, "noise_cancellation": None}
_INLINE_AGENT: Schema = {"type": None, "instructions": None, "model": None, "voice": _VOICE, "audio": _AUDIO,
                         "greeting": None, "tools": None, "interruption_sensitivity": None, "hooks": None}
_CATALOG_AGENT: Schema = {"type": None, "name": None, "inputs": None, "voice": _VOICE, "tools": None}
_SESSION: Schema = {"max_session_seconds": None, "store_recording": None, "store_audio": None,
                    "store_transcript": None, "store_video": None,
                    "experimental": {"resume_session_id": None, "avatar": None}}

SESSION_CONFIG: Schema = {"type": None, "sdk": {"name": None, "version": None}, "agent": None,
                          "session": _SESSION}

WS_CLIENT_FRAMES: dict[str, Schema] = {
    "send-text": {"type": None, "content": None},
    "send-context": {"type": None, "content": None},
    "mute": {"type": None, "muted": None},
    "ping": {"type": None},
    "bind-input": {"type": None},
    "activity-end": {"type": None},
    "send-image": {"type": None, "mime_type": None, "data": None, "stream_id": None},
    "delegation-append": {"type": None, "channel": None, "content": None, "delegation_id": None},
    "tool_job_result": {"type": None, "job_id": None, "tool_name": None, "status": None, "summary": None},
    "envelope-chunk": {"type": None, "envelope_id": None, "seq": None, "total": None, "data": None},
    "connect-timings": {"type": None, "request_ms": None, "room_ms": None, "ready_ms": None},
    "end": {"type": None},
    "rpc-response": {"type": None, "request_id": None, "payload": None, "error": None},
}


def _walk(obj: Any, schema: Schema, prefix: str, out: list[str], top: bool) -> None:
    if not isinstance(obj, dict):
        return
    for key, value in obj.items():
        path = f"{prefix}{key}"
        if key not in schema:
            if not (top and key in LEGACY_FIELDS):
                out.append(path)
            continue
        sub = schema[key]
        if isinstance(sub, dict):
            _walk(value, sub, path + ".", out, False)


def unknown_keys(message: dict[str, Any], schema: Schema) -> list[str]:
    """Dotted paths of keys outside ``schema`` (the agent block by its own ``type``)."""
    out: list[str] = []
    _walk(message, schema, "", out, True)
    if schema is SESSION_CONFIG and isinstance(message.get("agent"), dict):
        agent = message["agent"]
        _walk(agent, _CATALOG_AGENT if agent.get("type") == "catalog" else _INLINE_AGENT, "agent.", out, False)
    return out
