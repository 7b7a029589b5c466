"""The site's own pages as plain data (no HTML involved), and the templates that draw them."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from matrix.answers.ship import can_i_ship
from matrix.families.base import SiteView
from matrix.families.copilot.matrix_pages import cell_rows, cells_page, matrix_page, matrix_page_data
from matrix.families.registry import FAMILIES
from matrix.site.pages import home, home_page, pins_page, pins_page_data, versions_index, versions_index_data
from matrix.site.sitedata import site_view
from matrix.store.results import Store, frame_of, load_frame
from tests.conftest import make_row

EVIL = "<script>alert(1)</script> | x"


def _frame(tmp_path: Path) -> pd.DataFrame:
    store = Store(tmp_path / "r")
    for sdk, cli, outcome, msg in [("1.0.0", "1.0.60", "compatible", None), ("1.0.0", "1.0.7", "refused", EVIL),
                                   ("0.9.0", "1.0.60", "refused", "x" * 200), ("0.9.0", "1.0.7", "compatible", None)]:
        store.append(make_row(sdk, cli, outcome, error_message=msg, protocol=3 if outcome == "compatible" else None))
    frame, _ = load_frame(tmp_path / "r")
    return frame


def test_cells_are_in_version_order_with_an_excerpt_of_long_messages(tmp_path: Path) -> None:
    rows = cell_rows(_frame(tmp_path))
    assert [(r.sdk, r.cli) for r in rows] == [("0.9.0", "1.0.7"), ("0.9.0", "1.0.60"), ("1.0.0", "1.0.7"),
                                               ("1.0.0", "1.0.60")]
    long = rows[1]
    assert len(long.error) == 200 and long.excerpt == "x" * 160 + "…"
    assert rows[0].protocol == "3" and rows[1].protocol == ""


def test_home_counts_outcomes_and_links_each_family(tmp_path: Path) -> None:
    page = home_page(site_view(_frame(tmp_path), {}, "2026-12-01"))
    assert dict(page.counts) == {"compatible": 2, "refused": 2} and page.total == 4
    assert [(f.name, f.page) for f in page.families] == [("copilot-python", "matrix/copilot-python.md")]
    assert [p.title for p in page.legend] == ["Handshake cells", "Session cells", "Tolerance checks", "Promise checks"]
    session = next(p for p in page.legend if p.title == "Session cells")
    assert dict(session.meanings)["lost"].startswith("The conversation ran, but an event")  # its own meaning


def test_matrix_page_data_sizes_the_grid(tmp_path: Path) -> None:
    page = matrix_page_data(site_view(_frame(tmp_path), {}, "now"), FAMILIES["copilot-python"])
    assert (page.sdks, page.clis, len(page.cells)) == (2, 2, 4)


def test_versions_index_lists_both_sides_in_version_order(tmp_path: Path) -> None:
    (family,) = versions_index_data(site_view(_frame(tmp_path), {}, "now"))
    assert (family.sdks, family.clis) == (["0.9.0", "1.0.0"], ["1.0.7", "1.0.60"])
    assert "[1.0.60](copilot-python/cli-1.0.60.md)" in versions_index(site_view(_frame(tmp_path), {}, "now"))


def test_pins_name_what_works_per_release_and_a_recommended_pair(tmp_path: Path) -> None:
    (family,) = pins_page_data(site_view(_frame(tmp_path), {}, "now"))
    by_sdk = {r.version: r.works for r in family.by_sdk}
    assert any("1.0.60" in line for line in by_sdk["1.0.0"]) and not any("1.0.7" in line for line in by_sdk["1.0.0"])
    assert family.recommended is not None and "1.0.60" in family.recommended[1]
    text = pins_page(site_view(_frame(tmp_path), {}, "now"))
    # A code span shows entities as written: the install line must stay as typed.
    assert f"Recommended pair: `{family.recommended[0]}`" in text


def test_third_party_text_stays_text(tmp_path: Path) -> None:
    data = site_view(_frame(tmp_path), {}, "now")
    python = FAMILIES["copilot-python"]
    for text in (home(data), matrix_page(data, python), cells_page(data, python)):
        assert "<script>" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in cells_page(data, python)


def test_templates_are_inputs_of_the_generated_pages() -> None:
    """The build skips generation when its inputs are unchanged: templates are among them."""
    from matrix.site.build import code_files

    names = {(p.parent.parent.name, p.name) for p in code_files()}
    assert ("site", "home.md") in names and ("matrix", "macros.html") in names


def test_pictures_and_the_twin_are_made_here_when_no_drawing_process_could_start(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from concurrent.futures import Future
    from concurrent.futures.process import BrokenProcessPool

    import matrix.site.build as build

    broken: Future[None] = Future()
    broken.set_exception(BrokenProcessPool("a child could not start"))
    drawn: list[Path] = []
    monkeypatch.setattr(build, "_pictures", lambda frame, assets: [
        (assets / "a.png", "k", lambda png: (drawn.append(png), png.write_bytes(b"png")))])
    twin = (tmp_path / "matrix.json", "t", lambda out: (drawn.append(out), out.write_text("{}")))
    build._finish_pictures([broken], pd.DataFrame(), tmp_path, twin)
    assert drawn == [tmp_path / "a.png", tmp_path / "matrix.json"]
    assert (tmp_path / "a.sha").read_text() == "k" and (tmp_path / "matrix.sha").read_text() == "t"


def test_a_matrix_still_being_measured_says_how_many_listed_releases_have_no_cell_yet() -> None:
    frame = frame_of([make_row("1.0.0", "1.0.2", "compatible"), make_row("1.0.1", "1.0.2", "compatible")])
    listed = {"copilot-python": {"sdk-listed": {"1.0.0": "release", "1.0.1": "release", "1.0.2-rc.1": "pre-release"},
                                 "cli-listed": {"1.0.0": "release", "1.0.1": "release", "1.0.2": "release"}}}
    page = matrix_page_data(site_view(frame, listed), FAMILIES["copilot-python"])
    assert page.not_yet == [("@github/copilot", 2)]  # a newer pre-release is another group: not this note
    assert "2 releases of @github/copilot that the registry lists have no cell here yet" in \
        render_matrix(site_view(frame, listed))
    whole = {"copilot-python": {"cli-listed": {"1.0.2": "release"}}}
    assert matrix_page_data(site_view(frame, whole), FAMILIES["copilot-python"]).not_yet == []
    assert "Not measured yet" not in render_matrix(site_view(frame, whole))


def test_pairs_that_connect_without_a_session_verdict_yet_are_counted_on_the_matrix_and_in_can_i_ship() -> None:
    session = dict(probe="session", route="provider", asked=["shell"])
    rows = [make_row("1.0.0", "1.0.2", "compatible"), make_row("1.0.0", "1.0.2", "compatible", **session),
            make_row("1.0.1", "1.0.2", "compatible"), make_row("1.0.1", "1.0.1", "refused")]
    page = matrix_page_data(site_view(frame_of(rows), {}), FAMILIES["copilot-python"])
    assert page.no_session == 1  # 1.0.1 x 1.0.2 connects and has no turn; a refused pair has none to have
    assert "1 pair here connects and has no session verdict yet" in render_matrix(site_view(frame_of(rows), {}))
    shipped = can_i_ship(frame_of(rows), "copilot-python", sdk="1.0.1", against="all")
    reasons = {j.cli_version: j.reason for j in shipped.cells}
    assert "session not measured yet" in reasons["1.0.2"] and "session" not in reasons["1.0.1"]
    whole = frame_of([*rows, make_row("1.0.1", "1.0.2", "compatible", **session)])
    assert "Sessions not measured yet" not in render_matrix(site_view(whole, {}))


def render_matrix(view: SiteView) -> str:
    return matrix_page(view, FAMILIES["copilot-python"])


def test_the_release_pages_made_by_another_process_are_the_ones_made_here(tmp_path: Path) -> None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    import matrix.site.build as build
    from matrix.site.tree import page_set, pair_page_set

    frame = _frame(tmp_path)
    view = site_view(frame, {"copilot-python": {"sdk": {"1.0.0": "2026-01-02"}}}, "2026-01-03")
    whole = page_set(view)
    made = pair_page_set(view)
    assert made and all(rel in whole for rel in made)  # the release pages are part of the whole
    assert not any(rel.startswith(("tolerance/", "versions/index")) for rel in made)
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        apart = pool.submit(build._pair_pages_apart, frame, view.releases, tmp_path / "nothing", None,
                            view.generated_at)
        given = page_set(view, lambda: build._pair_pages_made(apart, view))
    assert list(given.items()) == list(whole.items())  # the same pages, in the same order


def test_the_release_pages_are_made_here_when_no_process_could_start(tmp_path: Path) -> None:
    from concurrent.futures import Future
    from concurrent.futures.process import BrokenProcessPool

    import matrix.site.build as build
    from matrix.site.tree import pair_page_set

    view = site_view(_frame(tmp_path))
    broken: Future[dict[str, str]] = Future()
    broken.set_exception(BrokenProcessPool("a child could not start"))
    assert build._pair_pages_made(broken, view) == pair_page_set(view) != {}
