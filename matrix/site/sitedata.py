"""What every page of the site is made from: the rows and release dates (``SiteData``), the
names of a release's pages, and writing a page only when it changed."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from matrix.store.results import Releases

__all__ = ["SiteData", "cli_slug", "num", "sdk_slug", "write"]


def num(value: Any) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return ""
    return str(int(value)) if isinstance(value, (int, float)) and float(value).is_integer() else f"{value}"


@dataclass(frozen=True)
class SiteData:
    frame: pd.DataFrame
    releases: Releases  # family -> side -> version -> release date
    generated_at: str


def sdk_slug(v: str) -> str:
    return f"sdk-{v}"


def cli_slug(v: str) -> str:
    return f"cli-{v}"


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:  # unchanged pages keep their mtime
        path.write_text(text)
