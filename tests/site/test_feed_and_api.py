"""The answers machines read: the Atom feed (checked by a real feed parser), the v1 JSON API
(every document checked against its committed schema) and the badges."""

from __future__ import annotations

import json
from pathlib import Path

import feedparser
import jsonschema
import pytest

from matrix.answers.changes import notes_of
from matrix.families.base import SiteView
from matrix.site import api_v2
from matrix.site.api import SCHEMA_DIR, SCHEMAS, Documents, index_of, write_api
from matrix.site.changes_page import changes_page
from matrix.site.feed import feed_xml
from matrix.site.sitedata import site_view
from matrix.store.dataset import Dataset
from matrix.store.results import frame_of
from tests.answers.test_changes import data  # noqa: F401 (the fixture)


def noted(site_data: SiteView, data: Path) -> list:  # noqa: F811
    return [(e, notes_of(site_data.frame, e)) for e in Dataset(data).changes()]


PAGES = {"versions/copilot-python/cli-2.1.0.md", "versions/copilot-python/sdk-1.0.0.md"}


@pytest.fixture
def site_data(data: Path) -> SiteView:  # noqa: F811
    frame = frame_of(Dataset(data).read()[0])
    releases = {"copilot-python": {"cli": {"2.1.0": "2026-11-29T10:00:00Z"}, "sdk": {}}}
    return site_view(frame=frame, releases=releases, generated_at="2026-11-30T00:00:00+00:00")


def test_the_feed_is_valid_atom_with_an_entry_per_new_release(data: Path, site_data: SiteView) -> None:  # noqa: F811
    text = feed_xml(noted(site_data, data), site_data.generated_at, PAGES)
    feed = feedparser.parse(text)
    assert not feed.bozo, feed.get("bozo_exception")
    assert feed.version == "atom10"
    ids = [e.id for e in feed.entries]
    # Newest fold first; within a fold the CLI releases (they break pinned SDKs) first.
    assert ids == ["tag:compat-matrix,2026:copilot-python/cli/2.1.0", "tag:compat-matrix,2026:copilot-python/cli/2.0.0",
                   *(f"tag:compat-matrix,2026:copilot-python/sdk/{v}" for v in ("1.0.0", "1.0.1", "1.0.2"))]
    newest = feed.entries[0]
    assert newest.title == "@github/copilot 2.1.0 (copilot-python), broke 1"
    assert newest.updated == "2026-11-30T00:00:00+00:00"
    assert "Works with (measured): github-copilot-sdk>=1.0.1,<=1.0.2" in newest.content[0].value
    assert "handshake with github-copilot-sdk 1.0.0: compatible → refused" in newest.content[0].value
    assert newest.link == "versions/copilot-python/cli-2.1.0/"
    assert "links" not in feed.entries[1]  # no page for it: no link to nowhere


def test_the_changes_page_lists_folds_newest_first_and_what_is_not_folded_yet(
        data: Path, site_data: SiteView) -> None:  # noqa: F811
    entries = noted(site_data, data)
    page = changes_page(site_data.frame, entries, None, PAGES)
    assert page.index("## 2026-11-30") < page.index("## 2026-11-01")
    assert '<a href="../versions/copilot-python/cli-2.1.0/">@github/copilot 2.1.0</a>' in page
    assert "Measured by this build" not in page
    local = site_data.frame.copy()
    local.loc[(local["sdk_version"] == "1.0.2") & (local["cli_version"] == "2.1.0"), "outcome"] = "hang"
    pending = changes_page(local, entries, site_data.frame, PAGES)
    assert "0 new cells and 1 cells whose outcome differs" in pending


def test_every_api_document_fits_its_committed_schema(tmp_path: Path, site_data: SiteView) -> None:
    written = write_api(site_data, tmp_path)
    root = tmp_path / "api" / "v1"
    kinds = {"index": [root / "index.json"], "sdk-release": sorted((root / "copilot-python" / "sdk").glob("*.json")),
             "cli-release": sorted((root / "copilot-python" / "cli").glob("*.json")),
             "badge": sorted((root / "copilot-python" / "badge").glob("*.json"))}
    assert sum(len(v) for v in kinds.values()) + len(SCHEMAS) == len(written)
    for kind, paths in kinds.items():
        schema = json.loads((root / "schema" / f"{kind}.json").read_text())
        assert paths
        for path in paths:
            jsonschema.validate(json.loads(path.read_text()), schema)
    sdk = json.loads((root / "copilot-python" / "sdk" / "1.0.0.json").read_text())
    assert sdk["works_with"] == ["@github/copilot@2.0.0"] and sdk["cells"][1]["outcome"] == "refused"
    assert sdk["message_grades"] == {"graded": 0, "names_versions": 0, "actionable": 0}
    cli = json.loads((root / "copilot-python" / "cli" / "2.1.0.json").read_text())
    assert cli["works_with"] == ["github-copilot-sdk>=1.0.1,<=1.0.2"] and cli["released"] == "2026-11-29T10:00:00Z"
    badge = json.loads((root / "copilot-python" / "badge" / "cli-2.1.0.json").read_text())
    assert badge == {"schemaVersion": 1, "label": "@github/copilot 2.1.0",
                     "message": "works with github-copilot-sdk 1.0.1-1.0.2", "color": "brightgreen"}
    old = json.loads((root / "copilot-python" / "badge" / "sdk-1.0.0.json").read_text())
    assert old["color"] == "red"  # refused by the newest CLI


def test_a_document_that_does_not_fit_is_refused_by_the_schema() -> None:
    schema = json.loads((SCHEMA_DIR / "badge.json").read_text())
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"schemaVersion": 1, "label": "x", "message": "y"}, schema)


@pytest.mark.parametrize(("version", "name"), [*(("v1", n) for n in sorted(SCHEMAS)),
                                                *(("v2", n) for n in sorted(api_v2.SCHEMAS))])
def test_a_version_does_not_change_shape(version: str, name: str) -> None:
    """A model that no longer yields its committed schema would break consumers of its version:
    a new shape is a new version, with the old one kept."""
    schemas, folder = (SCHEMAS, SCHEMA_DIR) if version == "v1" else (api_v2.SCHEMAS, api_v2.SCHEMA_DIR)
    assert schemas[name].model_json_schema() == json.loads((folder / f"{name}.json").read_text())


def test_every_v2_document_fits_its_committed_schema_and_lists_what_v1_does(tmp_path: Path,
                                                                           site_data: SiteView) -> None:
    index = index_of(site_data)
    made = Documents()
    v1_docs = {p.relative_to(tmp_path / "api" / "v1") for p in write_api(site_data, tmp_path, index, made)}
    written = api_v2.write_api_v2(site_data, tmp_path, index, made)
    root = tmp_path / "api" / "v2"
    releases = {p.relative_to(root) for p in written if "schema" not in p.parts}
    assert releases == {p for p in v1_docs if "badge" not in p.parts and "schema" not in p.parts}
    for path in written:
        kind = "index" if path.name == "index.json" else f"{path.parent.name}-release"
        if "schema" not in path.parts:
            schema = json.loads((root / "schema" / f"{kind}.json").read_text())
            jsonschema.validate(json.loads(path.read_text()), schema)
    sdk = json.loads((root / "copilot-python" / "sdk" / "1.0.2.json").read_text())
    assert sdk["api"] == "v2" and [c["works_with_caveat"] for c in sdk["cells"]] == [True, False]
    assert (root / "schema" / "payload" / "copilot-python" / "handshake.json").exists()


def test_stale_documents_are_removed(tmp_path: Path, site_data: SiteView) -> None:
    gone = tmp_path / "api" / "v1" / "copilot-python" / "sdk" / "0.0.1.json"
    gone.parent.mkdir(parents=True)
    gone.write_text("{}")
    write_api(site_data, tmp_path)
    assert not gone.exists()
