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
from typing import Any, Protocol, TypeVar

import pandas as pd

from matrix.execute import proc
from matrix.execute.aheadstart import AheadStarts
from matrix.execute.environment import Environment
from matrix.execute.forkserver import ForkServers
from matrix.families.payload import Payload
from matrix.families.rules import Rules
from matrix.model import OUTCOME_INFO, OUTCOME_LETTERS, Cell, CellSettings, Outcome, Row
from matrix.present.grid import first_line
from matrix.present.rows import Rows
from matrix.store.dataset import Sources
from matrix.store.results import Releases

__all__ = ["LETTERS", "Context", "Family", "MakeEnv", "Picture", "Planning", "SiteView", "Vocabulary"]

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
    ahead: AheadStarts
    through_shim: bool  # relay handshakes through the (non-mutating) shim
    direct_cli: bool  # give the SDK the CLI's own entry point, no launcher

    def make(self, kind: type[E], side: str, package: str, version: str, **kw: Any) -> E: ...

    def ensure(self, env: Environment) -> None:
        """Install ``env`` if it is not (with retries); ``UninstallableError`` or ``InfraError``."""
        ...

    def memo(self, key: object, make: Callable[[], T]) -> T: ...

    def shared(self, key: object, make: Callable[[], T]) -> T:
        """As ``memo``, for work several cells share (a batch): the cells that wait for another
        cell's ``make()`` give their CPU slot back while they wait."""
        ...

    def working(self) -> None:
        """Before one more unit of a cell's work (a repeated stop): wait for a CPU slot again if
        the cell gave its own back while it waited."""
        ...

    def waiting(self) -> None:
        """The cell only waits from now until its agent ends (out a leak wait): its CPU slot goes
        to another cell; ``working`` takes one again."""
        ...


@dataclass(frozen=True)
class Planning:
    """What a phase is planned from: the family's selected releases and probes, and every row
    measured so far (the committed history and this run's)."""

    sdk_versions: list[str]
    cli_versions: list[str]
    probes: list[str]
    rows: list[Row]


@dataclass(frozen=True)
class SiteView:
    """What a family's pages are made from: every measured row (of every family, and the slices
    asked of them, made once per build), the release dates, where evidence is read, and every
    family (for the pages a kind of family shares)."""

    rows: Rows
    releases: Releases
    sources: Sources
    families: Mapping[str, Family]
    generated_at: str

    @property
    def frame(self) -> pd.DataFrame:
        return self.rows.frame


@dataclass(frozen=True)
class Picture:
    """A heatmap a family's pages show: ``cells`` across ``columns`` (in ``order``), SDK versions
    down, saved as ``assets/<name>``."""

    name: str
    cells: pd.DataFrame
    title: str
    columns: str = "cli_version"
    xlabel: str = "CLI version"
    order: list[str] | None = None
    bands: list[str] | None = None  # families drawn as bands on one shared axis, instead of one grid


@dataclass(frozen=True)
class Vocabulary:
    """The outcomes a kind of cell ends in, titled for the site's legend; ``note``: Markdown the
    legend shows after them (how the family's marks read)."""

    title: str
    outcomes: tuple[Outcome, ...]
    note: str = ""
    kind: str = ""  # what each of its outcomes' meanings starts with ("Tolerance: "), left out in the legend
    # What an outcome means for this kind of cell where the site's one line does not say it.
    meanings: tuple[tuple[Outcome, str], ...] = ()

    def meaning(self, outcome: Outcome) -> str:
        return dict(self.meanings).get(outcome) or OUTCOME_INFO[outcome][1].removeprefix(self.kind)


# A cell's letter in a matrix, by outcome: the one generic reading of a cell.
LETTERS: dict[str, str] = {str(o): letter for o, letter in OUTCOME_LETTERS.items()}


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
    # The probe whose cells pair one release of each side: the site's matrix and release pages,
    # the ranges, pins and can-i-ship are read from its cells (None: the family has none).
    pair_probe: str | None = None
    # Probes whose cells of a pair refine the pair probe's verdict (a pair cell carries their
    # outcome and error: ``matrix.present.rows.refined``), read by ``works`` and ``works_but``.
    refined_by: tuple[str, ...] = ()
    # What a pair that works, but not cleanly, leaves its user with ("": no such pairs), and how a
    # release note introduces the ranges that work so.
    caveat: str = ""
    caveat_with: str = ""
    # The outcome vocabularies its probes use, for the site's legend.
    vocabularies: tuple[Vocabulary, ...] = ()
    # Its name in prose ("Cosmo"), and the home page's line pointing at its own pages (Markdown).
    title: str = ""
    guide: str = ""
    # What a range of its pin guide stands on (Markdown; the site says each one once).
    pin_guide: str = ("Ranges below are runs of **measured** versions that worked; a range spans only versions "
                      "between two measured ones that both worked. Anything not listed was not measured.")
    # The fields of a pair cell ``cell_label`` and ``cell_note`` read, besides its outcome and error.
    cell_columns: tuple[str, ...] = ()
    # The rules its verdicts are made by, versioned per probe (what makes a stored cell stale).
    rules: Rules = Rules()  # noqa: RUF009 (immutable: one shared default)

    @property
    def default_probes(self) -> tuple[str, ...]:
        """What a config that names none measures: the pair probe, or every probe."""
        return (self.pair_probe,) if self.pair_probe else self.probes

    @property
    def other_side(self) -> str:
        return "server" if self.standin else "CLI"

    def front_page(self) -> str:
        """Its page the site's home links to, from the site's root: its matrix, or its checks."""
        return f"matrix/{self.name}.md" if self.pair_probe else f"checks/{self.name}.md"

    def release_page(self, side: str, version: str) -> str:
        """Where the page of one of its releases is, from the site's root (``side``: sdk, cli)."""
        return f"versions/{self.name}/{side}-{version}.md"

    @abstractmethod
    def plan(self, phase: str, planning: Planning) -> list[Cell]:
        """The cells of ``phase`` (empty for a phase this family does not have). A release's
        cells are planned from its own rows alone (``planning.rows`` of other SDK releases are
        not read): a run moves each SDK release to its next phase as soon as its own cells of
        the phase before are in (``matrix.pipeline.progression``; tests/pipeline/test_progression.py
        checks every installed family on the history)."""

    @abstractmethod
    def environments(self, cell: Cell, make: MakeEnv) -> tuple[Environment, Environment | None]:
        """The SDK's environment and the other side's (None: nothing to install there)."""

    def prepare(self, cell: Cell, env: Environment, ctx: Context) -> None:  # noqa: B027 (optional hook)
        """Everything a cell would otherwise do first for ``env`` (installed and in use)."""

    @abstractmethod
    def measure(self, cell: Cell, sdk: Environment, other: Environment | None, ctx: Context) -> Row:
        """Measure one cell with its environments installed and held; an ``InfraError`` is our
        side failing, recorded as such."""

    # -- what its rows are -------------------------------------------------------------------

    def payload_model(self, probe: str) -> type[Payload]:
        """What a row of ``probe`` carries beside the core (``Row.payload``): nothing, by default."""
        return Payload

    def per_sdk(self, probe: str, mutation: str) -> bool:
        """Whether a row of this probe and check stands for its SDK release alone (the harness
        chose the other side for it), not for a pair: by default, every probe but the pair
        probe."""
        return probe != self.pair_probe

    # -- reading what was measured (for ranges, pins, can-i-ship and every page) ----------

    def works(self, cells: pd.DataFrame) -> pd.Series:
        """Which pair cells work as a user needs them to."""
        return cells["outcome"] == Outcome.COMPATIBLE.value

    def works_but(self, cells: pd.DataFrame) -> pd.Series:
        """Which pair cells work, with ``caveat`` (none by default)."""
        return pd.Series(False, index=cells.index)

    def cell_label(self, rec: Mapping[Any, Any]) -> str:
        """What a pair cell says in a matrix: its outcome's letter (a compatible cell: nothing)."""
        return LETTERS.get(str(rec["outcome"]), "")

    def cell_note(self, rec: Mapping[Any, Any]) -> str:
        """What a pair cell's tooltip says after its outcome: the first line of its error."""
        return first_line(rec)

    def marks(self, cells: pd.DataFrame) -> list[str]:
        """What the marks ``cell_label`` adds to ``cells`` mean, for a matrix's legend."""
        return []

    def aside(self, rec: Mapping[Any, Any]) -> str | None:
        """What a user of this pair meets besides what its outcome and error say (None: nothing)."""
        return None

    # -- its pages --------------------------------------------------------------------------

    def pages(self, view: SiteView) -> dict[str, str]:
        """Pages of this family's own (relative path -> Markdown), beside the generic ones."""
        return {}

    def pair_pages(self, view: SiteView) -> dict[str, str] | None:
        """Its matrix and release pages, when it writes them itself (None: the site's own)."""
        return None

    def check_pages(self, view: SiteView) -> dict[str, str] | None:
        """The pages of its checks (rows of one SDK release each), when it writes them itself
        (``pages`` does; None: the site's own grid of them)."""
        return None

    def side_by_side(self, view: SiteView) -> dict[str, tuple[str, str]]:
        """Pages under ``matrix/`` that set families side by side: relative path -> (page text,
        what it shows, for the matrices' index). A page several families write is written once."""
        return {}

    def pictures(self, view: SiteView) -> list[Picture]:
        """Every heatmap its pages show: by default its pair matrix's (a picture several
        families give is drawn once)."""
        if not self.pair_probe:
            return []
        return [Picture(f"heatmap-{self.name}.png", view.rows.pairs(self.name), f"{self.name}: {self.pair_probe}")]

    def reproduction(self, sdk_version: str, cli_version: str, api: Mapping[str, Any], name: str) -> str | None:
        """A shell script, saved as ``name``, that shows what ``sdk_version`` does against a
        CLI release (its first argument, ``cli_version`` by default) outside the harness,
        through the SDK's public API only. ``api``: what the agent recorded of this release's
        API (``detail.api``). None: no reproduction for this family."""
        return None
