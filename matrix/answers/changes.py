"""What a change to the dataset means for users: for each release it added, what that release
works with and what it broke; and the cells measured again whose verdict moved, regressions
first. The pull-request body, the "What changed" page and the feed all say this.

"Broke" compares a new release with the release before it on the same side, cell by cell
against the same release of the other side (same probe and check): a cell that worked
there (best rank of its vocabulary) and does not here. Measured cells only, on both sides."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd

from matrix.answers.analysis import pin_lines, rows_of
from matrix.answers.diff import RANK, change_kind
from matrix.families.registry import FAMILIES
from matrix.present.records import records
from matrix.present.rows import Rows
from matrix.store.changelog import Entry, Move
from matrix.versions import sorted_versions

__all__ = ["Broken", "ReleaseNote", "notes_of", "render_markdown", "render_text", "to_json"]

_OTHER = {"sdk": "cli_version", "cli": "sdk_version"}
_THIS = {"sdk": "sdk_version", "cli": "cli_version"}
_ORDER = {"regression": 0, "new failure": 1, "changed": 2, "improvement": 3}


@dataclass(frozen=True)
class Broken:
    """A cell that worked with the previous release of this side and does not with this one."""

    other: str  # the other side's release
    probe: str
    mutation: str
    was: str
    now: str
    error: str | None

    def text(self, other_package: str) -> str:
        what = self.probe + (f" {self.mutation}" if self.mutation else "")
        why = f" ({self.error.splitlines()[0][:160]})" if self.error else ""
        return f"{what} with {other_package} {self.other}: {self.was} → {self.now}{why}"


@dataclass(frozen=True)
class ReleaseNote:
    family: str
    side: str  # "sdk" or "cli": which side released it
    package: str
    version: str
    other_package: str
    previous: str | None  # the release before it on the same side, measured
    works_with: list[str] = field(default_factory=list)  # the other side, in its ecosystem's syntax
    works_but: list[str] = field(default_factory=list)  # with the family's caveat
    caveat: str = ""  # the family's (Family.caveat, Family.caveat_with)
    caveat_with: str = ""
    broke: list[Broken] = field(default_factory=list)
    outcomes: dict[str, int] = field(default_factory=dict)  # its cells, counted by outcome

    @property
    def title(self) -> str:
        return f"{self.package} {self.version}"

    def summary(self) -> str:
        """One line: what it works with, or that nothing measured works, and how much it broke."""
        if self.works_with:
            works = "works with " + ", ".join(s.strip('"') for s in self.works_with)
        elif self.outcomes:
            works = "measured: " + ", ".join(f"{n} {o}" for o, n in sorted(self.outcomes.items()))
        else:
            works = "nothing measured yet"
        if self.works_but:
            works += f"; {self.caveat_with} " + ", ".join(s.strip('"') for s in self.works_but)
        broke = f"; broke {len(self.broke)} cell(s) that worked with {self.previous}" if self.broke else ""
        return works + broke


_READ = ("probe", "mutation", "sdk_version", "cli_version", "outcome", "error_message")


def _note(given: Rows, family: str, side: str, version: str) -> ReleaseNote:
    fam = FAMILIES.get(family)
    package = (fam.sdk_package if side == "sdk" else fam.cli_package) if fam else family
    other_package = (fam.cli_package if side == "sdk" else fam.sdk_package) if fam else "?"
    cells_of, measured = _releases(given, family, side)
    mine = cells_of.get(version, [])
    axis = measured if version in measured else sorted_versions([*measured, version])
    at = axis.index(version)
    previous = axis[at - 1] if at else None
    works = leaks = []
    if fam is not None and fam.pair_probe and any(r["probe"] == fam.pair_probe for r in mine):
        sdk, cli = (version, None) if side == "sdk" else (None, version)
        works = pin_lines(given, family, sdk, cli)
        leaks = pin_lines(given, family, sdk, cli, caveat=True)
    broke: list[Broken] = []
    if previous is not None:
        key = [_OTHER[side], "probe", "mutation"]
        was = {tuple(r[k] for k in key): r for r in cells_of.get(previous, [])}
        for r in mine:
            old = was.get(tuple(r[k] for k in key))
            if old is None or RANK.get(str(old["outcome"])) != 0:
                continue
            if str(r["outcome"]) in RANK and RANK[str(r["outcome"])] > 0:
                error = r.get("error_message")
                broke.append(Broken(str(r[_OTHER[side]]), str(r["probe"]), str(r["mutation"]), str(old["outcome"]),
                                    str(r["outcome"]), error if isinstance(error, str) else None))
    order = sorted_versions([r[_OTHER[side]] for r in mine])
    broke.sort(key=lambda b: (b.probe, b.mutation, order.index(b.other)))
    counts = dict(sorted(Counter(str(r["outcome"]) for r in mine).items()))
    return ReleaseNote(family, side, package, version, other_package, previous, works, leaks,
                       fam.caveat if fam else "", fam.caveat_with if fam else "", broke, counts)


def _releases(rows: Rows, family: str, side: str) -> tuple[dict[str, list[dict[str, Any]]], list[str]]:
    """The family's cells of each release of ``side`` (as records) and those releases in order;
    made once per ``Rows``: a feed asks this of hundreds of releases."""
    def make() -> tuple[dict[str, list[dict[str, Any]]], list[str]]:
        frame = rows.frame
        cells_of: dict[str, list[dict[str, Any]]] = {}
        for r in records(frame[frame["family"] == family], _READ):
            cells_of.setdefault(str(r[_THIS[side]]), []).append(r)
        return cells_of, sorted_versions(list(cells_of))
    return rows.once(("release-notes", family, side), make)  # type: ignore[no-any-return]


def notes_of(frame: pd.DataFrame | Rows, entry: Entry) -> list[ReleaseNote]:
    """A note for every release ``entry`` added, read from ``frame`` (the dataset as it is
    now): the CLI releases first (they break pinned SDKs), then the SDK releases."""
    # One ``Rows`` for every note: its slices are made once, not once per pin asked of a frame.
    given = rows_of(frame)
    out = []
    for side in ("cli", "sdk"):
        for family, sides in entry.added.items():
            out += [_note(given, family, side, v) for v in sides.get(side, [])]
    return out


def _moves(entry: Entry) -> list[tuple[str, Move]]:
    kinds = [(change_kind(m.old, m.new), m) for m in entry.moved]
    return sorted(kinds, key=lambda km: (_ORDER.get(km[0], 9), km[1].family, km[1].probe, km[1].sdk_version,
                                         km[1].cli_version))


def _regressions(notes: list[ReleaseNote], moves: list[tuple[str, Move]]) -> int:
    return sum(len(n.broke) for n in notes) + sum(1 for k, _ in moves if k == "regression")


def headline(notes: list[ReleaseNote], entry: Entry) -> str:
    """The pull request's title: what is new, and how many regressions."""
    new = ", ".join(n.title for n in notes[:4]) + (f" and {len(notes) - 4} more" if len(notes) > 4 else "")
    regress = _regressions(notes, _moves(entry))
    tail = f"; {regress} regression(s)" if regress else ""
    if notes:
        return f"data: {new} measured ({entry.cells_added} cells{tail})"
    return f"data: {entry.cells_measured_again} cells measured again ({len(entry.moved)} moved{tail})"


def render_markdown(frame: pd.DataFrame, entry: Entry) -> str:
    """The pull request's body: regressions first, then each new release, then other moves."""
    notes, moves = notes_of(frame, entry), _moves(entry)
    lines = [f"**{headline(notes, entry)}**", "",
             f"Folded {entry.at}: {entry.cells_added} new cells, {entry.cells_measured_again} measured again, "
             f"{len(entry.moved)} changed their outcome.", ""]
    regress = [(n, b) for n in notes for b in n.broke]
    moved_worse = [m for k, m in moves if k == "regression"]
    lines += ["## Regressions", ""]
    if not regress and not moved_worse:
        lines += ["None.", ""]
    for n, b in regress:
        lines.append(f"- **{n.title}** ({n.family}) broke {b.text(n.other_package)}")
    for m in moved_worse:
        lines.append(f"- {_move_text(m)}")
    if regress or moved_worse:
        lines.append("")
    if notes:
        lines += ["## New releases", ""]
        for n in notes:
            lines += [f"### {n.title} ({n.family})", ""]
            if n.works_with:
                lines += ["Works with (measured):", "", "```", *[s.strip('"') for s in n.works_with], "```", ""]
            else:
                lines += [n.summary().capitalize() + ".", ""]
            if n.works_but:
                lines += [f"Works, but {n.caveat}:", "", "```", *[s.strip('"') for s in n.works_but], "```", ""]
            if n.broke:
                lines += [f"Broke, compared with {n.previous}:", ""]
                lines += [f"- {b.text(n.other_package)}" for b in n.broke] + [""]
    others = [(k, m) for k, m in moves if k != "regression"]
    if others:
        lines += ["## Other cells that moved", "", "| change | cell | was → now |", "|---|---|---|"]
        lines += [f"| {k} | {_cell(m)} | {m.old} → {m.new} |" for k, m in others] + [""]
    return "\n".join(lines)


def _cell(m: Move) -> str:
    what = f" {m.mutation}" if m.mutation else ""
    return f"{m.family} {m.probe}{what}: sdk {m.sdk_version} × {m.cli_version}"


def _move_text(m: Move) -> str:
    why = f" ({m.new_error.splitlines()[0][:160]})" if m.new_error else ""
    return f"{_cell(m)}: {m.old} → {m.new}{why}"


def render_text(frame: pd.DataFrame, entry: Entry) -> str:
    notes = notes_of(frame, entry)
    lines = [headline(notes, entry)]
    lines += [f"  {n.title} ({n.family}): {n.summary()}" for n in notes]
    lines += [f"  {k}: {_move_text(m)}" for k, m in _moves(entry)]
    return "\n".join(lines) + "\n"


def to_json(frame: pd.DataFrame, entry: Entry) -> str:
    notes = notes_of(frame, entry)
    doc: dict[str, Any] = {"at": entry.at, "title": headline(notes, entry), "cells_added": entry.cells_added,
                           "cells_measured_again": entry.cells_measured_again,
                           "releases": [asdict(n) for n in notes],
                           "moved": [{"kind": k, **m.model_dump()} for k, m in _moves(entry)]}
    return json.dumps(doc, indent=1)
