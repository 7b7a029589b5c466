"""What the Cosmo probes check: one entry per promise of seed 002, with the promise in the
seed's words. The probe kind decides the outcome vocabulary: ``tolerance`` checks end as
surfaced / ignored / downgraded / lost / fatal, ``identity`` and ``strictness`` checks as
kept / broken."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CHECKS", "STANDIN_VERSION", "Check", "checks_of"]

# The other side of every Cosmo cell: our stand-in, versioned with the wire contract it
# enforces (matrix/cosmo/contract.py). Bump it when that contract changes.
STANDIN_VERSION = "stand-in-1"


@dataclass(frozen=True)
class Check:
    name: str
    probe: str
    title: str
    promise: str  # seed 002, quoted or closely paraphrased
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
    Check("identity.version-mismatch", "identity", "`version_mismatch` is a typed start error",
          "Each SDK still maps version_mismatch to its typed session-start error if an older server refuses "
          "the connection with it.",
          "The server refuses session start with error code `version_mismatch`."),
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
