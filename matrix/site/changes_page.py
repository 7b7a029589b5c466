"""The "What changed" page, from the dataset's own changelog (newest first, the same on every
clone and rebuild), and what this build measured that the dataset does not have yet."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from matrix.answers.changes import ReleaseNote
from matrix.answers.diff import KINDS, change_kind, diff_frames
from matrix.families.registry import FAMILIES
from matrix.site.render import render
from matrix.store.changelog import Entry, Move

__all__ = ["ChangeSection", "ChangesPage", "MoveRow", "Pending", "ReleaseRow", "changes_page",
           "changes_page_data", "release_page"]


def release_page(note: ReleaseNote, pages: set[str]) -> str | None:
    """The release's own page (as a URL relative to the site's root), if the site has one."""
    fam = FAMILIES.get(note.family)
    rel = fam.release_page(note.side, note.version) if fam is not None else ""
    return rel.removesuffix(".md") + "/" if rel in pages else None


@dataclass(frozen=True)
class MoveRow:
    """A cell measured again whose outcome moved."""

    kind: str  # diff.KINDS: regression, improvement, ...
    family: str
    what: str  # the probe, and its mutation if any
    sdk: str
    cli: str
    old: str
    new: str
    error: str  # the first line of what it says now, "" if nothing


@dataclass(frozen=True)
class ReleaseRow:
    """A release a change added: what it works with and what it broke."""

    title: str
    link: str | None  # its page, relative to the site's root; None when the site has none
    family: str
    works: list[str]  # lines: what it works with, or else what was measured
    with_caveat: list[str]  # what it works with, with its family's caveat
    caveat_with: str  # how they are introduced (Family.caveat_with)
    previous: str | None  # the release before it on the same side
    broke: list[str]  # the cells that worked with ``previous`` and do not with it


@dataclass(frozen=True)
class ChangeSection:
    """One entry of the changelog."""

    date: str
    at: str
    cells_added: int
    cells_measured_again: int
    regressions: int  # cells broken by a release it added, and moves that are regressions
    releases: list[ReleaseRow]
    moved: list[MoveRow]


@dataclass(frozen=True)
class Pending:
    """What this build measured that the dataset does not hold yet."""

    new: int  # cells the dataset does not have
    moved: list[MoveRow]  # cells whose outcome differs from the dataset's


@dataclass(frozen=True)
class ChangesPage:
    pending: Pending | None
    changes: list[ChangeSection]  # newest first


def _release_row(note: ReleaseNote, pages: set[str]) -> ReleaseRow:
    # Bare, as ReleaseNote.summary shows them (a pin line may come quoted).
    works = [s.strip('"') for s in note.works_with] or [note.summary().split(";")[0]]
    return ReleaseRow(title=note.title, link=release_page(note, pages), family=note.family, works=works,
                      with_caveat=[s.strip('"') for s in note.works_but], caveat_with=note.caveat_with,
                      previous=note.previous,
                      broke=[b.text(note.other_package) for b in note.broke])


def _move_rows(moves: list[Move]) -> list[MoveRow]:
    """Regressions first, as ``diff`` orders them."""
    rows = [MoveRow(kind=change_kind(m.old, m.new), family=m.family,
                    what=m.probe + (f" {m.mutation}" if m.mutation else ""), sdk=m.sdk_version, cli=m.cli_version,
                    old=m.old, new=m.new, error=m.new_error.splitlines()[0][:200] if m.new_error else "")
            for m in moves]
    return sorted(rows, key=lambda r: (KINDS.index(r.kind), r.family, r.sdk, r.cli))


def _pending(dataset: pd.DataFrame | None, frame: pd.DataFrame) -> Pending | None:
    """Cells this build shows that the dataset does not hold (measured here, not folded yet)."""
    if dataset is None:
        return None
    changes = [c for c in diff_frames(dataset, frame) if c.new is not None]
    if not changes:
        return None
    moved = [Move(family=c.family, probe=c.probe, mutation=c.mutation, sdk_version=c.sdk_version,
                  cli_version=c.cli_version, old=c.old, new=c.new, new_error=c.new_error)
             for c in changes if c.old is not None and c.new is not None]
    return Pending(new=sum(1 for c in changes if c.old is None), moved=_move_rows(moved))


def _section(entry: Entry, notes: list[ReleaseNote], pages: set[str]) -> ChangeSection:
    broke = sum(len(n.broke) for n in notes)
    regress = sum(1 for m in entry.moved if change_kind(m.old, m.new) == "regression")
    return ChangeSection(date=entry.at[:10], at=entry.at, cells_added=entry.cells_added,
                         cells_measured_again=entry.cells_measured_again, regressions=broke + regress,
                         releases=[_release_row(n, pages) for n in notes], moved=_move_rows(list(entry.moved)))


def changes_page_data(frame: pd.DataFrame, entries: list[tuple[Entry, list[ReleaseNote]]],
                      dataset: pd.DataFrame | None, pages: set[str]) -> ChangesPage:
    """The "What changed" page as plain data; the arguments are ``changes_page``'s."""
    return ChangesPage(pending=_pending(dataset, frame),
                       changes=[_section(entry, notes, pages) for entry, notes in entries])


def changes_page(frame: pd.DataFrame, entries: list[tuple[Entry, list[ReleaseNote]]], dataset: pd.DataFrame | None,
                 pages: set[str]) -> str:
    """``entries``: the changelog, newest first, each with its releases' notes; ``dataset``:
    the dataset's own rows (None when the site is built from local results only); ``pages``:
    the site's pages (relative to ``docs/``), for links to each release's page."""
    return render("changes.md", page=changes_page_data(frame, entries, dataset, pages))
