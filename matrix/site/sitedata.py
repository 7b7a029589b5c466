"""What every page of the site is made from (``site_view``: every row, the release dates, where
evidence is read, every family), and writing a page only when it changed."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from matrix.answers.analysis import rows_of
from matrix.families.base import SiteView
from matrix.families.registry import FAMILIES, open_sources
from matrix.markup import cli_slug, num, sdk_slug
from matrix.store.dataset import Sources
from matrix.store.results import Releases

__all__ = ["cli_slug", "num", "sdk_slug", "site_view", "write"]


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:  # unchanged pages keep their mtime
        path.write_text(text)


def site_view(frame: pd.DataFrame, releases: Releases | None = None, generated_at: str = "now",
              sources: Sources | None = None) -> SiteView:
    """A view of ``frame`` for pages to be made from (a build makes one; so can a test)."""
    return SiteView(rows_of(frame), releases or {}, sources or open_sources(Path("/nonexistent-results")),
                    FAMILIES, generated_at)
