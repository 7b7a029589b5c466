"""What a Copilot row carries beside its core: what the agent observed of the SDK on the way
(timings, the runtime it ran under, what the SDK declares of itself, how an error read), and
for a handshake what it negotiated and what stop() left behind."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from matrix.families.payload import Payload
from matrix.model import Outcome

__all__ = ["CONNECTED", "HANDSHAKE", "SESSION", "AgentPayload", "HandshakePayload", "SessionPayload", "payload_model"]

HANDSHAKE = "handshake"  # the probe whose cells pair an SDK release with a CLI release
SESSION = "session"  # a real conversation through a pair that connects (its model our stand-in)
CONNECTED = (Outcome.COMPATIBLE, Outcome.DEGRADED)  # a handshake that connected: its protocol was negotiated


class AgentPayload(Payload):
    """A tolerance check, a control or a failure-contract check."""

    # Does the SDK's error name both versions, and say what to do (None: no error to read)?
    message_names_versions: bool | None = None
    message_actionable: bool | None = None
    start_seconds: float | None = None
    calls_seconds: float | None = None
    stop_seconds: float | None = None
    # What the release says of itself (its protocol version, its client name, ...).
    sdk_declared: dict[str, Any] = Field(default_factory=dict)
    node_runtime: str | None = None


class HandshakePayload(AgentPayload):
    """A handshake: what was negotiated, with which CLI, and what stop() left behind."""

    protocol: int | None = None
    observed_cli_version: str | None = None
    # Seconds after stop() returned until every process the SDK started was gone (None: not
    # measured, or something outlived the wait), and what outlived it.
    exit_after_stop_seconds: float | None = None
    leaked: list[str] = Field(default_factory=list)
    # A connected handshake's every stop(): seconds until every process the SDK started was gone,
    # None where one was still running after the wait. Empty: it did not connect, or was measured
    # before stops were repeated.
    stops: list[float | None] = Field(default_factory=list)
    # The SDK ran another CLI than the one it was given.
    wrong_cli: bool = False


class SessionPayload(AgentPayload):
    """A session: how the model call stayed on 127.0.0.1, each scripted turn, what became of
    every event the CLI sent, what the application was asked and ran, and what stop() left."""

    # "provider" (the session's provider option), "api-url" (the CLI's API URL), or None: no
    # model call reached the stand-in.
    route: str | None = None
    # Each scripted turn: its name, whether it settled, its seconds, whether it did what its
    # script says ("held") and why not.
    turns: list[dict[str, Any]] = Field(default_factory=list)
    # Every event type the CLI sent: "typed" (the application got it as a type it knows),
    # "unknown" (as the SDK's unknown, readable raw) or "lost" (never).
    events: dict[str, str] = Field(default_factory=dict)
    asked: list[str] = Field(default_factory=list)  # the permission kinds the application was asked
    tool_ran: bool | None = None
    model_saw_tool: bool | None = None
    idle_seconds: float | None = None  # the turns' seconds until idle, summed
    exit_after_stop_seconds: float | None = None
    leaked: list[str] = Field(default_factory=list)


_PAYLOADS: dict[str, type[Payload]] = {HANDSHAKE: HandshakePayload, SESSION: SessionPayload}


def payload_model(probe: str) -> type[Payload]:
    return _PAYLOADS.get(probe, AgentPayload)
