"""Derived answers from the results DataFrame: working ranges, pins, recommendations.

Everything here reads measured rows only. A version pair that was not measured, or was
measured only as an infra/harness error, is unknown and never counted as working."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import pandas as pd

from matrix.ecosystems import Run, get
from matrix.families.registry import FAMILIES
from matrix.model import Outcome
from matrix.probes.verdict import DOES_NOT_START, LEFT_RUNNING
from matrix.versions import sorted_versions

T = TypeVar("T")

__all__ = ["Range", "after_stop_text", "does_not_start", "handshake", "leak_ranges", "leaves_running", "pin_lines",
           "ranges", "stop_rate", "working_ranges"]

WORKS = {Outcome.COMPATIBLE.value}
CONNECTS = {Outcome.COMPATIBLE.value, Outcome.DEGRADED.value}


def leaves_running(frame: pd.DataFrame) -> pd.Series:
    """Cells that connected and answered everything, but whose SDK left a process it started
    running after stop(): usable, and not what a careful user would pin first."""
    return (frame["outcome"] == Outcome.DEGRADED.value) & (frame["error_type"] == LEFT_RUNNING)


def does_not_start(frame: pd.DataFrame, family: str, cli: str) -> str | None:
    """Why a release of the other side starts for no SDK release on this machine (every one of
    its cells says so), or None."""
    rows = release_rows(frame, family, "cli_version", cli)
    if rows.empty or not (rows["error_type"] == DOES_NOT_START).all():
        return None
    full = handshake(frame, family)
    hit = full[(full["cli_version"] == cli) & (full["error_type"] == DOES_NOT_START)]["error_message"]
    return str(hit.iloc[0]) if not hit.empty else None


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


@dataclass(frozen=True)
class Range:
    """A run of consecutive measured versions (in the measured list) sharing a property."""

    first: str
    last: str
    versions: tuple[str, ...]


# A site asks thousands of questions of one frame (a family's handshake rows, one release's
# rows): each answer is kept with the frame, made once, and dropped with it. A frame must
# therefore not change once asked, nor an answer be changed by its reader.
_KEPT: dict[int, dict[Any, Any]] = {}


def _kept(frame: pd.DataFrame, key: Any, make: Callable[[], T]) -> T:
    kept = _KEPT.get(id(frame))
    if kept is None:
        kept = _KEPT[id(frame)] = {}
        weakref.finalize(frame, _KEPT.pop, id(frame), None)
    if key not in kept:
        kept[key] = make()
    return cast(T, kept[key])


def handshake(frame: pd.DataFrame, family: str | None = None) -> pd.DataFrame:
    """The handshake rows (of ``family``); the same object for the same frame: do not modify it."""
    def make() -> pd.DataFrame:
        sub = frame[frame["probe"] == "handshake"]
        return sub[sub["family"] == family] if family is not None else sub
    return _kept(frame, ("handshake", family), make)


def ranges(axis: list[str], good: set[str]) -> list[Range]:
    """Split ``axis`` (sorted, measured versions) into runs of consecutive good versions."""
    out: list[Range] = []
    run: list[str] = []
    for v in axis:
        if v in good:
            run.append(v)
        elif run:
            out.append(Range(run[0], run[-1], tuple(run)))
            run = []
    if run:
        out.append(Range(run[0], run[-1], tuple(run)))
    return out


def working_ranges(frame: pd.DataFrame, family: str, sdk: str | None = None, cli: str | None = None,
                   outcomes: set[str] = WORKS) -> list[Range]:
    """For an SDK version: the CLI ranges with an outcome in ``outcomes``; or the reverse."""
    return _ranges_where(frame, family, sdk, cli, lambda part: part["outcome"].isin(outcomes))


def leak_ranges(frame: pd.DataFrame, family: str, sdk: str | None = None, cli: str | None = None) -> list[Range]:
    """The ranges that work except that stop() leaves a process running (``leaves_running``)."""
    return _ranges_where(frame, family, sdk, cli, leaves_running)


# What ranges are read from: grouping these columns, not every stored one, is quicker.
_RANGE_COLUMNS = ["family", "probe", "sdk_version", "cli_version", "outcome", "error_type"]


def _slim(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[_RANGE_COLUMNS] if len(frame.columns) > len(_RANGE_COLUMNS) else frame


def release_rows(frame: pd.DataFrame, family: str, side: str, version: str) -> pd.DataFrame:
    """The handshake rows of one release (``side``: ``sdk_version`` or ``cli_version``), with
    the columns ranges are read from."""
    def make() -> dict[tuple[str, str, str], pd.DataFrame]:
        hs = _slim(handshake(frame))
        return {(str(f), col, str(v)): g for col in ("sdk_version", "cli_version")
                for (f, v), g in hs.groupby(["family", col], sort=False)}
    found = _kept(frame, "releases", make).get((family, side, version))
    return found if found is not None else _slim(handshake(frame)).iloc[0:0]


def _ranges_where(frame: pd.DataFrame, family: str, sdk: str | None, cli: str | None,
                  good: Callable[[pd.DataFrame], pd.Series]) -> list[Range]:
    this, other = ("sdk_version", "cli_version") if sdk is not None else ("cli_version", "sdk_version")
    part = release_rows(frame, family, this, str(sdk if sdk is not None else cli))
    return ranges(sorted_versions(part[other]), set(part[good(part)][other]))


def pin_lines(frame: pd.DataFrame, family: str, sdk: str | None = None, cli: str | None = None,
              leaky: bool = False) -> list[str]:
    """For an SDK version, what to write down to stay on CLIs that work with it; for a CLI
    version, the same of SDKs; each in the other side's ecosystem's own syntax (pip
    specifiers, npm ranges, a Go ``require`` with ``exclude`` lines). ``leaky``: the versions
    that work except that stop() leaves a process running, instead of the clean ones."""
    fam = FAMILIES[family]
    eco, package = (get(fam.cli_ecosystem), fam.cli_package) if sdk is not None else \
        (get(fam.sdk_ecosystem), fam.sdk_package)
    rs = leak_ranges(frame, family, sdk, cli) if leaky else working_ranges(frame, family, sdk, cli)
    if not rs:
        return []
    this, other = ("sdk_version", "cli_version") if sdk is not None else ("cli_version", "sdk_version")
    axis = sorted_versions(release_rows(frame, family, this, str(sdk if sdk is not None else cli))[other])
    good = {v for r in rs for v in r.versions}
    inside = axis[axis.index(rs[0].first):axis.index(rs[-1].last) + 1]
    return eco.pin(package, [Run(r.first, r.last) for r in rs], [v for v in inside if v not in good])


@dataclass(frozen=True)
class UpgradeAdvice:
    newest_sdk: str
    newest_cli: str
    sdks_working_with_newest_cli: tuple[str, ...]
    clis_working_with_newest_sdk: tuple[str, ...]
    sdk_count: int
    cli_count: int

    @property
    def first(self) -> str:
        """Which side to upgrade first: the one whose newest release works with more of the
        other side's measured versions keeps more deployments working during the move."""
        sdk_share = len(self.clis_working_with_newest_sdk) / max(self.cli_count, 1)
        cli_share = len(self.sdks_working_with_newest_cli) / max(self.sdk_count, 1)
        if sdk_share > cli_share:
            return "sdk"
        if cli_share > sdk_share:
            return "cli"
        return "either"


def upgrade_advice(frame: pd.DataFrame, family: str) -> UpgradeAdvice | None:
    sub = handshake(frame, family)
    if sub.empty:
        return None
    sdks = sorted_versions(sub["sdk_version"])
    clis = sorted_versions(sub["cli_version"])
    ok = sub[sub["outcome"].isin(WORKS)]
    return UpgradeAdvice(
        newest_sdk=sdks[-1],
        newest_cli=clis[-1],
        sdks_working_with_newest_cli=tuple(sorted_versions(ok[ok["cli_version"] == clis[-1]]["sdk_version"])),
        clis_working_with_newest_sdk=tuple(sorted_versions(ok[ok["sdk_version"] == sdks[-1]]["cli_version"])),
        sdk_count=len(sdks),
        cli_count=len(clis),
    )
