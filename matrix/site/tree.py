"""Every generated page of the site, written under ``docs/``: the home page, the matrices and
their side-by-side comparison, a page per version, the pin guide, and each family's pages of
its own; pages of versions no longer in the results are removed."""

from __future__ import annotations

from pathlib import Path

from matrix.answers.analysis import handshake
from matrix.families.registry import FAMILIES
from matrix.site.compare_pages import compare_pages
from matrix.site.pages import (
    SiteData,
    cli_page,
    cli_slug,
    home,
    matrix_page,
    pins_page,
    sdk_page,
    sdk_slug,
    versions_index,
    write,
)
from matrix.store.dataset import Sources
from matrix.versions import sorted_versions

__all__ = ["write_pages"]


def write_pages(data: SiteData, docs: Path, sources: Sources | None = None) -> list[Path]:
    """Write every generated page under ``docs``; returns the files written."""
    written: list[Path] = []

    def put(rel: str, text: str) -> None:
        write(docs / rel, text)
        written.append(docs / rel)

    put("index.md", home(data))
    families = sorted(handshake(data.frame)["family"].unique())
    compared = compare_pages(data.frame)
    side_by_side = [f"- [{rel.removeprefix('matrix/').removesuffix('.md')}]({rel.removeprefix('matrix/')}): "
                    "the SDK families against the same CLI versions" for rel in compared]
    put("matrix/index.md", "# Matrices\n\n" + "\n".join([*(f"- [{f}]({f}.md)" for f in families), *side_by_side])
        + "\n")
    for rel, text in compared.items():
        put(rel, text)
    for family in families:
        put(f"matrix/{family}.md", matrix_page(data, family))
        sub = handshake(data.frame, family)
        for sdk in sorted_versions(sub["sdk_version"]):
            put(f"versions/{family}/{sdk_slug(sdk)}.md", sdk_page(data, family, sdk))
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
        for stale in (docs / folder).rglob("*.md"):
            if stale not in keep:
                stale.unlink()
    return written
