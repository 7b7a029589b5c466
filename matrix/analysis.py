"""Derived answers from the results DataFrame: working ranges, pins, recommendations.

Everything here reads measured rows only. A version pair that was not measured, or was
measured only as an infra/harness error, is unknown and never counted as working."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from .outcomes import Outcome
from .versions import sort_key

__all__ = ["Range", "handshake", "npm_spec", "pip_spec", "ranges", "working_ranges"]

WORKS = {Outcome.COMPATIBLE.value}
CONNECTS = {Outcome.COMPATIBLE.value, Outcome.DEGRADED.value}


@dataclass(frozen=True)
class Range:
    """A run of consecutive measured versions (in the measured list) sharing a property."""

    first: str
    last: str
    versions: tuple[str, ...]


def handshake(frame: pd.DataFrame, family: str | None = None) -> pd.DataFrame:
    sub = frame[frame["probe"] == "handshake"]
    if family is not None:
        sub = sub[sub["family"] == family]
    return sub


def sorted_versions(values: pd.Series | list[str]) -> list[str]:
    return sorted(set(values), key=sort_key)


def sort_by_version(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    return frame.sort_values(column, key=lambda s: s.map(sort_key), kind="stable")


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
    sub = handshake(frame, family)
    if sdk is not None:
        part = sub[sub["sdk_version"] == sdk]
        axis = sorted_versions(part["cli_version"])
        good = set(part[part["outcome"].isin(outcomes)]["cli_version"])
    else:
        part = sub[sub["cli_version"] == cli]
        axis = sorted_versions(part["sdk_version"])
        good = set(part[part["outcome"].isin(outcomes)]["sdk_version"])
    return ranges(axis, good)


def npm_spec(package: str, r: Range) -> str:
    if r.first == r.last:
        return f"{package}@{r.first}"
    return f'"{package}@>={r.first} <={r.last}"'


def pip_spec(package: str, r: Range) -> str:
    if r.first == r.last:
        return f"{package}=={r.first}"
    return f'"{package}>={r.first},<={r.last}"'


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
