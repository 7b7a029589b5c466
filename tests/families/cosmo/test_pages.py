"""The Cosmo section of the site, from stored rows (our own rendering only)."""

from __future__ import annotations

import json
from pathlib import Path

from matrix.families.cosmo.checks import CHECKS, STANDIN_VERSION
from matrix.families.cosmo.family import Cosmo
from matrix.families.cosmo.pages import cosmo_pages
from matrix.families.registry import FAMILIES
from matrix.site.sitedata import site_view
from matrix.store.dataset import Sources
from matrix.store.results import Store, load_frame
from tests.conftest import make_row

EVIL = "<script>alert(1)</script>"


def stored(tmp_path: Path) -> Path:
    results = tmp_path / "results"
    store = Store(results)
    log = results / "standin" / "cosmo-python" / "sdk-0.1.0" / "strict.data-channel.jsonl"
    log.parent.mkdir(parents=True)
    log.write_text(json.dumps({"kind": "frame", "frame": {"type": "send-text", "content": EVIL}}) + "\n")
    for sdk in ("0.1.0", "0.6.1"):
        for check in CHECKS:
            broken = sdk == "0.1.0" and check.name == "strict.data-channel"
            detail = {"path": "room-relay" if sdk == "0.1.0" else "websocket", "api": {"client": "RealtimeClient"}}
            if broken:
                detail.update(rejected=[{"where": "data-channel", "message": "send-text", "unknown": ["options"]}],
                              standin_log=str(log.relative_to(results)))
            store.append(make_row(sdk, STANDIN_VERSION,
                                  "broken" if broken else "kept" if check.probe != "tolerance" else "surfaced",
                                  family="cosmo-python", probe=check.probe, mutation=check.name,
                                  error_message=f"dropped {EVIL}" if broken else None, detail=detail,
                                  harness_version="t"))
    store.append(make_row("0.6.1", STANDIN_VERSION, "broken", family="cosmo-python", probe="strictness",
                          mutation="a-check-that-no-longer-exists", harness_version="t"))
    return results


def test_family_page_has_every_check_for_every_release_and_the_findings(tmp_path: Path) -> None:
    results = stored(tmp_path)
    frame, _ = load_frame(results)
    view = site_view(frame, {"cosmo-python": {"sdk": {"0.1.0": "2026-07-31T00:00:00"}}}, sources=Sources(results))
    pages = cosmo_pages(view, FAMILIES["cosmo-python"], Cosmo)
    assert set(pages) == {"cosmo/index.md", "cosmo/cosmo-python.md", "cosmo/cosmo-python/sdk-0.1.0.md",
                          "cosmo/cosmo-python/sdk-0.6.1.md"}
    page = pages["cosmo/cosmo-python.md"]
    for check in CHECKS:
        assert page.count(f"sdk-0.6.1.md#{check.name.replace('.', '-')}") >= 1
        assert check.promise[:40] in page
    assert "a-check-that-no-longer-exists" not in page
    assert "<code>send-text</code>: options" in page and "`room-relay`" in page and "2026-07-31" in page
    assert EVIL not in page


def test_version_page_shows_the_stand_in_log_as_text(tmp_path: Path) -> None:
    results = stored(tmp_path)
    frame, _ = load_frame(results)
    view = site_view(frame, sources=Sources(results))
    page = cosmo_pages(view, FAMILIES["cosmo-python"], Cosmo)["cosmo/cosmo-python/sdk-0.1.0.md"]
    assert EVIL not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page  # the error message and the logged frame, escaped
    assert "send-text" in page and "{ #strict-data-channel }" in page
