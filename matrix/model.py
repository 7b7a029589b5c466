"""The vocabulary shared by every layer: a cell to measure, the limits it is measured within,
and the one outcome vocabulary, used in code, data, site and exit codes."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["CONTROL_SUFFIX", "HANDSHAKE_OUTCOMES", "NO_CLI", "OUTCOME_INFO", "PROMISE_OUTCOMES", "TOLERANCE_OUTCOMES",
           "Cell", "CellSettings", "Outcome", "Row"]


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
PROMISE_OUTCOMES: tuple[Outcome, ...] = (
    Outcome.KEPT, Outcome.BROKEN, Outcome.NOT_APPLICABLE, Outcome.HANG, Outcome.UNINSTALLABLE, Outcome.INFRA_ERROR,
    Outcome.HARNESS_ERROR,
)


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

    def key(self) -> tuple[str, str, str, str, str]:
        return (self.family, self.sdk_version, self.cli_version, self.probe, self.mutation)


NO_CLI = "none"  # the other side of a cell that has none to run against (recorded not-applicable)
CONTROL_SUFFIX = ".control"  # a check's control: its steps with nothing mutated (see Row.slot)


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


SCHEMA = 1  # a row's format; fields are only ever added, with defaults


class Row(BaseModel):
    """One measured cell, as stored (one JSON object per line), exported and shown. Validation
    and JSON live here: a stored line that does not fit is refused with what is wrong."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    family: str
    sdk_version: str
    cli_version: str
    probe: str
    outcome: str
    mutation: str = ""
    protocol: int | None = None
    observed_cli_version: str | None = None
    error_type: str | None = None
    error_message: str | None = None
    message_names_versions: bool | None = None
    message_actionable: bool | None = None
    seconds: float = 0.0
    start_seconds: float | None = None
    calls_seconds: float | None = None
    stop_seconds: float | None = None
    sdk_declared: dict[str, Any] = Field(default_factory=dict)
    node_runtime: str | None = None
    leftovers_killed: list[str] = Field(default_factory=list)
    # Handshakes: seconds after stop() returned until every process the SDK started was gone
    # (None: not measured, or something outlived the wait), and what outlived it.
    exit_after_stop_seconds: float | None = None
    leaked: list[str] = Field(default_factory=list)
    # Connected handshakes, each stop() measured: seconds until every process the SDK started
    # was gone, None where one was still running after the wait (left running). Empty: the
    # cell did not connect, or was measured before stops were repeated.
    stops: list[float | None] = Field(default_factory=list)
    wrong_cli: bool = False
    # Measured more than once (a connected handshake's stops, or run --repeat N): every outcome
    # seen, and whether they differed.
    repeats: list[str] = Field(default_factory=list)
    flaky: bool = False
    detail: dict[str, Any] = Field(default_factory=dict)
    harness_version: str = ""
    measured_at: str = ""
    host: str = ""
    schema_: int = Field(default=SCHEMA, alias="schema")

    def key(self) -> tuple[str, str, str, str, str]:
        return (self.family, self.sdk_version, self.cli_version, self.probe, self.mutation)

    def slot(self) -> tuple[str, str, str, str, str]:
        """What one stored row stands for: a handshake or a control (``*.control``: a check's
        steps with nothing mutated, run to choose where the check is judged), one pair of
        releases; any other check, one per SDK release (its other side is chosen by the
        harness, and the newest measurement replaces one made against another choice)."""
        if self.probe == "handshake" or self.mutation.endswith(CONTROL_SUFFIX):
            return self.key()
        return (self.family, self.sdk_version, "", self.probe, self.mutation)

    def to_json(self) -> str:
        """One line, keys sorted: the stored form."""
        return json.dumps(self.model_dump(by_alias=True), sort_keys=True, ensure_ascii=False, default=str)
