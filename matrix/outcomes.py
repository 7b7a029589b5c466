"""The one outcome vocabulary, used in code, data, site and exit codes."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["OUTCOME_INFO", "VERDICTS", "Outcome"]


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


# (colour, one line of meaning). Colours are chosen to read in a heatmap and for
# red/green colour-blind readers (blue/orange carry the main contrast).
OUTCOME_INFO: dict[Outcome, tuple[str, str]] = {
    Outcome.COMPATIBLE: ("#1a9850", "Started, negotiated, every call answered, stopped cleanly."),
    Outcome.DEGRADED: ("#a6d96a",
                       "Connected, but a later call failed or the SDK warned and pinned down."),
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
}

# Outcomes that say something about the pair. The rest are about our side or the registry.
VERDICTS: frozenset[Outcome] = frozenset(
    {
        Outcome.COMPATIBLE,
        Outcome.DEGRADED,
        Outcome.REFUSED,
        Outcome.LAUNCH_FAILED,
        Outcome.HANG,
        Outcome.CRASHED,
        Outcome.UNINSTALLABLE,
    }
)
