"""Can I ship this version? A yes / no / unknown answer from a family's measured pair cells.

Pure over the results DataFrame. A pair that was never measured, or measured only as an
infrastructure or harness error, is unknown: never yes. The other side's versions to judge
against:

- ``supported``: for an SDK release, the CLI versions the newest measured SDK works with
  (what users who follow the current release run); for a CLI release, the SDK versions that
  work with the newest measured CLI. Shipping must not break any of them.
- ``latest:N``: the N newest measured versions of the other side.
- ``all``: every measured version of the other side.
- a single version of the other side: a proposed pin pair.

A version of the other side that can no longer be installed is not a deployment anyone can
have: it is listed and skipped.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

import pandas as pd

from matrix.answers.analysis import pairs
from matrix.errors import UserError
from matrix.families.base import Family
from matrix.families.registry import FAMILIES
from matrix.model import Outcome
from matrix.probes.verdict import DOES_NOT_START
from matrix.versions import sorted_versions

__all__ = ["EXIT", "Decision", "Judged", "can_i_ship", "targets_of"]

UNKNOWN = {Outcome.INFRA_ERROR.value, Outcome.HARNESS_ERROR.value}
SKIPPED = {Outcome.UNINSTALLABLE.value, Outcome.NOT_APPLICABLE.value}
EXIT = {"yes": 0, "no": 1, "unknown": 2}


@dataclass(frozen=True)
class Judged:
    sdk_version: str
    cli_version: str
    outcome: str | None  # None: never measured
    verdict: str  # yes | no | unknown | skipped
    reason: str


@dataclass(frozen=True)
class Decision:
    family: str
    side: str  # the side being shipped: "sdk" | "cli"
    version: str
    against: str
    answer: str  # yes | no | unknown
    cells: tuple[Judged, ...]

    @property
    def exit_code(self) -> int:
        return EXIT[self.answer]

    def to_json(self) -> str:
        return json.dumps({**asdict(self), "exit_code": self.exit_code}, indent=1)


def targets_of(frame: pd.DataFrame, family: str, side: str, against: str) -> list[str]:
    """The other side's releases ``against`` names, from the measured history."""
    return _targets(FAMILIES[family], pairs(frame, family), side, against)


def _targets(fam: Family, sub: pd.DataFrame, side: str, against: str) -> list[str]:
    other = "cli_version" if side == "sdk" else "sdk_version"
    this = "sdk_version" if side == "sdk" else "cli_version"
    measured = sorted_versions(sub[other])
    if against == "all":
        return measured
    if against.startswith("latest:"):
        try:
            n = int(against.split(":", 1)[1])
        except ValueError:
            n = 0
        if n < 1:
            raise UserError(f"--against {against!r}: N must be a whole number of at least 1, e.g. latest:3")
        return measured[-n:]
    if against == "supported":
        newest = sorted_versions(sub[this])[-1]
        mine = sub[sub[this] == newest]
        ok = mine[fam.works(mine)]
        return sorted_versions(ok[other])
    return [against]  # one version: a proposed pin pair


def _judge(fam: Family, sdk: str, cli: str, cell: pd.DataFrame, side: str = "sdk") -> Judged:
    """A pair's verdict from its cell (empty: never measured), with what else its user meets
    (``Family.aside``: a failed start that also left the CLI running: the user hits both)."""
    if cell.empty:
        return Judged(sdk, cli, None, "unknown", "never measured")
    rec = cell.iloc[0].to_dict()
    outcome, error = str(rec["outcome"]), rec.get("error_message")
    error = error if isinstance(error, str) else None
    if rec.get("error_type") == DOES_NOT_START:
        # A fact about the other side's release: shipping it is a no; an SDK shipped beside it
        # meets a release no deployment here can run (skipped, as an uninstallable one).
        first = (error or "").strip().splitlines()[:1]
        reason = first[0][:300] if first else outcome
        return Judged(sdk, cli, outcome, "no" if side == "cli" else "skipped", reason)
    judged = _judge_outcome(sdk, cli, outcome, error, bool(fam.works(cell).iloc[0]))
    aside = fam.aside(rec)
    if aside and aside not in judged.reason:
        return Judged(sdk, cli, outcome, judged.verdict, f"{judged.reason}; {aside}")
    return judged


def _judge_outcome(sdk: str, cli: str, outcome: str, error: str | None, works: bool) -> Judged:
    if works:
        return Judged(sdk, cli, outcome, "yes", f"measured {outcome}")
    if outcome in UNKNOWN:
        return Judged(sdk, cli, outcome, "unknown", f"measured only as {outcome}: not a verdict")
    if outcome in SKIPPED:
        return Judged(sdk, cli, outcome, "skipped", f"{outcome}: no deployment can run this pair")
    first = (error or "").strip().splitlines()[:1]
    return Judged(sdk, cli, outcome, "no", f"{outcome}{': ' + first[0][:200] if first else ''}")


def can_i_ship(frame: pd.DataFrame, family: str, sdk: str | None = None, cli: str | None = None,
               against: str = "supported", targets: list[str] | None = None) -> Decision:
    """Ship ``sdk`` (against CLIs) or ``cli`` (against SDKs); both given: the pin pair.
    ``targets``: the other side's releases to judge against, named (a fleet's), instead of
    ``against``'s rule."""
    fam = FAMILIES[family]
    sub = pairs(frame, family)
    if sub.empty:
        raise UserError(f"no {fam.pair_probe or 'pair'} results for family {family!r}; run `compat-matrix run "
                        f"--family {family}`")
    if targets is not None and (sdk is None) != (cli is None):
        side, version = ("sdk", sdk) if sdk is not None else ("cli", cli)
        assert version is not None
    elif sdk is not None and cli is not None:
        side, version, targets, against = "sdk", sdk, [cli], cli
    elif sdk is not None:
        side, version, targets = "sdk", sdk, _targets(fam, sub, "sdk", against)
    elif cli is not None:
        side, version, targets = "cli", cli, _targets(fam, sub, "cli", against)
    else:
        raise UserError("name the release to ship: --sdk V or --cli V (both: a proposed pin pair)")
    cells = []
    for other in targets:
        pair = (version, other) if side == "sdk" else (other, version)
        hit = sub[(sub["sdk_version"] == pair[0]) & (sub["cli_version"] == pair[1])]
        cells.append(_judge(fam, pair[0], pair[1], hit, side))
    verdicts = {c.verdict for c in cells}
    if "no" in verdicts:
        answer = "no"
    elif "unknown" in verdicts or "yes" not in verdicts:
        answer = "unknown"  # nothing measured to stand on is not a yes
    else:
        answer = "yes"
    return Decision(family, side, version, against, answer, tuple(cells))
