"""The publishing pipeline's steps, run locally as publish.yml runs them, against a copy of the
committed dataset with its newest copilot-python CLI release held back: `run --new` finds
that release and measures its cells for real (two SDK releases here, to stay quick), `verify`
re-measures one of them, `fold` records the changelog entry, `changes` writes the pull
request's body, and the feed and the API say what the release works with.

The artifacts are written to ``$COMPAT_MATRIX_PUBLISH_OUT`` when set, to be read by a person."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import feedparser
import jsonschema
import pytest

from matrix.answers.analysis import rows_of
from matrix.answers.changes import notes_of
from matrix.site.api import SCHEMA_DIR, write_api
from matrix.site.feed import feed_xml
from matrix.site.sitedata import site_view
from matrix.store.dataset import Dataset, Sources
from matrix.store.holdback import hold_back
from matrix.store.results import Store, frame_of, load_releases
from tests.conftest import ROOT

pytestmark = pytest.mark.integration

FAMILY = "copilot-python"


def compat_matrix(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "matrix.commands.cli", *args], cwd=cwd, env=env, text=True,
                          capture_output=True, timeout=1800)


def test_a_held_back_cli_release_goes_through_the_pipeline(tmp_path: Path) -> None:
    data = tmp_path / "data"
    held = hold_back(ROOT / "data", data, FAMILY, tmp_path)
    assert held not in Dataset(data).releases()[FAMILY]["cli"]
    (tmp_path / "matrix.toml").write_text(
        f'[families.{FAMILY}]\nprobes = ["handshake"]\nsdk.select = ["latest:2"]\ncli.select = ["<={held}"]\n')
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}

    run = compat_matrix("run", "--new", "--data", "data", cwd=tmp_path, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"new releases: {FAMILY}: {held}" in run.stdout + run.stderr
    measured, _ = Store(tmp_path / "results").read()
    assert {(r.cli_version, r.probe) for r in measured} == {(held, "handshake")} and len(measured) == 2

    # A cell of the release just measured: its CLI and SDKs are installed (any other cell may
    # need a cold install of a release the cache evicted, minutes in CI for one cell).
    verify = compat_matrix("verify", "--sample", "1", "--seed", "3", "--family", FAMILY, "--probe", "handshake",
                           "--cli", held, "--data", "data", cwd=tmp_path, env=env)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "agreement: 1 of 1" in verify.stdout

    fold = compat_matrix("fold", "--data", "data", cwd=tmp_path, env=env)
    assert fold.returncode == 0, fold.stderr
    entry = Dataset(data).changes()[0]
    assert entry.added == {FAMILY: {"cli": [held]}} and entry.cells_added == 2
    assert held in Dataset(data).releases()[FAMILY]["cli"]

    body = compat_matrix("changes", "--format", "markdown", "--data", "data", cwd=tmp_path, env=env).stdout
    title = compat_matrix("changes", "--format", "title", "--data", "data", cwd=tmp_path, env=env).stdout
    assert title.startswith(f"data: @github/copilot {held} measured (2 cells")
    assert body.index("## Regressions") < body.index("## New releases") < body.index(f"### @github/copilot {held}")

    frame = frame_of(Sources(tmp_path / "results", data).rows()[0])
    rows = rows_of(frame)  # one for every entry, as the site's build asks them
    notes = [(e, notes_of(rows, e)) for e in Dataset(data).changes()]
    feed = feed_xml(notes, entry.at, {f"versions/{FAMILY}/cli-{held}.md"})
    parsed = feedparser.parse(feed)
    assert not parsed.bozo and parsed.entries[0].id == f"tag:compat-matrix,2026:{FAMILY}/cli/{held}"

    docs = tmp_path / "docs"
    write_api(site_view(frame=frame, releases=Sources(tmp_path / "results", data).releases(),
                       generated_at=entry.at), docs)
    cli_doc = json.loads((docs / "api" / "v1" / FAMILY / "cli" / f"{held}.json").read_text())
    jsonschema.validate(cli_doc, json.loads((SCHEMA_DIR / "cli-release.json").read_text()))
    assert {c["other"] for c in cli_doc["cells"]} == {r.sdk_version for r in measured}
    assert cli_doc["works_with"] == [s.strip('"') for s in notes[0][1][0].works_with]
    badge = json.loads((docs / "api" / "v1" / FAMILY / "badge" / f"cli-{held}.json").read_text())
    assert badge["label"] == f"@github/copilot {held}"

    out = os.environ.get("COMPAT_MATRIX_PUBLISH_OUT")
    if out:
        target = Path(out)
        target.mkdir(parents=True, exist_ok=True)
        (target / "pr-title.txt").write_text(title)
        (target / "pr-body.md").write_text(body)
        (target / "changelog-entry.json").write_text(entry.model_dump_json(indent=1))
        (target / "feed.xml").write_text(feed)
        shutil.copy(docs / "api" / "v1" / FAMILY / "cli" / f"{held}.json", target / f"api-cli-{held}.json")
        shutil.copy(docs / "api" / "v1" / FAMILY / "badge" / f"cli-{held}.json", target / f"badge-cli-{held}.json")
        (target / "run.txt").write_text(run.stdout + run.stderr + verify.stdout + fold.stdout)
    assert load_releases(tmp_path / "results")  # the run stored the release dates it was given
