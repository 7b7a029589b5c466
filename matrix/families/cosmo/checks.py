"""What the Cosmo probes check: one entry per promise of Cosmo's additive-evolution
design, with the promise in its words. The probe kind decides the outcome vocabulary: ``tolerance`` checks end as
surfaced / ignored / downgraded / lost / fatal, ``identity`` and ``strictness`` checks as
kept / broken."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from matrix import HARNESS_VERSION
from matrix.families.rules import Rules
from matrix.model import Row

__all__ = ["CHECKS", "COSMO_RULES", "FRAME_TEMPLATES", "SET_PREFIX", "STANDIN_VERSION", "Check", "check_for_set",
           "check_named", "checks_of", "declared_sets", "set_frames", "set_target"]

# tolerance 5: measured again when the tolerance rules, then shared with Copilot's, became 5.
COSMO_RULES = Rules({"tolerance": "5"})

# The other side of every Cosmo cell: our stand-in, versioned with the wire contract it
# enforces (matrix/families/cosmo/contract.py). Bump it when that contract changes.
STANDIN_VERSION = "stand-in-1"


@dataclass(frozen=True)
class Check:
    name: str
    probe: str
    title: str
    promise: str  # Cosmo's design, quoted or closely paraphrased
    how: str  # what the probe does to see it


CHECKS: tuple[Check, ...] = (
    Check("frame.unknown-type", "tolerance", "Unknown message type",
          "A new message type may appear on the stream at any time. SDKs surface an unrecognized type as an "
          "explicit unknown event and keep the session alive.",
          "After `ready` the server sends a frame of a type no release knows, then a known canary frame."),
    Check("frame.extra-field", "tolerance", "Known type, extra field",
          "A new field arrives as an optional field with a safe default: a client that doesn't read it keeps "
          "working.",
          "A `model-text` frame with one field no release knows, then the canary."),
    Check("frame.malformed", "tolerance", "Malformed frame",
          "A decode failure is never terminal.",
          "A text frame that is not JSON, then the canary."),
    Check("enum.error-code", "tolerance", "Unknown error code",
          "A new value may appear in an enum the server authors (the error code). Python hands back a member "
          "of the enum either way: a known value is the member you expect, an unrecognized one a member "
          "carrying the raw string; `value in list(TheEnum)` separates them.",
          "Two sessions: an `error` frame with a known code, then one with a code no release knows."),
    Check("enum.session-status", "tolerance", "Unknown session status",
          "The same promise for the session status.",
          "The session usage call answers with a known status, then with an unknown one."),
    Check("enum.usage-status", "tolerance", "Unknown usage status",
          "The same promise for the usage status.",
          "The session usage call answers with a known usage status, then with an unknown one."),
    Check("enum.credential-kind", "tolerance", "Unknown credential kind",
          "The same promise for the credential kind.",
          "`verify()` answers with a known credential kind, then with an unknown one."),
    Check("enum.sdk-raised-closed", "identity", "SDK-raised error codes stay closed",
          "The enums the SDK itself raises (the *ErrorCode on a thrown error) stay closed and exhaustive.",
          "Every `*ErrorCode` enum the package exports other than the server-authored one must refuse a "
          "value it does not name."),
    Check("identity.sdk-block", "identity", "session-config carries `sdk`",
          "Every session-config carries an sdk block: name is the package name in its registry, version the "
          "installed package version.",
          "Start a session; compare the `sdk` block the server received with the installed distribution."),
    Check("identity.rest-header", "identity", "`X-Cosmo-SDK` on every REST call",
          "The same identity travels as an `X-Cosmo-SDK: <name>/<version>` header on every REST call the SDK "
          "makes to Cosmo.",
          "Session start, verify, usage and token minting, as far as the version has them; every request the "
          "server logged must carry the header."),
    Check("identity.exports", "identity", "`SDK_NAME`, `SDK_VERSION`",
          "`from cosmo_ai import SDK_NAME, SDK_VERSION` works and names what is installed.",
          "Import them and compare with the installed distribution's metadata."),
    Check("identity.version-mismatch", "identity", "`version_mismatch` over REST is a typed start error",
          "Each SDK still maps version_mismatch to its typed session-start error if an older server refuses "
          "the connection with it.",
          "The server refuses session start over REST (426, error code `version_mismatch`); the error must be the "
          "release's session-start error and still say `version_mismatch`."),
    Check("identity.version-mismatch-frame", "identity", "`version_mismatch` before `ready` is a typed start error",
          "Each SDK still maps version_mismatch to its typed session-start error if an older server refuses "
          "the connection with it.",
          "Session start is accepted, then the data channel carries an `error` frame with code `version_mismatch` "
          "before `ready` and closes; the error must be the release's session-start error and still say "
          "`version_mismatch`."),
    Check("strict.session-start", "strictness", "session-config passes a strict server",
          "The server is strict about inbound keys: an unknown field on a client message is a schema error, never "
          "quietly accepted. On session start you see it directly: a 422 naming the offending field.",
          "A session against the strict server; any key of the session-config beyond the published contract is "
          "refused with a 422, and the row shows what the application was told."),
    Check("strict.data-channel", "strictness", "Data-channel frames pass a strict server",
          "On the data channel the frame is refused and dropped, and the rejection is recorded server-side rather "
          "than sent back.",
          "A session with text (session start accepted whatever it carries, to reach the data channel); every "
          "frame the strict server dropped is listed with the keys beyond the contract."),
)


def checks_of(probe: str) -> tuple[Check, ...]:
    return tuple(c for c in CHECKS if c.probe == probe)


# -- closed sets read from each release's own models (the agent's inventory) ----------------

SET_PREFIX = "set."
UNKNOWN_VALUE = "compat-matrix-unknown-value"
# Closed sets a named check above already probes, by (where, frame or call, path).
NAMED_SETS = {("frame", "error", "code"): "enum.error-code", ("rest", "verify", "credential"): "enum.credential-kind",
              ("rest", "usage", "status"): "enum.session-status",
              ("rest", "usage", "usage_status"): "enum.usage-status"}
# A well-formed frame of each server frame type the stand-in can send with a closed set in it,
# every value one all releases know (roles in capitals, as the wire spells them).
FRAME_TEMPLATES: dict[str, dict[str, Any]] = {
    "transcript": {"type": "transcript", "role": "ASSISTANT", "text": "compat-matrix", "is_final": True},
    "turn-complete": {"type": "turn-complete", "role": "ASSISTANT"},
    "tool-invocation": {"type": "tool-invocation", "request_id": "r2", "tool_call_id": "c2", "name": "lookup",
                        "args": {}, "origin": "server", "executable": False},
    "user-speech-timeout": {"type": "user-speech-timeout", "session_id": "s", "silence_ms": 9000,
                            "trigger_count": 1, "max_count": 3, "action": {"type": "say", "text": "still there?"}},
}


def check_for_set(entry: dict[str, Any]) -> str | None:
    """The check that probes one closed set of a release's inventory (a named one, or one of
    its own), or None when the stand-in has no message to carry it."""
    where, name, path = str(entry.get("where")), str(entry.get("name")), str(entry.get("path"))
    if (where, name, path) in NAMED_SETS:
        return NAMED_SETS[(where, name, path)]
    if where == "frame" and name in FRAME_TEMPLATES and path and "[]" not in path and "{}" not in path:
        return f"{SET_PREFIX}{name}.{path}"
    return None


def set_target(check: str) -> tuple[str, str]:
    """(frame type, dotted path) of a ``set.`` check."""
    frame, _, path = check.removeprefix(SET_PREFIX).partition(".")
    return frame, path


def set_check(check: str) -> Check:
    frame, path = set_target(check)
    return Check(check, "tolerance", f"Unknown `{path}` in a `{frame}` frame",
                 "A new value may appear in an enum the server authors: each SDK accepts one it does not name and "
                 "hands the raw value through; without that tolerance it would cost the whole payload. (The design "
                 "names four such enums; this closed set was read from the release's own models.)",
                 f"Two sessions: a `{frame}` frame with a known `{path}`, then one whose `{path}` no release knows, "
                 "each followed by the canary.")


def set_frames(check: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The frame with a known value and the same frame with the unknown one."""
    frame, path = set_target(check)
    known = json.loads(json.dumps(FRAME_TEMPLATES[frame]))
    unknown = json.loads(json.dumps(known))
    *parents, last = path.split(".")
    target = unknown
    for part in parents:
        target = target[part]
    target[last] = UNKNOWN_VALUE
    return known, unknown


def declared_sets(rows: Iterable[Any], family: str, sdk: str) -> list[dict[str, Any]]:
    """The closed sets a release's models declare, as its newest measurement read them
    (``rows``: stored rows, or a DataFrame's records, with the Row fields)."""
    def declared(r: Any) -> Any:
        return r.get("sdk_declared") if isinstance(r, Row) else getattr(r, "sdk_declared", None)

    found = [r for r in rows if r.family == family and r.sdk_version == sdk and isinstance(declared(r), dict)
             and isinstance(declared(r).get("closed_sets"), list)]
    if not found:
        return []
    newest = max(found, key=lambda r: (r.harness_version == HARNESS_VERSION, r.measured_at))
    return [e for e in declared(newest)["closed_sets"] if isinstance(e, dict)]


def check_named(name: str) -> Check:
    """A check by name: a named one, or a closed set's own."""
    found = next((c for c in CHECKS if c.name == name), None)
    return found if found is not None else set_check(name)
