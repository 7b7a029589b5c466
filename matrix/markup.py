"""The small pieces of HTML every page is made of: escaped text, an outcome's badge, a cell's
marks (flaky, stale). Third-party text (error messages, argv) always goes through ``esc`` and
into an element, so nothing an SDK or CLI printed can become markup on our pages."""

from __future__ import annotations

import html
from typing import Any

from matrix import rules_version
from matrix.model import OUTCOME_INFO, Outcome

__all__ = ["badge", "esc", "esc_raw", "flaky_mark"]


def esc(value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value):  # NaN
        return ""
    return html.escape(str(value), quote=True)


def esc_raw(value: Any) -> str:
    """The text of a possibly-missing value, not yet escaped."""
    return "" if value is None or (isinstance(value, float) and value != value) else str(value)


def badge(outcome: str) -> str:
    colour = OUTCOME_INFO[Outcome(outcome)][0]
    return f'<span class="cm-badge cm-{esc(outcome)}" style="background:{colour}">{esc(outcome)}</span>'


def flaky_mark(row: Any) -> str:
    """A cell whose outcome differed between repeats says so, with every outcome seen; a cell
    measured by older rules of its probe (or only as a harness error) says it is stale."""
    marks = ""
    if getattr(row, "flaky", False) is True:
        seen = " / ".join(str(o) for o in (getattr(row, "repeats", None) or []))
        marks += f' <span class="cm-flaky" title="outcomes across repeats: {esc(seen)}">flaky ({esc(seen)})</span>'
    version = str(getattr(row, "harness_version", "") or "")
    current = rules_version(str(getattr(row, "probe", "")))
    if version and (version != current or getattr(row, "outcome", "") == "harness-error"):
        marks += (f' <span class="cm-stale" title="measured by the rules of harness {esc(version)}, now {esc(current)}'
                  ': `compat-matrix run --stale` measures it again">stale</span>')
    return marks
