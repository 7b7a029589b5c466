"""The release gate: a decision about a build (published or candidate) against the versions
of the other side a fleet runs, and how the build differs from the newest published release
of its own side; rendered for a terminal, GitHub's job summary (Markdown) and any CI (JUnit).

The fleet file (TOML) names what is deployed on the other side, as selectors ("latest:3",
">=1.0.60", "1.0.88"), and pairs to ignore with a reason:

    other = [">=1.0.60"]
    [[ignore]]
    other = "1.0.61"
    reason = "withdrawn: every user moved off it"
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pandas as pd
from pydantic import BaseModel, ConfigDict, ValidationError

from matrix.answers.analysis import pairs
from matrix.answers.diff import change_kind
from matrix.answers.ship import Decision, Judged
from matrix.errors import UserError
from matrix.versions import sorted_versions

__all__ = ["Difference", "Fleet", "Ignore", "differences", "ignoring", "load_fleet", "to_junit", "to_markdown"]


class Ignore(BaseModel):
    model_config = ConfigDict(extra="forbid")
    other: str  # a release of the other side
    reason: str


class Fleet(BaseModel):
    model_config = ConfigDict(extra="forbid")
    other: list[str]  # selectors of the other side's releases in use
    ignore: list[Ignore] = []


def load_fleet(path: Path) -> Fleet:
    try:
        return Fleet.model_validate(tomllib.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        raise UserError(f"--fleet {path}: no such file") from None
    except tomllib.TOMLDecodeError as err:
        raise UserError(f"--fleet {path}: not TOML ({err})") from None
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or "the file"
        raise UserError(f"--fleet {path}: {where}: {first['msg']} (expected: other = [\">=1.0.60\", ...], and "
                        "[[ignore]] tables with other and reason)") from None


def ignoring(decision: Decision, fleet: Fleet) -> Decision:
    """``decision`` with the fleet's ignored pairs skipped, their reason given."""
    reasons = {i.other: i.reason for i in fleet.ignore}
    other = "cli_version" if decision.side == "sdk" else "sdk_version"
    cells = tuple(Judged(c.sdk_version, c.cli_version, c.outcome, "skipped", f"ignored: {reasons[getattr(c, other)]}")
                  if getattr(c, other) in reasons else c for c in decision.cells)
    verdicts = {c.verdict for c in cells}
    answer = "no" if "no" in verdicts else "unknown" if "unknown" in verdicts or "yes" not in verdicts else "yes"
    return Decision(decision.family, decision.side, decision.version, decision.against, answer, cells)


@dataclass(frozen=True)
class Difference:
    """A pair where the build and the newest published release of its side differ."""

    other: str
    baseline: str
    was: str | None  # the published release's outcome (None: not measured)
    now: str | None
    kind: str  # regression | improvement | new failure | changed | ...
    was_error: str | None
    now_error: str | None


def differences(frame: pd.DataFrame, family: str, side: str, version: str, baseline: str,
                others: list[str]) -> list[Difference]:
    sub = pairs(frame, family)
    this, other = ("sdk_version", "cli_version") if side == "sdk" else ("cli_version", "sdk_version")

    def cells(v: str) -> dict[str, Mapping[Any, Any]]:
        return {str(r[other]): r for r in sub[sub[this] == v].to_dict("records")}

    mine, theirs = cells(version), cells(baseline)
    out = []
    for o in sorted_versions([x for x in others if x in mine or x in theirs]):
        a, b = theirs.get(o), mine.get(o)
        was, now = (str(a["outcome"]) if a else None), (str(b["outcome"]) if b else None)
        if was == now:
            continue

        def error(r: Mapping[Any, Any] | None) -> str | None:
            e = r.get("error_message") if r else None
            return e.strip().splitlines()[0][:200] if isinstance(e, str) and e.strip() else None

        out.append(Difference(o, baseline, was, now, change_kind(was, now), error(a), error(b)))
    return out


def to_markdown(decision: Decision, diffs: list[Difference], label: str) -> str:
    icon = {"yes": "✅", "no": "❌", "unknown": "❔"}[decision.answer]
    lines = [f"### {icon} can I ship {label}? **{decision.answer}**", "",
             f"{decision.family}: against {decision.against} ({len(decision.cells)} pairs).", "",
             "| SDK | CLI | verdict | why |", "|---|---|---|---|"]
    for c in sorted(decision.cells, key=lambda c: ("no", "unknown", "yes", "skipped").index(c.verdict)):
        lines.append(f"| {c.sdk_version} | {c.cli_version} | {c.verdict} | {c.reason.replace('|', '/')} |")
    if diffs:
        lines += ["", f"**Where it differs from {diffs[0].baseline}** (the newest published release):", "",
                  "| other side | change | published | this build |", "|---|---|---|---|"]
        for d in diffs:
            was = f"{d.was}" + (f": {d.was_error}" if d.was_error else "") if d.was else "not measured"
            now = f"{d.now}" + (f": {d.now_error}" if d.now_error else "") if d.now else "not measured"
            lines.append(f"| {d.other} | **{d.kind}** | {was.replace('|', '/')} | {now.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def to_junit(decision: Decision, label: str) -> str:
    """One test case per pair: a failure for a no, an error for an unknown, skipped for a
    pair no deployment runs (or ignored by the fleet)."""
    counts = {v: sum(1 for c in decision.cells if c.verdict == v) for v in ("no", "unknown", "skipped")}
    suite = ET.Element("testsuite", name=f"compat-matrix can-i-ship {decision.family} {label}",
                       tests=str(len(decision.cells)), failures=str(counts["no"]), errors=str(counts["unknown"]),
                       skipped=str(counts["skipped"]))
    for c in decision.cells:
        case = ET.SubElement(suite, "testcase", classname=f"compat-matrix.{decision.family}",
                             name=f"sdk {c.sdk_version} × cli {c.cli_version}")
        if c.verdict == "no":
            ET.SubElement(case, "failure", message=c.reason[:500], type=c.outcome or "no").text = c.reason
        elif c.verdict == "unknown":
            ET.SubElement(case, "error", message=c.reason[:500], type="unknown").text = c.reason
        elif c.verdict == "skipped":
            ET.SubElement(case, "skipped", message=c.reason[:500])
    ET.indent(suite)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suite, encoding="unicode") + "\n"
