"""API v2 (``api/v2/``): v1's answers without any one family's keys, and what v1 has no key
for. A pair cell is its core (outcome, error, whether the answers count it as working, cleanly or
with the family's caveat), its payload as its family declares it (the family's payload model,
whose JSON Schema is published beside the documents) and the same pair's cells of the probes that
refine its verdict (a pair that connects is not yet a pair that works); every other check names
the release of the other side it was judged against.

v1 stays as it is (its schema is committed and tested); v2's envelope is committed beside it the
same way (``api_schema/v2/``) and grows only by a v3; a payload grows with its family's rules.

Layout::

    api/v2/index.json                          families, their packages and releases (as v1)
    api/v2/<family>/sdk/<version>.json         an SDK release: every pair cell and check
    api/v2/<family>/cli/<version>.json         a CLI release: every pair cell
    api/v2/schema/<document>.json              the JSON Schemas of the documents
    api/v2/schema/payload/<family>/<probe>.json  ... and of each family's payload of a probe"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel

from matrix.answers.analysis import does_not_start, pairs
from matrix.families.base import Family, SiteView
from matrix.families.registry import FAMILIES
from matrix.present.records import records
from matrix.present.rows import refined
from matrix.site import api as v1
from matrix.versions import sort_key

__all__ = ["SCHEMAS", "SCHEMA_DIR", "write_api_v2"]

SCHEMA_DIR = Path(__file__).parent / "api_schema" / "v2"


class Refinement(v1._Doc):
    """The same pair's cell of a probe that refines the pair's verdict."""

    probe: str
    outcome: str | None  # None: not measured for this pair
    error_type: str | None
    error: str | None  # its first line


class Cell(v1._Doc):
    other: str  # the other side's release
    outcome: str
    works: bool  # counted as working by the ranges, pins and can-i-ship (refinements included)
    works_with_caveat: bool  # works, with the family's caveat (``caveat`` of the release document)
    error_type: str | None
    error: str | None  # the first line of what the SDK raised
    flaky: bool  # measured more than once with different outcomes
    payload: dict[str, Any]  # what the probe observed besides, as the family's payload model says
    refinements: list[Refinement]


class Check(v1._Doc):
    probe: str
    check: str
    other: str | None  # the release of the other side it was judged against; None: a stand-in
    outcome: str
    error_type: str | None
    error: str | None


class SdkRelease(v1._Doc):
    api: Literal["v2"] = "v2"
    family: str
    package: str
    version: str
    released: str | None
    other_package: str
    pair_probe: str | None  # whose cells pair this release with the other side's
    works_with: list[str]  # what to write down, in the other side's ecosystem's syntax
    works_with_spans: list[v1.Span]
    works_with_caveat: list[str]
    works_with_caveat_spans: list[v1.Span]
    caveat: str  # the family's caveat in its own words ("": it has none)
    cells: list[Cell]
    checks: list[Check]


class CliRelease(v1._Doc):
    api: Literal["v2"] = "v2"
    family: str
    package: str
    version: str
    released: str | None
    sdk_package: str
    pair_probe: str | None
    does_not_start: str | None  # why it starts for no SDK release on this machine
    works_with: list[str]
    works_with_spans: list[v1.Span]
    works_with_caveat: list[str]
    works_with_caveat_spans: list[v1.Span]
    caveat: str
    cells: list[Cell]


class Index(v1._Doc):
    api: Literal["v2"] = "v2"
    generated_at: str
    families: list[v1.FamilyEntry]


SCHEMAS: dict[str, type[BaseModel]] = {"index": Index, "sdk-release": SdkRelease, "cli-release": CliRelease}


def _plain(value: object) -> object:
    """A frame's value as the payload model reads it: a missing number is None, an array a list."""
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float) and value != value:
        return None
    return value


def _text(rec: Mapping[Any, Any], column: str) -> str | None:
    value = rec.get(column)
    return None if value is None or (isinstance(value, float) and pd.isna(value)) else str(value)


def _payload(rec: Mapping[Any, Any], fam: Family, probe: str) -> dict[str, Any]:
    model = fam.payload_model(probe)
    data = {k: _plain(rec[k]) for k in model.model_fields if k in rec}
    return model.model_validate({k: v for k, v in data.items() if v is not None}).model_dump(mode="json")


# A family's pair cells as v2 gives them, less ``other``: by SDK release, then by CLI release,
# and the same cells the other way round, each made once for the two documents it is in.
@dataclass
class Cells:
    by_sdk: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    by_cli: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)


def _cells(hs: pd.DataFrame, fam: Family) -> Cells:
    """Every pair cell of ``hs`` (one family's)."""
    out = Cells()
    if hs.empty:
        return out
    works, caveat = fam.works(hs).tolist(), fam.works_but(hs).tolist()
    for rec, good, but in zip(hs.to_dict("records"), works, caveat, strict=True):
        sdk, cli = str(rec["sdk_version"]), str(rec["cli_version"])
        fields = {
            "outcome": str(rec["outcome"]), "works": bool(good), "works_with_caveat": bool(but),
            "error_type": _text(rec, "error_type"), "error": v1._first_line(rec.get("error_message")),
            "flaky": bool(rec.get("flaky")), "payload": _payload(rec, fam, str(rec["probe"])),
            "refinements": [Refinement(probe=p, outcome=_text(rec, refined(p, "outcome")),
                                       error_type=_text(rec, refined(p, "error_type")),
                                       error=v1._first_line(rec.get(refined(p, "error_message"))))
                            for p in fam.refined_by]}
        out.by_sdk.setdefault(sdk, {})[cli] = fields
        out.by_cli.setdefault(cli, {})[sdk] = fields
    return out


def _ordered(of: dict[str, dict[str, Any]]) -> list[Cell]:
    """One release's cells, in the other side's release order."""
    return [Cell(other=other, **of[other]) for other in sorted(of, key=sort_key)]


def _family_cells(data: SiteView, fam: Family) -> Cells:
    return _cells(pairs(data.rows, fam.name), fam) if fam.pair_probe else Cells()


def sdk_release(data: SiteView, family: str, sdk: str, old: v1.SdkRelease | None = None,
                cells: Cells | None = None) -> SdkRelease:
    """``old``: v1's document of the same release (its ranges are v2's); ``cells``: the family's
    pair cells (``_cells``); each made here when not given."""
    fam = FAMILIES[family]
    old = old or v1.sdk_release(data, family, sdk)
    cells = _family_cells(data, fam) if cells is None else cells
    rows = data.rows.of_release(family, "sdk_version", sdk)
    others = rows[(rows["probe"] != fam.pair_probe) & ~rows["probe"].isin(fam.refined_by)].sort_values(
        ["probe", "mutation"])
    return SdkRelease(
        family=family, package=old.package, version=sdk, released=old.released, other_package=old.other_package,
        pair_probe=fam.pair_probe or None, works_with=old.works_with, works_with_spans=old.works_with_spans,
        works_with_caveat=old.works_but_leaves_cli_running, works_with_caveat_spans=old.leaves_cli_running_spans,
        caveat=fam.caveat, cells=_ordered(cells.by_sdk.get(sdk, {})),
        checks=[Check(probe=str(r["probe"]), check=str(r["mutation"]),
                      other=None if fam.standin else _text(r, "cli_version"), outcome=str(r["outcome"]),
                      error_type=_text(r, "error_type"), error=v1._first_line(r["error_message"]))
                for r in records(others, ("probe", "mutation", "cli_version", "outcome", "error_type",
                                          "error_message"))])


def cli_release(data: SiteView, family: str, cli: str, old: v1.CliRelease | None = None,
                cells: Cells | None = None) -> CliRelease:
    fam = FAMILIES[family]
    old = old or v1.cli_release(data, family, cli)
    cells = _family_cells(data, fam) if cells is None else cells
    return CliRelease(
        family=family, package=old.package, version=cli, released=old.released, sdk_package=old.sdk_package,
        pair_probe=fam.pair_probe or None, does_not_start=does_not_start(data.rows, family, cli),
        works_with=old.works_with, works_with_spans=old.works_with_spans,
        works_with_caveat=old.works_but_leaves_cli_running, works_with_caveat_spans=old.leaves_cli_running_spans,
        caveat=fam.caveat, cells=_ordered(cells.by_cli.get(cli, {})))


def write_api_v2(data: SiteView, docs: Path, index: v1.Index, v1_docs: v1.Documents) -> list[Path]:
    """Every v2 document under ``docs/api/v2`` (the releases ``index`` lists; ``v1_docs``: v1's
    documents of the same build, whose ranges are v2's); documents of releases no longer
    measured are removed."""
    root, written = docs / "api" / "v2", set[Path]()
    for entry in index.families:
        fam = FAMILIES[entry.name]
        cells = _family_cells(data, fam)
        for r in entry.sdk.releases:
            doc = sdk_release(data, entry.name, r.version, v1_docs.sdk[(entry.name, r.version)], cells)
            v1._put(root / entry.name / "sdk" / f"{r.version}.json", doc, written)
        for r in entry.other.releases:
            cdoc = cli_release(data, entry.name, r.version, v1_docs.cli[(entry.name, r.version)], cells)
            v1._put(root / entry.name / "cli" / f"{r.version}.json", cdoc, written)
        for probe in fam.probes:
            v1._put(root / "schema" / "payload" / entry.name / f"{probe}.json",
                    fam.payload_model(probe).model_json_schema(), written)
    v1._put(root / "index.json", Index(generated_at=index.generated_at, families=index.families), written)
    v1.publish_schemas(SCHEMAS, SCHEMA_DIR, root, written)
    v1.remove_unwritten(root, written)
    return sorted(written)
