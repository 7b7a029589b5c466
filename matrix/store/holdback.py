"""A dataset as it stood before a family's newest CLI release was published: what a benchmark
or a test of the publishing run measures that release against, as the daily run would."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from matrix.model import Row
from matrix.store.dataset import Dataset
from matrix.store.results import Store, save_releases
from matrix.versions import sorted_versions

__all__ = ["hold_back"]


def hold_back(src: Path, dest: Path, family: str, work: Path,
              stood: Callable[[Row], bool] = lambda row: False) -> str:
    """``dest``: the dataset of ``src`` without the newest CLI release of ``family``: its rows
    and its place in the release list, except the rows ``stood`` keeps (a check judged per
    SDK release stands until the SDK changes: the daily run does not measure it again for a
    new CLI). Returns the release held back. ``work``: an empty scratch directory."""
    source = Dataset(src)  # one snapshot: the dataset is verified and read once
    rows, _ = source.read()
    newest = sorted_versions([r.cli_version for r in rows if r.family == family])[-1]
    before = Store(work / "before")
    before.directory.mkdir(parents=True)
    # In one write: a row at a time (each made durable, as a run stores them) is 15,000 fsyncs.
    before.path.write_text("".join(r.to_json() + "\n" for r in rows
                                   if r.family != family or r.cli_version != newest or stood(r)))
    releases = source.releases()
    releases[family]["cli"].pop(newest, None)
    save_releases(before.directory, releases)
    Dataset(dest).fold(before.directory, at="2026-11-01T00:00:00+00:00")
    return newest
