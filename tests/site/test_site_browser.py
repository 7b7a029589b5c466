"""The built site in a real headless Chromium (Debian's package, driven by Playwright).

The results are written by the test itself (stored rows of our own), so the page's numbers
can be checked against the DataFrame and the test needs no probe run. One stored message
carries HTML and script: it must show as text."""

from __future__ import annotations

import http.server
import shutil
import subprocess
import threading
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest

from matrix.model import Row
from matrix.site.build import build_site
from matrix.store.results import Store, load_frame
from tests.conftest import make_row, site_root

CHROMIUM_PATHS = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
EVIL = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"><b>bold</b>'


def find_chromium() -> str | None:
    return next((p for p in CHROMIUM_PATHS if Path(p).exists()), None)


def ensure_chromium() -> str:
    """Install Debian's chromium when it is missing and we can; skip only when we cannot."""
    found = find_chromium()
    if found:
        return found
    apt = shutil.which("apt-get")
    if apt is None:
        pytest.skip("no chromium and no apt-get to install it")
    try:
        subprocess.run([apt, "update", "-qq"], check=True, capture_output=True, timeout=600)
        subprocess.run([apt, "install", "-y", "-qq", "chromium"], check=True, capture_output=True, timeout=900,
                       env={"DEBIAN_FRONTEND": "noninteractive", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, PermissionError) as err:
        pytest.skip(f"chromium is not installed and could not be installed with apt-get: {err}")
    found = find_chromium()
    if not found:
        pytest.skip("apt-get installed chromium but no binary was found")
    return found


def rows() -> list[Row]:
    out = []
    outcomes = ["compatible", "refused", "launch-failed", "hang", "crashed", "degraded", "uninstallable"]
    for i, sdk in enumerate(["0.1.10", "0.1.32", "1.0.0", "1.0.27"]):
        for j, cli in enumerate(["0.0.354", "0.0.402", "1.0.60", "1.0.102"]):
            outcome = outcomes[(i + j) % len(outcomes)]
            out.append(make_row(sdk, cli, outcome, protocol=3 if outcome == "compatible" else None,
                                error_message=EVIL if (sdk, cli) == ("0.1.10", "1.0.102") else None,
                                seconds=1.0 + i + j, start_seconds=0.5, harness_version="t",
                                measured_at="2026-11-29T00:00:00+00:00"))
    return out


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    tmp = tmp_path_factory.mktemp("site")
    root = site_root(tmp / "repo")
    results = tmp / "results"
    store = Store(results)
    for r in rows():
        store.append(r)
    build_site(root, results, tmp / "out", tmp / "cache")
    handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp / "out"))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", results
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def page(site: tuple[str, Path]):  # type: ignore[no-untyped-def]
    chromium = ensure_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"])
        pg = browser.new_page()
        pg.goto(site[0] + "/matrix/copilot-python/")
        yield pg
        browser.close()


def test_heatmap_is_displayed(page) -> None:  # type: ignore[no-untyped-def]
    width = page.eval_on_selector("img.cm-heatmap", "img => img.complete ? img.naturalWidth : 0")
    assert width > 0


def test_table_has_a_row_per_cell(page, site: tuple[str, Path]) -> None:  # type: ignore[no-untyped-def]
    frame, _ = load_frame(site[1])
    assert page.locator("table.cm-table tbody tr").count() == len(frame)


def test_sorting_by_a_column(page) -> None:  # type: ignore[no-untyped-def]
    header = page.locator("table.cm-table thead th", has_text="seconds")
    header.click()
    values = [float(t) for t in page.locator("table.cm-table tbody tr td:nth-child(9)").all_inner_texts()]
    assert values == sorted(values)
    header.click()
    values = [float(t) for t in page.locator("table.cm-table tbody tr td:nth-child(9)").all_inner_texts()]
    assert values == sorted(values, reverse=True)


def test_search_finds_a_version(page) -> None:  # type: ignore[no-untyped-def]
    page.fill("input.cm-filter", "1.0.27")
    visible = page.locator("table.cm-table tbody tr:not([hidden])")
    assert visible.count() == 4
    assert all("1.0.27" in t for t in visible.all_inner_texts())
    page.fill("input.cm-filter", "")


def test_third_party_html_is_shown_as_text(page) -> None:  # type: ignore[no-untyped-def]
    assert page.evaluate("window.__pwned") is None
    assert page.locator("table.cm-table b", has_text="bold").count() == 0
    assert page.get_by_text("<script>window.__pwned = 1</script>", exact=False).count() >= 1


def test_home_counts_equal_the_dataframe(site: tuple[str, Path]) -> None:
    import re
    import urllib.request

    frame, _ = load_frame(site[1])
    html = urllib.request.urlopen(site[0] + "/").read().decode()
    shown = {k: int(v) for k, v in re.findall(r'data-cm-count="([a-z-]+)">(?:<b>)?(\d+)', html)}
    expected = {str(k): int(v) for k, v in frame["outcome"].value_counts().items()}
    expected["total"] = len(frame)
    assert shown == expected
