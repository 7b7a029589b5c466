"""The versions of the Copilot families' verdict rules, per probe, and which stored cells each
change can alter."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from matrix.families.copilot.payload import CONNECTED, HANDSHAKE, SESSION
from matrix.families.rules import Rules
from matrix.model import value_of

__all__ = ["COPILOT_RULES"]


def _stop_or_dead_cli(row: Any) -> bool:
    """Handshake rules 5 measure again: cells that connected (their stop is now a rate), and
    cells of a CLI that no runtime we have could start (now one fact about that CLI, recorded
    without running the SDK)."""
    detail = value_of(row, "detail")
    failed = detail.get("runtime_failures") if isinstance(detail, Mapping) else None
    return value_of(row, "outcome", "") in CONNECTED or (
        isinstance(failed, Mapping) and value_of(row, "node_runtime") in failed)


def _node_session(row: Any) -> bool:
    """Session rules 5 measure again the Node sessions: its agent now registers the handler with
    ``onEvent`` where the release declares it (before, the session's first events were missed
    by the agent's late subscription, not by the SDK)."""
    return bool(value_of(row, "family", "") == "copilot-node")


def _missed_event(row: Any) -> bool:
    """Session rules 6 can alter only a session that missed an event: one the CLI sent only after
    the application asked to close the session is now said as such, not lost."""
    events = value_of(row, "events")
    return isinstance(events, Mapping) and "missed" in events.values()


COPILOT_RULES = Rules(
    versions={
        # 5: a connected handshake's stop() measured several times, its verdict the worst seen.
        HANDSHAKE: "5",
        # 5: each rule judged only where the same steps unmutated (its control) pass; a history
        # call that raises is fatal.
        "tolerance": "5",
        # 5: the Node agent subscribes as early as the release lets an application.
        # 6: an event sent only after the application asked to close its session is not lost.
        SESSION: "6",
    },
    touches={(HANDSHAKE, 5): _stop_or_dead_cli, (SESSION, 5): _node_session, (SESSION, 6): _missed_event},
)
