"""The versioned JSON API under the site (``api/v1/``) and the badges (shields.io endpoint
documents), for release bots and READMEs.

The shape of every ``v1`` document is a pydantic model here, and its JSON Schema is committed
beside this module (``api_schema/v1/``): a test fails when a model no longer produces the
committed schema, so ``v1`` can only grow by a new version, never change under a consumer.

Layout::

    api/v1/index.json                          families, their packages and releases
    api/v1/<family>/sdk/<version>.json         an SDK release: what it works with
    api/v1/<family>/cli/<version>.json         a CLI release: which SDK releases work with it
    api/v1/<family>/badge/sdk-<version>.json   shields.io endpoint, per release
    api/v1/<family>/badge/cli-<version>.json
    api/v1/schema/<document>.json              the JSON Schemas"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict

from matrix.answers.analysis import caveat_ranges, pairs, pin_lines, working_ranges
from matrix.families.base import SiteView
from matrix.families.registry import FAMILIES
from matrix.markup import badge_path, yes_no
from matrix.model import GOOD_OUTCOMES, NOT_A_VERDICT, Outcome
from matrix.present.records import records
from matrix.versions import sort_key, sorted_versions

__all__ = ["SCHEMAS", "Documents", "index_of", "publish_schemas", "remove_unwritten", "write_api"]

SCHEMA_DIR = Path(__file__).parent / "api_schema" / "v1"
_GOOD = GOOD_OUTCOMES


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Release(_Doc):
    version: str
    released: str | None  # the registry's publication time, when known


class Side(_Doc):
    package: str
    ecosystem: str | None  # "pypi", "npm", "go"; None for a stand-in the harness starts
    releases: list[Release]


class FamilyEntry(_Doc):
    name: str
    sdk: Side
    other: Side
    other_kind: Literal["cli", "server"]


class Index(_Doc):
    api: Literal["v1"] = "v1"
    generated_at: str
    families: list[FamilyEntry]


class Span(_Doc):
    """Consecutive measured releases of the other side that share the verdict."""

    first: str
    last: str
    versions: list[str]


class Cell(_Doc):
    other: str  # the other side's release
    outcome: str
    protocol: int | None
    error: str | None  # the first line of what the SDK raised
    left_running: list[str]  # what stop() left behind
    message_names_versions: bool | None  # grades of the SDK's failure message
    message_actionable: bool | None
    flaky: bool


class Check(_Doc):
    probe: str
    check: str
    outcome: str
    error: str | None


class Grades(_Doc):
    """How the SDK's failure messages read, over the cells that failed."""

    graded: int
    names_versions: int
    actionable: int


class SdkRelease(_Doc):
    api: Literal["v1"] = "v1"
    family: str
    package: str
    version: str
    released: str | None
    other_package: str
    works_with: list[str]  # what to write down, in the other side's ecosystem's syntax
    works_with_spans: list[Span]
    works_but_leaves_cli_running: list[str]
    leaves_cli_running_spans: list[Span]
    message_grades: Grades
    cells: list[Cell]
    tolerance: list[Check]  # every other probe of this release (unknown messages, fields, ...)


class CliRelease(_Doc):
    api: Literal["v1"] = "v1"
    family: str
    package: str
    version: str
    released: str | None
    sdk_package: str
    works_with: list[str]  # the SDK releases, in the SDK's ecosystem's syntax
    works_with_spans: list[Span]
    works_but_leaves_cli_running: list[str]
    leaves_cli_running_spans: list[Span]
    cells: list[Cell]


class Badge(_Doc):
    """shields.io's endpoint document."""

    schemaVersion: Literal[1] = 1  # shields' own key
    label: str
    message: str
    color: str


SCHEMAS: dict[str, type[BaseModel]] = {"index": Index, "sdk-release": SdkRelease, "cli-release": CliRelease,
                                       "badge": Badge}


def schema_of(name: str) -> dict[str, object]:
    return SCHEMAS[name].model_json_schema()


def _first_line(value: object) -> str | None:
    return value.strip().splitlines()[0][:300] if isinstance(value, str) and value.strip() else None


# The columns v1's pair cells are read from (two of them by name: v1 names them).
_PROTOCOL, _LEAKED = "protocol", "leaked"
_CELL_COLUMNS = ("outcome", _PROTOCOL, "error_message", _LEAKED, "message_names_versions", "message_actionable",
                 "flaky")


def _cell(r: Mapping[str, Any], other: str) -> Cell:
    """A pair cell as API v1 gives it; v1's keys a family's payload has no field for are null
    (a list: empty)."""
    def number(value: object) -> int | None:
        return int(value) if isinstance(value, (int, float)) and not pd.isna(value) else None

    def names(value: object) -> list[str]:
        return [str(x) for x in value] if isinstance(value, list) else []

    return Cell(other=str(r[other]), outcome=str(r["outcome"]), protocol=number(r.get(_PROTOCOL)),
                error=_first_line(r["error_message"]), left_running=names(r.get(_LEAKED)),
                message_names_versions=yes_no(r.get("message_names_versions")),
                message_actionable=yes_no(r.get("message_actionable")), flaky=bool(r["flaky"]))


def _cells(data: SiteView, family: str, side: str, version: str) -> list[Cell]:
    """The pair cells of one release (``side``: ``sdk_version`` or ``cli_version``) in the other
    side's release order: the family's are read once, not once per release."""
    def make() -> dict[tuple[str, str], list[Cell]]:
        by: dict[tuple[str, str], list[Cell]] = {}
        for r in records(pairs(data.rows, family), ("sdk_version", "cli_version", *_CELL_COLUMNS)):
            by.setdefault(("sdk_version", str(r["sdk_version"])), []).append(_cell(r, "cli_version"))
            by.setdefault(("cli_version", str(r["cli_version"])), []).append(_cell(r, "sdk_version"))
        return {k: sorted(cells, key=lambda c: sort_key(c.other)) for k, cells in by.items()}
    found: dict[tuple[str, str], list[Cell]] = data.rows.once(("api v1 cells", family), make)
    return list(found.get((side, version), []))


def _spans(rs: list) -> list[Span]:  # type: ignore[type-arg]
    return [Span(first=r.first, last=r.last, versions=list(r.versions)) for r in rs]


def _bare(lines: list[str]) -> list[str]:
    return [s.strip('"') for s in lines]  # the quotes are for a shell


def sdk_release(data: SiteView, family: str, sdk: str) -> SdkRelease:
    fam = FAMILIES[family]
    rows = data.rows.of_release(family, "sdk_version", sdk)
    # v1's grades read a payload field of a family's pair cells; a family without one has none.
    hs = rows[rows["probe"] == fam.pair_probe].reindex(columns=[*rows.columns, *(
        c for c in ("message_names_versions", "message_actionable") if c not in rows.columns)])
    failed = hs[hs["message_names_versions"].map(lambda v: isinstance(v, bool)).astype(bool)]
    # v1's checks are per SDK release; a probe that refines the pair cells (a session per pair)
    # is in its working ranges, and in no list of v1 (its cells would need a key v1 does not have).
    others = rows[(rows["probe"] != fam.pair_probe) & ~rows["probe"].isin(fam.refined_by)].sort_values(
        ["probe", "mutation"])
    return SdkRelease(
        family=family, package=fam.sdk_package, version=sdk,
        released=data.releases.get(family, {}).get("sdk", {}).get(sdk), other_package=fam.cli_package,
        works_with=_bare(pin_lines(data.rows, family, sdk=sdk)) if not hs.empty else [],
        works_with_spans=_spans(working_ranges(data.rows, family, sdk=sdk)),
        works_but_leaves_cli_running=_bare(pin_lines(data.rows, family, sdk=sdk, caveat=True)) if not hs.empty else [],
        leaves_cli_running_spans=_spans(caveat_ranges(data.rows, family, sdk=sdk)),
        message_grades=Grades(graded=len(failed), names_versions=int((failed["message_names_versions"] == True).sum()),  # noqa: E712
                              actionable=int((failed["message_actionable"] == True).sum())),  # noqa: E712
        cells=_cells(data, family, "sdk_version", sdk),
        tolerance=[Check(probe=str(r["probe"]), check=str(r["mutation"]), outcome=str(r["outcome"]),
                         error=_first_line(r["error_message"]))
                   for r in records(others, ("probe", "mutation", "outcome", "error_message"))])


def cli_release(data: SiteView, family: str, cli: str) -> CliRelease:
    fam = FAMILIES[family]
    return CliRelease(
        family=family, package=fam.cli_package, version=cli,
        released=data.releases.get(family, {}).get("cli", {}).get(cli), sdk_package=fam.sdk_package,
        works_with=_bare(pin_lines(data.rows, family, cli=cli)),
        works_with_spans=_spans(working_ranges(data.rows, family, cli=cli)),
        works_but_leaves_cli_running=_bare(pin_lines(data.rows, family, cli=cli, caveat=True)),
        leaves_cli_running_spans=_spans(caveat_ranges(data.rows, family, cli=cli)),
        cells=_cells(data, family, "cli_version", cli))


def _colour(outcome: str | None) -> str:
    if outcome in _GOOD:
        return "brightgreen"
    if outcome == Outcome.DEGRADED:
        return "yellow"
    if outcome is None or outcome in NOT_A_VERDICT:
        return "lightgrey"
    return "red"


def _span_text(spans: list[Span]) -> str:
    if not spans:
        return "nothing measured works"
    parts = [s.first if s.first == s.last else f"{s.first}-{s.last}" for s in spans]
    more = f" (+{len(parts) - 2} more)" if len(parts) > 2 else ""
    return ", ".join(parts[-2:]) + more


def sdk_badge(doc: SdkRelease) -> Badge:
    """Coloured by the pairing with the newest CLI measured: what a user upgrading meets."""
    newest = doc.cells[-1].outcome if doc.cells else None
    if doc.cells:
        message = f"works with {doc.other_package} {_span_text(doc.works_with_spans)}"
    else:  # a stand-in family: its checks
        kept = sum(1 for c in doc.tolerance if c.outcome in _GOOD)
        message = f"kept {kept} of {len(doc.tolerance)} checks"
        newest = (Outcome.KEPT if kept == len(doc.tolerance) else Outcome.BROKEN) if doc.tolerance else None
    return Badge(label=f"{doc.package} {doc.version}", message=message, color=_colour(newest))


def cli_badge(doc: CliRelease) -> Badge:
    newest = doc.cells[-1].outcome if doc.cells else None
    return Badge(label=f"{doc.package} {doc.version}",
                 message=f"works with {doc.sdk_package} {_span_text(doc.works_with_spans)}", color=_colour(newest))


def _put(path: Path, doc: BaseModel | dict[str, object], written: set[Path]) -> None:
    text = (doc.model_dump_json(indent=1) if isinstance(doc, BaseModel) else json.dumps(doc, indent=1)) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
    written.add(path)


def index_of(data: SiteView) -> Index:
    """Every measured family, its packages and the releases of each side the API has a document of."""
    families = []
    for family in sorted(data.frame["family"].unique()):
        fam = FAMILIES.get(family)
        if fam is None:
            continue
        rows = data.frame[data.frame["family"] == family]
        dates = data.releases.get(family, {})
        sdks = sorted_versions(rows["sdk_version"])
        clis = [] if fam.standin else sorted_versions(pairs(rows)["cli_version"])
        families.append(FamilyEntry(
            name=family, other_kind="server" if fam.standin else "cli",
            sdk=Side(package=fam.sdk_package, ecosystem=fam.sdk_ecosystem,
                     releases=[Release(version=v, released=dates.get("sdk", {}).get(v)) for v in sdks]),
            other=Side(package=fam.cli_package, ecosystem=None if fam.standin else fam.cli_ecosystem,
                       releases=[Release(version=v, released=dates.get("cli", {}).get(v)) for v in clis])))
    return Index(generated_at=data.generated_at, families=families)


@dataclass
class Documents:
    """The release documents of one build, by (family, version): a later API version reads its
    ranges from them rather than asking them again."""

    sdk: dict[tuple[str, str], SdkRelease] = field(default_factory=dict)
    cli: dict[tuple[str, str], CliRelease] = field(default_factory=dict)


def publish_schemas(schemas: dict[str, type[BaseModel]], committed: Path, root: Path, written: set[Path]) -> None:
    """The committed schemas beside the documents they describe."""
    for name in schemas:
        target = root / "schema" / f"{name}.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(committed / f"{name}.json", target)
        written.add(target)


def remove_unwritten(root: Path, written: set[Path]) -> None:
    """Documents of releases no longer measured."""
    for stale in root.rglob("*.json"):
        if stale not in written:
            stale.unlink()


def write_api(data: SiteView, docs: Path, index: Index | None = None, made: Documents | None = None) -> list[Path]:
    """Every API document and badge under ``docs/api/v1`` (of the releases ``index`` lists; each
    release document is kept in ``made``); documents of releases no longer measured are removed."""
    root, written = docs / "api" / "v1", set[Path]()
    index = index or index_of(data)
    made = made if made is not None else Documents()
    for entry in index.families:
        family = entry.name
        for sdk in (r.version for r in entry.sdk.releases):
            doc = made.sdk[(family, sdk)] = sdk_release(data, family, sdk)
            _put(root / family / "sdk" / f"{sdk}.json", doc, written)
            _put(docs / badge_path(family, "sdk", sdk), sdk_badge(doc), written)
        for cli in (r.version for r in entry.other.releases):
            cdoc = made.cli[(family, cli)] = cli_release(data, family, cli)
            _put(root / family / "cli" / f"{cli}.json", cdoc, written)
            _put(docs / badge_path(family, "cli", cli), cli_badge(cdoc), written)
    _put(root / "index.json", index, written)
    publish_schemas(SCHEMAS, SCHEMA_DIR, root, written)
    remove_unwritten(root, written)
    return sorted(written)
