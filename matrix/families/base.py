"""What a family is: the public interface a product family implements to be measured.

A family names its SDK side and its other side (a released CLI, or a stand-in the harness
starts), the probes it has and the phases they are planned in, the environments a cell
needs, how to prepare one ahead of its cells, how to measure a cell, and the pages of its own
the site publishes. Everything else (scheduling, installs and their retries, eviction,
storing rows, the pages every handshake matrix has) is the harness's.

A family is registered through the entry-point group ``compat_matrix.families``, as the
built-in ones are (``pyproject.toml``); ``matrix.families.registry`` finds them."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from matrix.execute import proc
from matrix.execute.environment import Environment
from matrix.execute.forkserver import ForkServers
from matrix.model import Cell, CellSettings, Row

if TYPE_CHECKING:
    import pandas as pd

    from matrix.store.dataset import Sources

__all__ = ["Context", "Family", "MakeEnv", "Planning"]

T = TypeVar("T")
E = TypeVar("E", bound=Environment)


class MakeEnv(Protocol):
    """Builds (does not install) an environment of ``kind`` for one release on one side
    (``"sdk"`` or ``"cli"``: the other side's environments are evicted beyond the budget)."""

    def __call__(self, kind: type[E], side: str, package: str, version: str, **kw: Any) -> E: ...


class Context(Protocol):
    """What the harness lends a family while it measures: limits, places, installs, and a
    per-run memo (one preparation per key, whichever cell asks first)."""

    settings: CellSettings
    scratch: Path  # where sandboxes go
    results: Path  # where transcripts and logs go, beside the rows
    reaper: proc.Reaper
    warm: ForkServers
    through_shim: bool  # relay handshakes through the (non-mutating) shim
    direct_cli: bool  # give the SDK the CLI's own entry point, no launcher

    def make(self, kind: type[E], side: str, package: str, version: str, **kw: Any) -> E: ...

    def ensure(self, env: Environment) -> None:
        """Install ``env`` if it is not (with retries); ``UninstallableError`` or ``InfraError``."""
        ...

    def memo(self, key: object, make: Callable[[], T]) -> T: ...

    def working(self) -> None:
        """Before one more unit of a cell's work (a repeated stop): wait for a CPU slot again if
        the cell gave its own back while it waited."""
        ...


@dataclass(frozen=True)
class Planning:
    """What a phase is planned from: the family's selected releases and probes, and every row
    measured so far (the committed history and this run's)."""

    sdk_versions: list[str]
    cli_versions: list[str]
    probes: list[str]
    rows: list[Row]


@dataclass(frozen=True, kw_only=True)
class Family(ABC):
    name: str
    description: str
    sdk_ecosystem: str  # "pypi" | "npm" | "go": release listing, version order, pins
    sdk_package: str
    cli_ecosystem: str  # the other side's ecosystem; "stand-in" for a stand-in the harness starts
    cli_package: str
    probes: tuple[str, ...]  # the probe kinds a config may select
    # Planned in this order, each from the rows of the ones before (tolerance from handshakes).
    phases: tuple[str, ...] = ("handshake",)
    sdk_extras: tuple[str, ...] = ()  # requested for every version; a release without them installs without
    # A family whose other side is our stand-in has one fixed "CLI version" (its contract version).
    standin: str | None = None
    # Sibling SDKs of the same repository: their version numbers are asked for by name when a
    # Go proxy refuses to list a module's versions.
    version_hints: tuple[tuple[str, str], ...] = ()
    # Python SDKs: the modules a warm server imports once per release (matrix/execute/forkserver.py).
    preload: tuple[str, ...] = ()

    @property
    def other_side(self) -> str:
        return "server" if self.standin else "CLI"

    @abstractmethod
    def plan(self, phase: str, planning: Planning) -> list[Cell]:
        """The cells of ``phase`` (empty for a phase this family does not have)."""

    @abstractmethod
    def environments(self, cell: Cell, make: MakeEnv) -> tuple[Environment, Environment | None]:
        """The SDK's environment and the other side's (None: nothing to install there)."""

    def prepare(self, cell: Cell, env: Environment, ctx: Context) -> None:  # noqa: B027 (optional hook)
        """Everything a cell would otherwise do first for ``env`` (installed and in use)."""

    @abstractmethod
    def measure(self, cell: Cell, sdk: Environment, other: Environment | None, ctx: Context) -> Row:
        """Measure one cell with its environments installed and held; an ``InfraError`` is our
        side failing, recorded as such."""

    def pages(self, frame: pd.DataFrame, sources: Sources) -> dict[str, str]:
        """Pages of this family's own (relative path -> Markdown), beside the matrix pages."""
        return {}

    def reproduction(self, sdk_version: str, cli_version: str, api: Mapping[str, Any], name: str) -> str | None:
        """A shell script, saved as ``name``, that shows what ``sdk_version`` does against a
        CLI release (its first argument, ``cli_version`` by default) outside the harness,
        through the SDK's public API only. ``api``: what the agent recorded of this release's
        API (``detail.api``). None: no reproduction for this family."""
        return None
