"""A family of the test suite whose cells say what the test scripted: the seam where a request
becomes a result (the runner and the workflow) is tested at the family boundary, through the
public ``Family`` interface, as any family is measured: environments it asks for are installed
(a folder, or a refusal the registry would give), each cell measured by ``measure``, each row
typed by the payload it declares.

Script: (sdk, cli, probe) -> the outcomes of its measurements, in turn (the last one repeats);
a cell not scripted is compatible. ``BUG`` raises in ``measure`` (a bug of the family's),
``UNFIT`` returns a payload the family does not declare, ``SLOW`` is compatible after a wait.
SDK versions starting ``gone`` cannot be installed, ``down`` meet a registry that does not
answer."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

from matrix.errors import InfraError, UninstallableError
from matrix.execute.environment import Environment
from matrix.families.base import Context, Family, MakeEnv, Planning
from matrix.families.payload import Payload
from matrix.model import NO_CLI, Cell, Outcome, Row

__all__ = ["BUG", "SLOW", "UNFIT", "Folder", "ScriptedFamily", "family"]

BUG = "bug"
UNFIT = "unfit"
SLOW = "slow"


class Folder(Environment):
    """An environment that is a folder: installed at once, or refused as a registry would."""

    kind = "folder"

    def _install(self) -> None:
        if self.version.startswith("gone"):
            raise UninstallableError(self.package, self.version, "the registry no longer serves it")
        if self.version.startswith("down"):
            raise InfraError(f"{self.package}=={self.version}", "the registry did not answer")
        (self.location / "installed").write_text(self.version)


class ScriptedPayload(Payload):
    attempt: int = 0  # which measurement of its cell this was (1: the first)


@dataclass(frozen=True, kw_only=True)
class ScriptedFamily(Family):
    """Pairs of releases (``pair``), then one ``check`` per SDK release against the newest
    release its pair cells say works (none: not applicable, and why)."""

    probes: tuple[str, ...] = ("pair", "check")
    phases: tuple[str, ...] = ("pair", "check")
    pair_probe: str | None = "pair"
    script: dict[tuple[str, str, str], list[str]] = field(default_factory=dict)
    measured: list[Cell] = field(default_factory=list)  # every measurement, in order
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def plan(self, phase: str, planning: Planning) -> list[Cell]:
        if phase not in planning.probes:
            return []
        if phase == "pair":
            return [Cell(self.name, s, c, "pair") for s in planning.sdk_versions for c in planning.cli_versions]
        cells = []
        for sdk in planning.sdk_versions:
            mine = [r for r in planning.rows if (r.family, r.sdk_version, r.probe) == (self.name, sdk, "pair")]
            works = [r.cli_version for r in mine if r.outcome == Outcome.COMPATIBLE]
            newest = max(works, key=planning.cli_versions.index) if works else None
            cells.append(Cell(self.name, sdk, newest or NO_CLI, "check", "rule",
                              why="" if newest else "no release of the other side works with it"))
        return cells

    def environments(self, cell: Cell, make: MakeEnv) -> tuple[Environment, Environment | None]:
        return make(Folder, "sdk", self.sdk_package, cell.sdk_version), make(Folder, "cli", self.cli_package,
                                                                              cell.cli_version)

    def measure(self, cell: Cell, sdk: Environment, other: Environment | None, ctx: Context) -> Row:
        assert sdk.is_ready() and other is not None and other.is_ready()
        with self._lock:
            self.measured.append(cell)
            attempt = sum(1 for c in self.measured if c == cell)
        outcomes = self.script.get((cell.sdk_version, cell.cli_version, cell.probe), [Outcome.COMPATIBLE])
        said = outcomes[min(attempt, len(outcomes)) - 1]
        if said == BUG:
            raise RuntimeError("a bug of the family's")
        if said == SLOW:
            time.sleep(0.5)
            said = Outcome.COMPATIBLE
        payload = {"attempt": "not a number"} if said == UNFIT else ScriptedPayload(attempt=attempt).model_dump()
        return Row(family=cell.family, sdk_version=cell.sdk_version, cli_version=cell.cli_version, probe=cell.probe,
                   mutation=cell.mutation, outcome=Outcome.COMPATIBLE if said == UNFIT else Outcome(said),
                   payload=payload, harness_version=self.rules.version(cell.probe),
                   measured_at=datetime.now(UTC).isoformat(timespec="microseconds"))

    def payload_model(self, probe: str) -> type[Payload]:
        return ScriptedPayload


def family(script: dict[tuple[str, str, str], list[str]] | None = None) -> ScriptedFamily:
    return ScriptedFamily(name="scripted", description="a family of the test suite", sdk_ecosystem="pypi",
                          sdk_package="scripted-sdk", cli_ecosystem="pypi", cli_package="scripted-cli",
                          script=dict(script or {}))
