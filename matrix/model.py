"""The vocabulary shared by every layer: a cell to measure, the limits it is measured within,
and the one outcome vocabulary, used in code, data, site and exit codes."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["CORE_FIELDS", "GOOD_OUTCOMES", "HANDSHAKE_OUTCOMES", "KEY_FIELDS", "NOT_A_VERDICT", "NO_CLI",
           "OUTCOME_INFO", "OUTCOME_LETTERS", "OUTCOME_RANK", "PROMISE_OUTCOMES", "SESSION_OUTCOMES",
           "TOLERANCE_OUTCOMES", "Cell", "CellSettings", "Outcome", "Row", "value_of"]


class Outcome(StrEnum):
    COMPATIBLE = "compatible"
    DEGRADED = "degraded"
    REFUSED = "refused"
    LAUNCH_FAILED = "launch-failed"
    HANG = "hang"
    CRASHED = "crashed"
    UNINSTALLABLE = "uninstallable"
    INFRA_ERROR = "infra-error"
    HARNESS_ERROR = "harness-error"
    # Tolerance checks (one SDK version x one mutation rule):
    SURFACED = "surfaced"
    IGNORED = "ignored"
    DOWNGRADED = "downgraded"
    LOST = "lost"
    FATAL = "fatal"
    NOT_APPLICABLE = "not-applicable"
    # Promise checks (one SDK version x one thing its design document promises):
    KEPT = "kept"
    BROKEN = "broken"
    # Controls (a check's steps with nothing mutated, run first against the same other side):
    PASSED = "passed"
    FAILED = "failed"


# (colour, one line of meaning). Colours are chosen to read in a heatmap and for
# red/green colour-blind readers (blue/orange carry the main contrast).
OUTCOME_INFO: dict[Outcome, tuple[str, str]] = {
    Outcome.COMPATIBLE: ("#1a9850", "Started, negotiated, every call answered, stopped cleanly: nothing it "
                                    "started was left running after stop()."),
    Outcome.DEGRADED: ("#a6d96a",
                       "Connected, but a later call failed, the SDK warned and pinned down, or stop() left a "
                       "process the SDK started running."),
    Outcome.REFUSED: ("#fdae61",
                      "The SDK stopped with an error that explains the mismatch: the correct failure."),
    Outcome.LAUNCH_FAILED: ("#f46d43",
                            "The CLI did not start with the SDK's arguments or runtime, and the SDK said so."),
    Outcome.HANG: ("#762a83",
                   "Nothing settled before the deadline, or the SDK gave up after a timeout: a silent failure."),
    Outcome.CRASHED: ("#d73027", "Any other exception from the SDK."),
    Outcome.UNINSTALLABLE: ("#878787", "That version can no longer be installed from its registry."),
    Outcome.INFRA_ERROR: ("#e0e0e0",
                          "Our side failed (registry, network, disk): not a verdict, re-measured next run."),
    Outcome.HARNESS_ERROR: ("#ffffbf",
                            "Our agent could not drive this version, or the SDK ran another CLI: not a verdict."),
    Outcome.SURFACED: ("#1a9850",
                       "Tolerance: the unknown thing reached the application as an explicit unknown or raw "
                       "value, and the SDK kept working."),
    Outcome.IGNORED: ("#91cf60",
                      "Tolerance: the unknown part was dropped, the rest delivered, the SDK kept working."),
    Outcome.DOWNGRADED: ("#fee08b",
                         "Tolerance: delivered, but no longer as the typed thing the application expects."),
    Outcome.LOST: ("#fc8d59",
                   "Tolerance: the SDK kept working, but the whole message carrying the unknown part never "
                   "reached the application."),
    Outcome.FATAL: ("#d73027", "Tolerance: an exception, or the client or session died."),
    Outcome.NOT_APPLICABLE: ("#bababa", "That version has no such API or no SDK code, or no compatible CLI to probe."),
    Outcome.KEPT: ("#4575b4", "Promise check: the version does what its design document promises."),
    Outcome.BROKEN: ("#f46d43", "Promise check: measured not doing what the design document promises."),
    Outcome.PASSED: ("#74add1", "Control: the same steps with nothing mutated worked, so the checks are judged "
                                "against this release of the other side."),
    Outcome.FAILED: ("#8c510a", "Control: the same steps with nothing mutated already failed against this release "
                                "of the other side, so no check is judged against it."),
}

HANDSHAKE_OUTCOMES: tuple[Outcome, ...] = (
    Outcome.COMPATIBLE, Outcome.DEGRADED, Outcome.REFUSED, Outcome.LAUNCH_FAILED, Outcome.HANG, Outcome.CRASHED,
    Outcome.UNINSTALLABLE, Outcome.INFRA_ERROR, Outcome.HARNESS_ERROR,
)
TOLERANCE_OUTCOMES: tuple[Outcome, ...] = (
    Outcome.SURFACED, Outcome.IGNORED, Outcome.DOWNGRADED, Outcome.LOST, Outcome.FATAL,
    Outcome.NOT_APPLICABLE, Outcome.HANG, Outcome.UNINSTALLABLE, Outcome.INFRA_ERROR, Outcome.HARNESS_ERROR,
    Outcome.PASSED, Outcome.FAILED,
)
SESSION_OUTCOMES: tuple[Outcome, ...] = (
    Outcome.COMPATIBLE, Outcome.SURFACED, Outcome.DEGRADED, Outcome.LOST, Outcome.HANG, Outcome.CRASHED,
    Outcome.NOT_APPLICABLE, Outcome.UNINSTALLABLE, Outcome.INFRA_ERROR, Outcome.HARNESS_ERROR,
)
PROMISE_OUTCOMES: tuple[Outcome, ...] = (
    Outcome.KEPT, Outcome.BROKEN, Outcome.NOT_APPLICABLE, Outcome.HANG, Outcome.UNINSTALLABLE, Outcome.INFRA_ERROR,
    Outcome.HARNESS_ERROR,
)


# Within its vocabulary, how good an outcome is (lower is better): a move to a worse rank is a
# regression. Outcomes that say nothing of the SDK (not a verdict) carry none.
OUTCOME_RANK: dict[Outcome, int] = {
    Outcome.COMPATIBLE: 0, Outcome.DEGRADED: 1, Outcome.REFUSED: 2, Outcome.LAUNCH_FAILED: 3, Outcome.CRASHED: 3,
    Outcome.HANG: 3,
    Outcome.SURFACED: 0, Outcome.IGNORED: 0, Outcome.DOWNGRADED: 1, Outcome.LOST: 2, Outcome.FATAL: 3,
    Outcome.KEPT: 0, Outcome.BROKEN: 1,
}
# Outcomes that are no verdict on the SDK: nothing known of the pair or check.
NOT_A_VERDICT: frozenset[Outcome] = frozenset({Outcome.INFRA_ERROR, Outcome.HARNESS_ERROR, Outcome.UNINSTALLABLE,
                                               Outcome.NOT_APPLICABLE})
# The best of each vocabulary: what a user wants to see.
GOOD_OUTCOMES: frozenset[Outcome] = frozenset({Outcome.COMPATIBLE, Outcome.SURFACED, Outcome.IGNORED, Outcome.KEPT})
# A cell's letter in a grid, by outcome (a compatible cell, or a passed control: none).
OUTCOME_LETTERS: dict[Outcome, str] = {
    Outcome.REFUSED: "R", Outcome.LAUNCH_FAILED: "L", Outcome.HANG: "H", Outcome.CRASHED: "C",
    Outcome.UNINSTALLABLE: "U", Outcome.INFRA_ERROR: "?", Outcome.HARNESS_ERROR: "!", Outcome.SURFACED: "S",
    Outcome.IGNORED: "I", Outcome.DOWNGRADED: "D", Outcome.LOST: "X", Outcome.FATAL: "F", Outcome.NOT_APPLICABLE: "-",
    Outcome.KEPT: "K", Outcome.BROKEN: "B"}


@dataclass(frozen=True)
class Cell:
    """One measurement to make: an SDK release, a release of the other side, a probe and (for
    probes with several checks) the check. ``why``: for a cell planned against ``NO_CLI``, why
    there is nothing to run it against (recorded as its not-applicable reason)."""

    family: str
    sdk_version: str
    cli_version: str
    probe: str
    mutation: str = ""
    why: str = field(default="", compare=False)
    # The checks measured in one run with this one (a batch, its family's choice; this one among
    # them); empty: measured alone. Where a batch shows anything but a clean pass, the check is
    # measured again alone: the batch changes the cost, never the verdict.
    together: tuple[str, ...] = field(default=(), compare=False)

    def key(self) -> tuple[str, str, str, str, str]:
        return (self.family, self.sdk_version, self.cli_version, self.probe, self.mutation)


# What a cell is known by (``Cell.key``, ``Row.key``), as the frames' columns name it.
KEY_FIELDS = ("family", "sdk_version", "cli_version", "probe", "mutation")
NO_CLI = "none"  # the other side of a cell that has none to run against (recorded not-applicable)


@dataclass(frozen=True)
class CellSettings:
    """What every measurement is bounded by, from the run's plan (``timeouts``)."""

    probe_timeout: float
    call_timeout: float
    grace: float
    dead_cli: float | None = None
    leak: float = 5.0
    # A connected handshake's stop() is measured at least ``stops`` times, up to ``stops_max``
    # where the stops disagree (what stop() leaves behind can be a race).
    stops: int = 1
    stops_max: int = 1


SCHEMA = 2  # a row's format: 2, a core and the payload its probe declares (1: every field flat)
# How format 1 told a row standing for a pair of releases from one standing for an SDK release
# (read only to convert such rows; format 2 says it in ``per_sdk``), and the fields every row of
# format 1 had beside the core, with their defaults: a default is left out of the payload (the
# probe's payload model gives its own, the same), so a probe's payload holds only its fields.
_FORMAT1_PAIR_PROBE, _FORMAT1_CONTROL = "handshake", ".control"
_FORMAT1_DEFAULTS: dict[str, Any] = {
    "protocol": None, "observed_cli_version": None, "message_names_versions": None, "message_actionable": None,
    "start_seconds": None, "calls_seconds": None, "stop_seconds": None, "sdk_declared": {}, "node_runtime": None,
    "exit_after_stop_seconds": None, "leaked": [], "stops": [], "wrong_cli": False}

# The fields of a row every family's cells have; any other field is its probe's payload.
CORE_FIELDS = ("family", "sdk_version", "cli_version", "probe", "mutation", "outcome", "error_type", "error_message",
               "seconds", "leftovers_killed", "repeats", "flaky", "per_sdk", "detail", "harness_version",
               "measured_at", "host", "schema")


class Row(BaseModel):
    """One measured cell, as stored (one JSON object per line), exported and shown: a core every
    family's cells have (the cell, its outcome, timing, provenance, the rules that measured it)
    and a payload of what its probe observed besides, typed by the family that measured it
    (``Family.payload_model``). Validation and JSON live here: a stored line that does not fit
    is refused with what is wrong; a row of format 1 (every field flat) is read as format 2."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    family: str
    sdk_version: str
    cli_version: str
    probe: str
    outcome: Outcome
    mutation: str = ""
    error_type: str | None = None
    error_message: str | None = None
    seconds: float = 0.0
    # Processes still alive when the agent had exited, killed by the harness.
    leftovers_killed: list[str] = Field(default_factory=list)
    # Measured more than once (a cell's own repeats, or run --repeat N): every outcome seen, and
    # whether they differed.
    repeats: list[Outcome] = Field(default_factory=list)
    flaky: bool = False
    # The other side was chosen by the harness for this check (a tolerance rule's CLI): the row
    # is the SDK release's check, whichever release of the other side it was measured against.
    per_sdk: bool = False
    payload: dict[str, Any] = Field(default_factory=dict)
    detail: dict[str, Any] = Field(default_factory=dict)
    harness_version: str = ""
    measured_at: str = ""
    host: str = ""
    schema_: int = Field(default=SCHEMA, alias="schema")

    @model_validator(mode="before")
    @classmethod
    def _core_and_payload(cls, data: Any) -> Any:
        """A row of format 1, or built flat: every field outside the core is its payload's. In
        format 1 a row stood for one pair of releases when it was a handshake or a control, for
        one SDK release otherwise (what ``per_sdk`` now says)."""
        if not isinstance(data, dict):
            return data
        flat = {k: v for k, v in data.items() if k not in CORE_FIELDS and k not in ("schema_", "payload")}
        if not flat and data.get("schema", SCHEMA) == SCHEMA:
            return data
        core = {k: v for k, v in data.items() if k in CORE_FIELDS and k != "schema"}
        if data.get("schema") == 1:
            core.setdefault("per_sdk", data.get("probe") != _FORMAT1_PAIR_PROBE
                            and not str(data.get("mutation", "")).endswith(_FORMAT1_CONTROL))
            flat = {k: v for k, v in flat.items() if k not in _FORMAT1_DEFAULTS or v != _FORMAT1_DEFAULTS[k]}
        return {**core, "payload": {**(data.get("payload") or {}), **flat}, "schema": SCHEMA}

    def key(self) -> tuple[str, str, str, str, str]:
        return (self.family, self.sdk_version, self.cli_version, self.probe, self.mutation)

    def slot(self) -> tuple[str, str, str, str, str]:
        """What one stored row stands for: one pair of releases, or, for a check whose other
        side the harness chose (``per_sdk``), one per SDK release and check (the newest
        measurement replaces one made against another choice)."""
        return (self.family, self.sdk_version, "", self.probe, self.mutation) if self.per_sdk else self.key()

    def replaces(self, old: Row | None) -> bool:
        """Whether this row stands in its slot instead of ``old`` (the row there so far): a local
        measurement as new as the history's, or newer, is the one read."""
        return old is None or self.measured_at >= old.measured_at

    def updated(self, **changes: Any) -> Row:
        """This row with some fields of its core or payload changed (validated again, unlike
        ``model_copy``)."""
        core = {k: v for k, v in changes.items() if k in CORE_FIELDS}
        payload = {k: v for k, v in changes.items() if k not in CORE_FIELDS}
        data = self.model_dump(by_alias=True)
        return Row.model_validate({**data, **core, "payload": {**self.payload, **payload}})

    def get(self, name: str, default: Any = None) -> Any:
        """A field of the core or of the payload, by name."""
        if name in type(self).model_fields:
            return getattr(self, name)
        return self.payload.get(name, default)

    def to_json(self) -> str:
        """One line, keys sorted: the stored form."""
        return json.dumps(self.model_dump(by_alias=True), sort_keys=True, ensure_ascii=False, default=str)


def value_of(row: Any, name: str, default: Any = None) -> Any:
    """A field of a stored row, whatever holds it: a ``Row`` (core or payload), a frame's record
    (a mapping) or its tuple (attributes)."""
    if isinstance(row, Row):
        return row.get(name, default)
    if isinstance(row, Mapping):
        return row.get(name, default)
    return getattr(row, name, default)
