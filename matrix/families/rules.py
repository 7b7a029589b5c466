"""The rules a family's verdicts are made by, versioned per probe: a change that can alter
every verdict bumps the harness (``HARNESS_VERSION``); one that can alter only one probe's
cells bumps that probe's version, and may say which stored cells it can alter (``touches``):
exactly those become stale (marked on the site, measured again by ``run --stale``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from matrix import HARNESS_VERSION
from matrix.model import Outcome, value_of

__all__ = ["Rules"]


@dataclass(frozen=True, eq=False)
class Rules:
    # probe -> the version of its rules (a probe not named: the harness's)
    versions: Mapping[str, str] = field(default_factory=dict)
    # (probe, version) -> which stored cells that version can alter (a test of the stored row; a
    # version not named can alter every cell)
    touches: Mapping[tuple[str, int], Callable[[Any], bool]] = field(default_factory=dict)

    def version(self, probe: str) -> str:
        """The version of ``probe``'s rules a row measured now records."""
        return self.versions.get(probe, HARNESS_VERSION)

    def current(self, row: Any) -> bool:
        """Whether a stored row is what the current rules of its probe would measure: every
        change since it was measured leaves it alone."""
        probe, measured_by = str(value_of(row, "probe", "")), str(value_of(row, "harness_version", "") or "")
        now = self.version(probe)
        if measured_by == now:
            return True
        if not (measured_by.isdigit() and now.isdigit()) or int(measured_by) > int(now):
            return False
        return not any(self.touches.get((probe, v), lambda _row: True)(row)
                       for v in range(int(measured_by) + 1, int(now) + 1))

    def stale(self, row: Any) -> bool:
        """Measured by older rules that the current ones would judge otherwise, or never given
        a verdict (a harness error)."""
        return not self.current(row) or value_of(row, "outcome") == Outcome.HARNESS_ERROR

    def note(self, row: Any) -> str:
        """What a stale cell's mark says ("": it is not stale)."""
        version = str(value_of(row, "harness_version", "") or "")
        if not version or not self.stale(row):
            return ""
        return (f"measured by the rules of harness {version}, now {self.version(str(value_of(row, 'probe')))}: "
                "`compat-matrix run --stale` measures it again")
