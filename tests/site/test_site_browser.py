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
from matrix.store.results import Store, load_frame, save_releases
from tests.conftest import ROOT, make_row, site_root

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
    # Two more families against the same CLIs, for the picker: a release of each is chosen.
    for family, works in (("copilot-node", {("1.0.7", "1.0.60"), ("1.0.7", "1.0.102"), ("1.0.14", "1.0.102")}),
                          ("copilot-go", {("1.0.0", "0.0.402"), ("1.0.4", "1.0.60"), ("1.0.14", "1.0.60")})):
        sdks = sorted({s for s, _ in works}, key=lambda v: tuple(map(int, v.split("."))))
        for sdk in sdks:
            for cli in ["0.0.354", "0.0.402", "1.0.60", "1.0.102"]:
                ok = (sdk, cli) in works
                out.append(make_row(sdk, cli, "compatible" if ok else "refused", family=family,
                                    protocol=3 if ok else None, harness_version="t",
                                    error_message=None if ok else "SDK protocol version mismatch",
                                    measured_at="2026-11-29T00:00:00+00:00"))
    return out


def python_rows(site: tuple[str, Path]):  # type: ignore[no-untyped-def]
    """The copilot-python rows: the family of the matrix page the tests look at."""
    frame, _ = load_frame(site[1])
    return frame[frame["family"] == "copilot-python"]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    tmp = tmp_path_factory.mktemp("site")
    root = site_root(tmp / "repo")
    results = tmp / "results"
    store = Store(results)
    for r in rows():
        store.append(r)
    # Release dates against version order for the CLIs: ordering by date must reverse them.
    save_releases(results, {"copilot-python": {
        "sdk": {v: f"2026-0{i + 1}-01T00:00:00Z" for i, v in enumerate(["0.1.10", "0.1.32", "1.0.0", "1.0.27"])},
        "cli": {v: f"2026-0{4 - i}-01T00:00:00Z" for i, v in enumerate(["0.0.354", "0.0.402", "1.0.60", "1.0.102"])}}})
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


def test_the_matrix_is_html_a_cell_per_pair_with_its_tooltip_and_evidence(page, site: tuple[str, Path]) -> None:  # type: ignore[no-untyped-def]
    frame = python_rows(site)
    cells = page.locator("table.cm-grid tbody td")
    assert cells.count() == len(frame)
    evil = page.locator('table.cm-grid tbody tr:has(th:has-text("0.1.10")) td').nth(3)
    assert evil.get_attribute("title").startswith("SDK 0.1.10 × CLI 1.0.102: ")
    assert "<script>" in evil.get_attribute("title")  # the error's first line, as text
    href = evil.locator("a").get_attribute("href")
    assert href.endswith("versions/copilot-python/sdk-0.1.10/#cli-1.0.102")
    position = page.eval_on_selector("table.cm-grid thead th", "th => getComputedStyle(th).position")
    assert position == "sticky"


def test_the_matrix_orders_by_release_date(page) -> None:  # type: ignore[no-untyped-def]
    def columns() -> list[str]:
        return page.locator("table.cm-grid thead th a").all_inner_texts()

    assert columns() == ["0.0.354", "0.0.402", "1.0.60", "1.0.102"]
    page.click("button[data-cm-order=date]")
    assert columns() == ["1.0.102", "1.0.60", "0.0.402", "0.0.354"]
    first_row = page.locator("table.cm-grid tbody tr").first.locator("td").all_inner_texts()
    page.click("button[data-cm-order=version]")
    assert columns() == ["0.0.354", "0.0.402", "1.0.60", "1.0.102"]
    assert page.locator("table.cm-grid tbody tr").first.locator("td").all_inner_texts() == first_row[::-1]


def test_a_cell_opens_its_evidence(page, site: tuple[str, Path]) -> None:  # type: ignore[no-untyped-def]
    try:
        page.locator('table.cm-grid tbody tr:has(th:has-text("1.0.27")) td a').first.click()
        page.wait_for_load_state()
        assert page.url.endswith("/versions/copilot-python/sdk-1.0.27/#cli-0.0.354")
        assert page.locator('tr[id="cli-0.0.354"]').count() == 1
        assert page.locator("a[href$='sdk-1.0.27.repro.sh']").count() == 1
    finally:
        page.goto(site[0] + "/matrix/copilot-python/")


# (family, the side the reader has, its release, what the answer must say: the other side's
# working releases in its ecosystem's syntax; None: each compatible CLI of the stored rows)
PICKS = [("copilot-python", "sdk", "0.1.10", None),
         ("copilot-node", "sdk", "1.0.7", ['npm install "@github/copilot@>=1.0.60 <=1.0.102"']),
         ("copilot-go", "cli", "1.0.60", ["go get github.com/github/copilot-sdk/go@v1.0.14",
                                          "// works: v1.0.4 to v1.0.14"])]


@pytest.mark.parametrize(("family", "side", "version", "says"), PICKS)
def test_the_picker_answers_from_the_api(page, site: tuple[str, Path], family: str, side: str,  # type: ignore[no-untyped-def]
                                         version: str, says: list[str] | None) -> None:
    try:
        page.goto(site[0] + "/")
        assert page.locator('link[rel=alternate][type="application/atom+xml"]').count() == 1
        page.select_option("select[data-cm-family]", family)
        page.select_option("select[data-cm-side]", side)
        page.select_option("select[data-cm-version]", version)
        answer = page.locator("[data-cm-answer]")
        answer.locator("a", has_text=version).wait_for()  # the answer for this release, not an earlier choice
        text = answer.inner_text()
    finally:
        page.goto(site[0] + "/matrix/copilot-python/")
    if says is None:
        frame, _ = load_frame(site[1])
        mine = frame[(frame["family"] == family) & (frame["sdk_version"] == version)]
        says = [f'npm install "@github/copilot@{v}"' for v in mine[mine["outcome"] == "compatible"]["cli_version"]]
    assert says and all(line in text for line in says), text
    assert "Outside that range" in text and "refused" in text and "Recommended pair" in text


def test_table_has_a_row_per_cell(page, site: tuple[str, Path]) -> None:  # type: ignore[no-untyped-def]
    page.click("a[href$='copilot-python-cells/']")  # the matrix page links to its every-cell page
    page.wait_for_load_state()
    frame = python_rows(site)
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


def test_the_full_history_matrix_loads_and_reorders(page, site: tuple[str, Path],  # type: ignore[no-untyped-def]
                                                    tmp_path: Path) -> None:
    """49 SDK releases × 98 CLI releases, the size of one family's whole history. The load
    and the reorder are printed (figures, not limits): see the Performance page."""
    import time

    from matrix.answers.analysis import rows_of
    from matrix.families.registry import FAMILIES
    from matrix.present.grid import grid_of
    from matrix.site.render import render
    from matrix.store.results import frame_of

    sdks = [f"1.0.{i}" for i in range(49)]
    clis = [f"1.0.{j}" for j in range(98)]
    outcomes = ["compatible", "refused", "launch-failed", "hang", "crashed", "degraded"]
    big = frame_of([make_row(s, c, outcomes[(i * 7 + j) % 6], protocol=3 if (i * 7 + j) % 6 == 0 else None,
                             error_message="SDK protocol version mismatch: SDK expects version 2, but server reports 3")
                    for i, s in enumerate(sdks) for j, c in enumerate(clis)])
    dates = {"copilot-python": {"sdk": {s: f"2026-01-{1 + i % 28:02d}" for i, s in enumerate(sdks)},
                                "cli": {c: f"2025-{1 + j % 12:02d}-01" for j, c in enumerate(clis)}}}
    for name in ("stylesheets/extra.css", "javascripts/grid.js"):
        (tmp_path / Path(name).name).write_text((ROOT / "docs" / name).read_text())
    grid = grid_of(rows_of(big), dates, "copilot-python", FAMILIES["copilot-python"].cell_label)
    html = ('<!doctype html><html><head><meta charset="utf-8"><link rel="stylesheet" href="extra.css"></head>'
            '<body><article class="md-typeset">' + render("grid-colours.html")
            + render("grid.html", grid=grid)
            + '</article><script src="grid.js"></script></body></html>')
    (tmp_path / "grid.html").write_text(html)
    try:
        page.goto((tmp_path / "grid.html").as_uri())
        load = page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd")
        assert page.locator("table.cm-grid tbody td").count() == 49 * 98
        t0 = time.monotonic()
        page.click("button[data-cm-order=date]")
        reorder = time.monotonic() - t0
        first = page.locator("table.cm-grid thead th a").first.inner_text()
        assert first == "1.0.0"  # released 2025-01-01, the earliest with 1.0.12, 1.0.24, ...
        print(f"\n49 × 98 grid: {len(html) / 1e6:.2f} MB of HTML, loaded in {load:.0f} ms, "
              f"reordered by release date in {reorder * 1000:.0f} ms")
    finally:
        page.goto(site[0] + "/matrix/copilot-python/")
