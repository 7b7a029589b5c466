"""The Copilot families' page for release managers that sets declarations against measurements: drift, with
semver findings. ``drift_page_data`` says what the page says (plain data, tested without
HTML); ``templates/drift.md`` draws it."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import pandas as pd

from matrix.families.base import SiteView
from matrix.families.copilot.drift import (
    NO_PROTOCOL,
    DriftFinding,
    SemverFinding,
    cli_protocols,
    declared_window,
    drift,
    semver_findings,
)
from matrix.families.copilot.render import render
from matrix.model import Outcome
from matrix.present.rows import Rows
from matrix.versions import sorted_versions

__all__ = ["Disagreement", "DriftFamily", "DriftPage", "SdkDeclares", "drift_page", "drift_page_data"]

# What a disagreement most often means, by (prediction, observation): the reader's key.
_MEANING: dict[tuple[str, str], str] = {
    (Outcome.REFUSED, Outcome.LAUNCH_FAILED):
        "the CLI rejected the SDK's launch flags before any protocol was compared",
    (Outcome.COMPATIBLE, Outcome.LAUNCH_FAILED): "the protocols match, but the CLI rejected the SDK's launch flags",
    (Outcome.REFUSED, Outcome.HANG): "a refusal was due, but the SDK never noticed the CLI had gone: it waited",
    (Outcome.COMPATIBLE, Outcome.HANG): "the protocols match, but start never settled",
    (Outcome.REFUSED, Outcome.CRASHED): "a refusal was due, but the SDK failed on something else first",
    (Outcome.COMPATIBLE, Outcome.CRASHED): "the protocols match, but the SDK failed on a message it could not read",
    (Outcome.COMPATIBLE, Outcome.DEGRADED): "the protocols match and it connected, but a later call failed",
    (Outcome.COMPATIBLE, Outcome.REFUSED): "the protocols match, yet the SDK refused",
    (Outcome.REFUSED, Outcome.COMPATIBLE): "the declarations say no, yet it worked",
}


@dataclass(frozen=True)
class SdkDeclares:
    """What one SDK release's source declares."""

    sdk: str
    window: str  # "none", "LOW..TOP" or "exactly TOP"
    pin: str  # the CLI version it pins, "bundles one" or "no"


@dataclass(frozen=True)
class Disagreement:
    """The cells with one (prediction, measurement) pair, and what that pair most often means."""

    predicted: str
    observed: str
    meaning: str  # "" when there is no usual reading
    findings: list[DriftFinding]


@dataclass(frozen=True)
class DriftFamily:
    family: str
    predicted: int
    agree: int
    disagree: int
    cli_protocols: list[tuple[str, str]]  # (CLI version, the protocol it reports or "none"), oldest first
    sdks: list[SdkDeclares]
    disagreements: list[Disagreement]  # the largest group first
    semver: list[SemverFinding]


@dataclass(frozen=True)
class DriftPage:
    families: list[DriftFamily]


def drift_page_data(view: SiteView, kind: type) -> DriftPage:
    """The drift page as plain data: per measured family of ``kind``, what each side declares,
    where prediction and measurement disagree, the semver findings."""
    families = [f for f in sorted(view.rows.pairs()["family"].unique()) if isinstance(view.families.get(f), kind)]
    return DriftPage([_family(view.rows, f) for f in families])


def _family(frame: pd.DataFrame | Rows, family: str) -> DriftFamily:
    findings, predicted, agree = drift(frame, family)
    protos = cli_protocols(frame, family)
    windows = declared_window(frame, family)
    return DriftFamily(
        family=family, predicted=predicted, agree=agree, disagree=len(findings),
        cli_protocols=[(c, "none" if protos[c] == NO_PROTOCOL else str(protos[c]))
                       for c in sorted_versions(list(protos))],
        sdks=[_declares(sdk, windows[sdk]) for sdk in sorted_versions(list(windows))],
        disagreements=_disagreements(findings), semver=semver_findings(frame, family))


def _declares(sdk: str, declared: dict[str, Any]) -> SdkDeclares:
    top, low = declared.get("SDK_PROTOCOL_VERSION"), declared.get("MIN_PROTOCOL_VERSION")
    window = "none" if top is None else (f"{low}..{top}" if low is not None else f"exactly {top}")
    pin = declared.get("CLI_VERSION") or ("bundles one" if declared.get("bundled_cli") else "no")
    return SdkDeclares(sdk, window, str(pin))


def _disagreements(findings: list[DriftFinding]) -> list[Disagreement]:
    groups: dict[tuple[str, str], list[DriftFinding]] = defaultdict(list)
    for f in findings:
        groups[(f.predicted, f.observed)].append(f)
    # sorted() is stable: groups of the same size keep the order their first finding has.
    return [Disagreement(pred, obs, _MEANING.get((pred, obs), ""), items)
            for (pred, obs), items in sorted(groups.items(), key=lambda kv: -len(kv[1]))]


def drift_page(view: SiteView, kind: type) -> str:
    return render("drift.md", page=drift_page_data(view, kind))
