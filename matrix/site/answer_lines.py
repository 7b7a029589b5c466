"""The home page's answer for each family, as plain data: what the newest SDK release works
with, and which SDK releases work with the newest CLI release (measured ranges)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from matrix.answers.analysis import Range, pairs, working_ranges
from matrix.families.registry import FAMILIES
from matrix.present.rows import Rows
from matrix.versions import sorted_versions

__all__ = ["AnswerLine", "answer_lines", "span_text"]


@dataclass(frozen=True)
class AnswerLine:
    family: str
    sdk_package: str
    newest_sdk: str
    sdk_works_with: str  # the CLI releases, as ranges (first to last, en-dashed), or "none of the measured releases"
    cli_package: str
    newest_cli: str
    cli_works_with: str
    href: str  # the family's matrix page, from the site's root


def span_text(rs: list[Range], limit: int = 3) -> str:
    if not rs:
        return "none of the measured releases"  # measured, and none works: not "nothing measured"
    parts = [r.first if r.first == r.last else f"{r.first}–{r.last}" for r in rs]
    more = f" (and {len(parts) - limit} older ranges)" if len(parts) > limit else ""
    return ", ".join(parts[-limit:]) + more


def answer_lines(frame: pd.DataFrame | Rows) -> list[AnswerLine]:
    out = []
    for family in sorted(pairs(frame)["family"].unique()):
        fam = FAMILIES.get(family)
        if fam is None or fam.standin:
            continue
        sub = pairs(frame, family)
        sdk, cli = sorted_versions(sub["sdk_version"])[-1], sorted_versions(sub["cli_version"])[-1]
        out.append(AnswerLine(family, fam.sdk_package, sdk, span_text(working_ranges(frame, family, sdk=sdk)),
                              fam.cli_package, cli, span_text(working_ranges(frame, family, cli=cli)),
                              f"matrix/{family}.md"))
    return out
