"""Declared versus observed: predict every handshake cell from what each side declares, and
list the cells where the prediction and the measurement disagree. Also semver findings: a
break between two patch or minor releases of either side.

The prediction is labelled as one everywhere it appears. It uses only declarations: the
SDK's protocol window read from its own source (``SDK_PROTOCOL_VERSION``, a
``MIN_PROTOCOL_VERSION`` when there is one, else an exact-match rule) and the protocol
version each CLI release reports (from its answers to ``ping`` in the measured cells, or the
SDK's own refusal quoting it)."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any

import pandas as pd

from matrix.model import NOT_A_VERDICT, Outcome
from matrix.present.records import records
from matrix.present.rows import Rows
from matrix.versions import sort_key, sorted_versions

__all__ = ["NO_PROTOCOL", "DriftFinding", "Prediction", "SemverFinding", "cli_protocols", "drift", "handshake",
           "predict", "semver_findings"]

WORKS = {Outcome.COMPATIBLE.value}


def handshake(frame: pd.DataFrame | Rows, family: str) -> pd.DataFrame:
    """The handshake cells of ``family``."""
    rows = frame.frame if isinstance(frame, Rows) else frame
    return rows[(rows["family"] == family) & (rows["probe"] == "handshake")]



_REPORTS = re.compile(r"server reports version (\d+)")
_NONE = re.compile(r"does not report a protocol version")
NO_PROTOCOL = -1  # a CLI that reports no protocol version at all
_UNKNOWN = NOT_A_VERDICT


@dataclass(frozen=True)
class Prediction:
    outcome: Outcome | None  # compatible or refused; None: nothing declared to predict from
    rule: str


@dataclass(frozen=True)
class DriftFinding:
    family: str
    sdk_version: str
    cli_version: str
    predicted: str
    rule: str
    observed: str
    evidence: str


def cli_protocols(frame: pd.DataFrame | Rows, family: str) -> dict[str, int | None]:
    """CLI version -> the protocol version it reports (``NO_PROTOCOL``: none), when every
    measured cell agrees; CLIs with no evidence or conflicting evidence are left out."""
    seen: dict[str, set[int]] = {}
    for r in records(handshake(frame, family), ("cli_version", "protocol", "detail", "error_message")):
        cli = str(r["cli_version"])
        proto = r.get("protocol")
        detail: dict[str, Any] = r.get("detail") if isinstance(r.get("detail"), dict) else {}  # type: ignore[assignment]
        message = r.get("error_message") if isinstance(r.get("error_message"), str) else ""
        if proto is not None and proto == proto:
            seen.setdefault(cli, set()).add(int(proto))
        elif isinstance(detail.get("ping_protocol"), int):
            seen.setdefault(cli, set()).add(int(detail["ping_protocol"]))
        elif m := _REPORTS.search(str(message)):
            seen.setdefault(cli, set()).add(int(m.group(1)))
        elif _NONE.search(str(message)):
            seen.setdefault(cli, set()).add(NO_PROTOCOL)
    return {cli: next(iter(v)) for cli, v in seen.items() if len(v) == 1}


def declared_window(frame: pd.DataFrame | Rows, family: str) -> dict[str, dict[str, Any]]:
    """SDK version -> what its source declares (the first non-empty record)."""
    out: dict[str, dict[str, Any]] = {}
    for r in records(handshake(frame, family), ("sdk_version", "sdk_declared")):
        decl = r.get("sdk_declared")
        if isinstance(decl, dict) and decl and str(r["sdk_version"]) not in out:
            out[str(r["sdk_version"])] = decl
    return out


def predict(declared: dict[str, Any], cli_protocol: int | None) -> Prediction:
    sdk = declared.get("SDK_PROTOCOL_VERSION")
    if not isinstance(sdk, int):
        return Prediction(None, "declares no protocol version")
    if cli_protocol is None:
        return Prediction(None, "the CLI's protocol version is not known")
    low = declared.get("MIN_PROTOCOL_VERSION")
    if cli_protocol == NO_PROTOCOL:
        return Prediction(Outcome.REFUSED, f"the CLI reports no protocol version; the SDK requires {sdk}")
    if isinstance(low, int):
        fits = low <= cli_protocol <= sdk
        return Prediction(Outcome.COMPATIBLE if fits else Outcome.REFUSED,
                          f"SDK accepts {low}..{sdk}, CLI reports {cli_protocol}")
    return Prediction(Outcome.COMPATIBLE if cli_protocol == sdk else Outcome.REFUSED,
                      f"SDK requires exactly {sdk}, CLI reports {cli_protocol}")


def drift(frame: pd.DataFrame | Rows, family: str) -> tuple[list[DriftFinding], int, int]:
    """(findings, cells predicted, cells that agree)."""
    protos = cli_protocols(frame, family)
    windows = declared_window(frame, family)
    findings = []
    predicted = agree = 0
    for r in records(handshake(frame, family), ("sdk_version", "cli_version", "outcome", "error_message")):
        observed = str(r["outcome"])
        if observed in _UNKNOWN:
            continue
        p = predict(windows.get(str(r["sdk_version"]), {}), protos.get(str(r["cli_version"])))
        if p.outcome is None:
            continue
        predicted += 1
        same = (observed in WORKS) == (p.outcome == Outcome.COMPATIBLE) and (
            observed in WORKS or observed == Outcome.REFUSED)
        if same:
            agree += 1
            continue
        message = r.get("error_message")
        findings.append(DriftFinding(family, str(r["sdk_version"]), str(r["cli_version"]), p.outcome, p.rule,
                                     observed, message.splitlines()[0][:300] if isinstance(message, str) else ""))
    findings.sort(key=lambda f: (sort_key(f.sdk_version), sort_key(f.cli_version)))
    return findings, predicted, agree


@dataclass(frozen=True)
class SemverFinding:
    family: str
    side: str  # "sdk" | "cli": the side that released
    before: str
    after: str
    bump: str  # "patch" | "minor"
    other: str  # the version of the other side that broke
    was: str
    now: str
    evidence: str

    @property
    def initial_development(self) -> bool:
        """Major version zero: semver says anything may change at any time."""
        return self.after.startswith("0.")


def _bump(a: str, b: str) -> str | None:
    """'patch' or 'minor' when ``b`` is such a release after ``a`` (same major), by position.
    Whether semver promised anything there (it promises nothing below 1.0.0) is for the
    reader: ``SemverFinding.initial_development`` says so."""
    pa, pb = a.split("."), b.split(".")
    if len(pa) < 3 or len(pb) < 3 or not all(x.isdigit() for x in pa[:3] + pb[:3]):
        return None
    if pa[0] != pb[0]:
        return None
    return "minor" if pa[1] != pb[1] else "patch"


def semver_findings(frame: pd.DataFrame | Rows, family: str) -> list[SemverFinding]:
    """Between two consecutive measured releases of one side, a patch or minor bump, the
    other side's versions that worked before and do not after."""
    sub = handshake(frame, family)
    outcome = {(str(r["sdk_version"]), str(r["cli_version"])): (str(r["outcome"]), r["error_message"])
               for r in records(sub, ("sdk_version", "cli_version", "outcome", "error_message"))}
    found = []
    for side, this, other in (("sdk", "sdk_version", "cli_version"), ("cli", "cli_version", "sdk_version")):
        versions = [v for v in sorted_versions(sub[this])
                    if not (sub[sub[this] == v]["outcome"] == Outcome.UNINSTALLABLE).all()]
        others = sorted_versions(sub[other])
        for a, b in itertools.pairwise(versions):
            bump = _bump(a, b)
            if bump is None:
                continue
            for o in others:
                ka, kb = ((a, o), (b, o)) if side == "sdk" else ((o, a), (o, b))
                if ka in outcome and kb in outcome and outcome[ka][0] in WORKS and outcome[kb][0] not in WORKS \
                        and outcome[kb][0] not in _UNKNOWN:
                    err = outcome[kb][1]
                    found.append(SemverFinding(family, side, a, b, bump, o, outcome[ka][0], outcome[kb][0],
                                               err.splitlines()[0][:300] if isinstance(err, str) else ""))
    return found
