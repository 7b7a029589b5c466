"""The "What changed" page, from the dataset's own changelog (newest first, the same on every
clone and rebuild), and what this build measured that the dataset does not have yet."""

from __future__ import annotations

import pandas as pd

from matrix.answers.changes import ReleaseNote
from matrix.answers.diff import KINDS, _kind, diff_frames
from matrix.markup import TABLE_END, badge, esc, sortable
from matrix.store.changelog import Entry, Move

__all__ = ["changes_page", "release_page"]


def release_page(note: ReleaseNote, pages: set[str]) -> str | None:
    """The release's own page (as a URL relative to the site's root), if the site has one."""
    for folder in ("versions", "cosmo"):
        rel = f"{folder}/{note.family}/{note.side}-{note.version}.md"
        if rel in pages:
            return rel.removesuffix(".md") + "/"
    return None


def _works(note: ReleaseNote) -> str:
    if note.works_with:
        text = "<br>".join(esc(s.strip('"')) for s in note.works_with)
    else:
        text = esc(note.summary().split(";")[0])
    if note.works_but_leaks:
        text += "<br><em>leaves the CLI running with:</em> " + ", ".join(esc(s.strip('"'))
                                                                         for s in note.works_but_leaks)
    return text


def _broke(note: ReleaseNote) -> str:
    if not note.broke:
        return "nothing" if note.previous else "(first release measured)"
    items = "".join(f"<li>{esc(b.text(note.other_package))}</li>" for b in note.broke)
    return (f"<details><summary><strong>{len(note.broke)} cell(s)</strong> that worked with "
            f"{esc(note.previous)}</summary><ul>{items}</ul></details>")


def _link(note: ReleaseNote, pages: set[str]) -> str:
    page = release_page(note, pages)
    return f'<a href="../{esc(page)}">{esc(note.title)}</a>' if page else esc(note.title)


def _move_rows(moves: list[Move]) -> list[str]:
    rows = []
    for m in sorted(moves, key=lambda m: (KINDS.index(_kind(m.old, m.new)), m.family, m.sdk_version, m.cli_version)):
        what = m.probe + (f" {m.mutation}" if m.mutation else "")
        error = esc((m.new_error or "").splitlines()[0][:200]) if m.new_error else ""
        rows.append(f"<tr><td>{esc(_kind(m.old, m.new))}</td><td>{esc(m.family)}</td><td>{esc(what)}</td>"
                    f"<td>{esc(m.sdk_version)}</td><td>{esc(m.cli_version)}</td><td>{badge(m.old)}</td>"
                    f'<td>{badge(m.new)}</td><td class="cm-msg">{error}</td></tr>')
    return rows


_MOVES_HEAD = sortable(["change", "family", "probe", "SDK", "CLI", "before", "now", "now says"])


def _pending(dataset: pd.DataFrame | None, frame: pd.DataFrame) -> list[str]:
    """Cells this build shows that the dataset does not hold (measured here, not folded yet)."""
    if dataset is None:
        return []
    changes = [c for c in diff_frames(dataset, frame) if c.new is not None]
    if not changes:
        return []
    new = [c for c in changes if c.old is None]
    moved = [Move(family=c.family, probe=c.probe, mutation=c.mutation, sdk_version=c.sdk_version,
                  cli_version=c.cli_version, old=c.old, new=c.new, new_error=c.new_error)
             for c in changes if c.old is not None and c.new is not None]
    lines = ["## Measured by this build, not in the dataset yet", "",
             f"{len(new)} new cells and {len(moved)} cells whose outcome differs from the dataset's were measured "
             "locally. They are shown on this site; they enter the dataset (and the list below) when a maintainer "
             "folds them (`compat-matrix fold`).", ""]
    if moved:
        lines += [_MOVES_HEAD, *_move_rows(moved), TABLE_END, ""]
    return lines


def changes_page(frame: pd.DataFrame, entries: list[tuple[Entry, list[ReleaseNote]]], dataset: pd.DataFrame | None,
                 pages: set[str]) -> str:
    """``entries``: the changelog, newest first, each with its releases' notes; ``dataset``:
    the dataset's own rows (None when the site is built from local results only); ``pages``:
    the site's pages (relative to ``docs/``), for links to each release's page."""
    lines = ["# What changed", "",
             "Every change accepted into the dataset, newest first: the releases it added, what each works with "
             "and what it broke compared with the release before it, and the cells measured again whose verdict "
             "moved. Subscribe: [feed.xml](../feed.xml) (Atom). The same from the command line: "
             "`compat-matrix changes`.", ""]
    lines += _pending(dataset, frame)
    if not entries:
        return "\n".join([*lines, "The dataset has recorded no change yet.", ""])
    for entry, notes in entries:
        broke = sum(len(n.broke) for n in notes)
        regress = sum(1 for m in entry.moved if _kind(m.old, m.new) == "regression")
        lines += [f"## {esc(entry.at[:10])}: {len(notes)} release(s) added, {len(entry.moved)} verdict(s) moved", "",
                  f"Folded {esc(entry.at)}: {entry.cells_added} new cells, {entry.cells_measured_again} measured "
                  f"again; **{broke + regress} regression(s)**.", ""]
        if notes:
            lines += [sortable(["release", "family", "works with (measured)", "broke"])]
            lines += [f"<tr><td>{_link(n, pages)}</td><td>{esc(n.family)}</td><td>{_works(n)}</td>"
                      f"<td>{_broke(n)}</td></tr>" for n in notes]
            lines += [TABLE_END, ""]
        if entry.moved:
            lines += [_MOVES_HEAD, *_move_rows(list(entry.moved)), TABLE_END, ""]
    return "\n".join(lines) + "\n"
