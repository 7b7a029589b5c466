"""Every generated page of the site, written under ``docs/``: the home page, the matrices and
their side-by-side comparison, a page per version, the pin guide, and each family's pages of
its own; pages of versions no longer in the results are removed."""

from __future__ import annotations

from pathlib import Path

from matrix.answers.analysis import handshake
from matrix.families.registry import FAMILIES
from matrix.site.answer_lines import answer_lines
from matrix.site.compare_pages import compare_pages
from matrix.site.pages import home, matrix_pages, pins_page, versions_index
from matrix.site.release_pages import cli_page, sdk_pages
from matrix.site.render import render
from matrix.site.sitedata import SiteData, cli_slug, write
from matrix.store.dataset import Sources
from matrix.versions import sorted_versions

__all__ = ["write_pages"]


def matrices_index(data: SiteData, families: list[str], side_by_side: list[str]) -> str:
    """Each family's matrix small, with its one-line answer, then the side-by-side pages
    (``side_by_side``: their file names, from ``matrix/``)."""
    answers = {a.family: a for a in answer_lines(data.frame)}
    return render("matrices-index.md", families=[(f, answers.get(f)) for f in families], side_by_side=side_by_side)


def write_pages(data: SiteData, docs: Path, sources: Sources | None = None) -> list[Path]:
    """Write every generated page under ``docs``; returns the files written."""
    written: list[Path] = []

    def put(rel: str, text: str) -> None:
        write(docs / rel, text)
        written.append(docs / rel)

    put("index.md", home(data))
    families = sorted(handshake(data.frame)["family"].unique())
    compared = compare_pages(data.frame)
    side_by_side = [rel.removeprefix("matrix/") for rel in compared]
    put("matrix/index.md", matrices_index(data, families, side_by_side))
    for rel, text in compared.items():
        put(rel, text)
    for family in families:
        for rel, text in matrix_pages(data, family).items():
            put(rel, text)
        sub = handshake(data.frame, family)
        for sdk in sorted_versions(sub["sdk_version"]):
            for rel, text in sdk_pages(data, family, sdk).items():
                put(rel, text)
        for cli in sorted_versions(sub["cli_version"]):
            put(f"versions/{family}/{cli_slug(cli)}.md", cli_page(data, family, cli))
    put("versions/index.md", versions_index(data))
    put("pins.md", pins_page(data))
    sources = sources or Sources(docs)
    own: dict[str, str] = {}
    for family in FAMILIES.values():  # each family's pages of its own (tolerance, Cosmo's promises)
        own.update(family.pages(data.frame, sources))
    for rel, text in own.items():
        put(rel, text)
    # Pages of versions no longer in the results must not stay published.
    keep = set(written)
    for folder in ("matrix", "versions", *sorted({rel.split("/", 1)[0] for rel in own if "/" in rel})):
        for stale in (*(docs / folder).rglob("*.md"), *(docs / folder).rglob("*.repro.sh")):
            if stale not in keep:
                stale.unlink()
    return written
