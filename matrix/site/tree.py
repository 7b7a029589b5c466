"""Every generated page of the site, written under ``docs/``: the home page, the matrices, a
page per version, the pin guide, and each family's pages of its own (a family with a pair
probe gets the site's matrix and release pages unless it writes its own); pages of versions
no longer in the results are removed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from matrix.families.base import Family, SiteView
from matrix.site.answer_lines import answer_lines
from matrix.site.check_pages import check_pages
from matrix.site.pages import home, pins_page, versions_index
from matrix.site.pair_pages import pair_pages
from matrix.site.render import render
from matrix.site.sitedata import write

__all__ = ["page_set", "pair_page_set", "write_pages"]


def matrices_index(view: SiteView, families: list[Family], side_by_side: list[tuple[str, str]]) -> str:
    """Each family's matrix small, with its one-line answer, then the pages that set families
    side by side (``side_by_side``: their file names, from ``matrix/``, and what each shows)."""
    answers = {a.family: a for a in answer_lines(view.rows)}
    return render("matrices-index.md", families=[(f.name, f.pair_probe, answers.get(f.name)) for f in families],
                  side_by_side=side_by_side)


def _paired(view: SiteView) -> list[Family]:
    return [f for name, f in sorted(view.families.items()) if f.pair_probe and name in set(view.rows.pairs()["family"])]


def pair_page_set(view: SiteView) -> dict[str, str]:
    """The matrix and release pages of every family with a pair probe: the part of
    ``page_set`` that reads no evidence, so another process can make it from the same rows."""
    pages: dict[str, str] = {}
    for fam in _paired(view):
        pages.update(fam.pair_pages(view) or pair_pages(view, fam))
    return pages


def page_set(view: SiteView, paired: Callable[[], dict[str, str]] | None = None) -> dict[str, str]:
    """Every generated page (relative path -> text), in the order they are written.
    ``paired``: ``pair_page_set`` of this view, made elsewhere (asked for after the rest)."""
    head: dict[str, str] = {"index.md": home(view)}
    measured = set(view.frame["family"].unique())
    own: dict[str, str] = {}
    compared: list[tuple[str, str]] = []
    for fam in view.families.values():
        if fam.name in measured:
            for rel, (text, what) in fam.side_by_side(view).items():
                if rel not in own:
                    own[rel] = text
                    compared.append((rel.removeprefix("matrix/"), what))
    head["matrix/index.md"] = matrices_index(view, _paired(view), compared)
    head.update(own)
    tail: dict[str, str] = {"versions/index.md": versions_index(view), "pins.md": pins_page(view)}
    for fam in view.families.values():  # each family's checks, and its pages of its own
        if fam.name in measured:
            own_checks = fam.check_pages(view)
            tail.update(check_pages(view, fam) if own_checks is None else own_checks)
        tail.update(fam.pages(view))
    # Later parts win a path an earlier one made too, where it was made first.
    return {**head, **(paired() if paired is not None else pair_page_set(view)), **tail}


def write_pages(view: SiteView, docs: Path, paired: Callable[[], dict[str, str]] | None = None) -> list[Path]:
    """Write every generated page under ``docs`` (``paired``: see ``page_set``); returns the
    files written."""
    pages = page_set(view, paired)
    written = [docs / rel for rel in pages]
    for rel, text in pages.items():
        write(docs / rel, text)
    # Pages of versions no longer in the results must not stay published.
    keep = set(written)
    for folder in ("matrix", "versions", *sorted({rel.split("/", 1)[0] for rel in pages if "/" in rel})):
        for stale in (*(docs / folder).rglob("*.md"), *(docs / folder).rglob("*.repro.sh")):
            if stale not in keep:
                stale.unlink()
    return written
