"""How what stop() left reads: the rate of a cell's stops that left a process running, a few
words of what stop() left, and the marks a matrix cell carries for it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from matrix.families.copilot.payload import SESSION
from matrix.model import NOT_A_VERDICT, Outcome
from matrix.present.rows import refined
from matrix.probes.verdict import LEFT_RUNNING

__all__ = ["LEAK_MARK", "LEAK_TEXT", "RACE_MARK", "RACE_TEXT", "after_stop_text", "leak_kind", "leaves_running",
           "stop_rate"]

LEAK_MARK = "†"  # after the protocol or letter: the SDK left a process running after every stop() measured
LEAK_TEXT = f"{LEAK_MARK} left a process running after stop(), every time measured"
RACE_MARK = "◐"  # ... after some of its stops and not others: a race
RACE_TEXT = f"{RACE_MARK} left a process running after some stops, not others (a race)"


def leaves_running(cells: pd.DataFrame) -> pd.Series:
    """Cells that connected and answered everything, but whose SDK left a process it started
    running after stop(): usable, and not what a careful user would pin first."""
    return (cells["outcome"] == Outcome.DEGRADED.value) & (cells["error_type"] == LEFT_RUNNING)


def stop_rate(stops: object) -> tuple[int, int]:
    """(stops that left a process running, stops measured) of a row's ``stops``."""
    if not isinstance(stops, (list, tuple)) or not stops:
        return 0, 0
    return sum(1 for s in stops if not isinstance(s, (int, float)) or s != s), len(stops)


def _spread(stops: Sequence[object]) -> str:
    gone = sorted(float(s) for s in stops if isinstance(s, (int, float)) and s == s)
    if not gone:
        return ""
    return f"{gone[0]:.2f} s" if gone[0] == gone[-1] else f"{gone[0]:.2f}-{gone[-1]:.2f} s"


def after_stop_text(leaked: object, seconds: object, stops: object = None) -> str:
    """What stop() left, in a few words: "left copilot running in 2 of 5 stops, else gone in
    0.05-0.31 s", "gone every time in 0.06 s (5 stops)", "left copilot running", or ""."""
    left, n = stop_rate(stops)
    what = ", ".join(map(str, leaked)) if isinstance(leaked, (list, tuple)) and leaked else "a process"
    if n > 1:
        assert isinstance(stops, (list, tuple))
        if left == 0:
            return f"gone every time in {_spread(stops)} ({n} stops)"
        if left == n:
            return f"left {what} running in {n} of {n} stops"
        return f"left {what} running in {left} of {n} stops, else gone in {_spread(stops)}"
    if isinstance(leaked, (list, tuple)) and leaked:
        return f"left {what} running"
    if isinstance(seconds, (int, float)) and seconds == seconds:
        return f"gone in {float(seconds):.2f} s"
    return ""


def leak_kind(rec: Mapping[Any, Any]) -> str:
    """"race" when some measured stops left a process running and others did not, "always"
    when every one did (or the one measured did), "" when none did."""
    stops = rec.get("stops")
    if isinstance(stops, (list, tuple, np.ndarray)) and len(stops) > 0:
        left = sum(1 for s in stops if s is None or s != s)
        return "" if left == 0 else ("always" if left == len(stops) else "race")
    leaked = rec.get("leaked")
    return "always" if isinstance(leaked, (list, tuple, np.ndarray)) and len(leaked) > 0 else ""


# A session that worked (its turns held; an event may have reached the application as the
# SDK's unknown, which it can read raw).
SESSION_WORKS = (Outcome.COMPATIBLE, Outcome.SURFACED)


def session_clean(cells: pd.DataFrame) -> pd.Series:
    """Pairs whose session worked, or was not measured, or measured nothing (an infrastructure
    error, a version without a session API): such a pair keeps the handshake's verdict; the pages
    say which were measured."""
    col = cells.get(refined(SESSION, "outcome"))
    if col is None:
        return pd.Series(True, index=cells.index)
    return col.isna() | col.isin(SESSION_WORKS) | col.isin(NOT_A_VERDICT)


def session_leaks(cells: pd.DataFrame) -> pd.Series:
    """Pairs whose session worked but whose SDK left a process running after its stop()."""
    outcome, error = cells.get(refined(SESSION, "outcome")), cells.get(refined(SESSION, "error_type"))
    if outcome is None or error is None:
        return pd.Series(False, index=cells.index)
    return (outcome == Outcome.DEGRADED) & (error == LEFT_RUNNING)
