from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from matrix.families.copilot.matrix_pages import cells_page
from matrix.families.copilot.release_pages import cli_page, sdk_page
from matrix.families.registry import FAMILIES
from matrix.model import Row
from matrix.site.notebooks import NotebookError, execute
from matrix.site.sitedata import site_view
from matrix.store.dataset import Sources
from matrix.store.results import Store, load_frame
from tests.conftest import ROOT, make_row

EVIL = "<script>alert(1)</script> & <b>x</b>"


def stored(tmp_path: Path) -> Path:
    store = Store(tmp_path / "results")
    for sdk, cli, outcome, msg in [("1.0.0", "1.0.60", "compatible", None), ("1.0.0", "1.0.7", "refused", EVIL),
                                   ("0.1.10", "1.0.60", "refused", "SDK expects version 1")]:
        store.append(make_row(sdk, cli, outcome, error_message=msg, protocol=3 if outcome == "compatible" else None,
                              sdk_declared={"SDK_PROTOCOL_VERSION": 3, "MIN_PROTOCOL_VERSION": 3, "bundled_cli": True},
                              detail={"launch_argv": ["--headless", "--stdio"]}, harness_version="t"))
    return tmp_path / "results"


def test_pages_escape_third_party_text(tmp_path: Path) -> None:
    frame, _ = load_frame(stored(tmp_path))
    data = site_view(frame, {}, "now")
    for text in (cells_page(data, FAMILIES["copilot-python"]), sdk_page(data, FAMILIES["copilot-python"], "1.0.0")):
        assert "<script>alert(1)</script>" not in text
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text


def test_sdk_page_shows_the_message_grades(tmp_path: Path) -> None:
    store = Store(tmp_path / "r")
    store.append(make_row("0.1.10", "1.0.60", "refused", error_message="SDK expects version 1",
                          message_names_versions=True, message_actionable=False))
    frame, _ = load_frame(tmp_path / "r")
    text = sdk_page(site_view(frame, {}, "now"), FAMILIES["copilot-python"], "0.1.10")
    assert "<td>yes</td><td><b>no</b></td>" in text


def test_sdk_page_states_declared_window_and_working_range(tmp_path: Path) -> None:
    frame, _ = load_frame(stored(tmp_path))
    text = sdk_page(site_view(frame, {}, "now"), FAMILIES["copilot-python"], "1.0.0")
    assert "3 to 3" in text
    assert "@github/copilot@1.0.60" in text
    assert "| bundles a CLI binary in its wheel | yes |" in text


def test_a_release_page_is_plain_data_before_it_is_markup(tmp_path: Path) -> None:
    """What a release page says, read from the data the template draws, no HTML involved."""
    from matrix.families.copilot.release_pages import cli_release_page, sdk_release_page

    frame, _ = load_frame(stored(tmp_path))
    data = site_view(frame, {"copilot-python": {"sdk": {"1.0.0": "2026-01-02"}}}, "now")
    sdk = sdk_release_page(data, FAMILIES["copilot-python"], "1.0.0")
    assert (sdk.released, sdk.window, sdk.observed, sdk.bundles) == ("2026-01-02", "3 to 3", "3", "yes")
    assert (sdk.first_working, sdk.last_working) == ("1.0.60", "1.0.60")
    assert sdk.works.lines == ["@github/copilot@1.0.60"] and sdk.works.measured == ["1.0.60"]
    assert [(c.other, c.outcome, c.launch) for c in sdk.cells] == [
        ("1.0.7", "refused", "--headless --stdio"), ("1.0.60", "compatible", "--headless --stdio")]
    assert sdk.cells[0].error == EVIL  # raw text: escaping is the template's job
    assert sdk.script == "sdk-1.0.0.repro.sh"
    cli = cli_release_page(data, FAMILIES["copilot-python"], "1.0.60")
    assert [c.other for c in cli.cells] == ["0.1.10", "1.0.0"] and cli.reported == "none quoted"
    assert cli.works.lines == ["github-copilot-sdk==1.0.0"]


def test_cli_page_lists_launch_flags(tmp_path: Path) -> None:
    frame, _ = load_frame(stored(tmp_path))
    text = cli_page(site_view(frame, {}, "now"), FAMILIES["copilot-python"], "1.0.60")
    assert "--headless --stdio" in text and "github-copilot-sdk==1.0.0" in text


def test_cli_page_names_what_the_registry_did_not_serve(tmp_path: Path) -> None:
    store = Store(tmp_path / "r")
    for cli, missing in (("1.0.7", ["@github/copilot-linux-x64@1.0.7"]), ("1.0.60", [])):
        store.append(make_row("1.0.0", cli, "compatible", detail={"optional_not_served": missing}))
    frame, _ = load_frame(tmp_path / "r")
    text = cli_page(site_view(frame, {}, "now"), FAMILIES["copilot-python"], "1.0.7")
    assert "<code>@github/copilot-linux-x64@1.0.7</code>" in text and "JavaScript build" in text
    assert "registry does not serve" not in cli_page(site_view(frame, {}, "now"), FAMILIES["copilot-python"], "1.0.60")


def test_cli_page_says_when_the_cli_misreports_its_version(tmp_path: Path) -> None:
    store = Store(tmp_path / "r")
    store.append(make_row("1.0.0", "1.0.81", "compatible", detail={"cli_reports_itself_as": "0.0.1"}))
    frame, _ = load_frame(tmp_path / "r")
    text = cli_page(site_view(frame, {}, "now"), FAMILIES["copilot-python"], "1.0.81")
    assert "| 0.0.1, not 1.0.81: it misreports its version |" in text


def notebook(tmp_path: Path, code: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(code)]
    path = tmp_path / "nb" / "probe.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


def test_notebook_runs_once_then_comes_from_the_cache(tmp_path: Path) -> None:
    results = stored(tmp_path)
    code = "import os; print(len(open(os.environ['COMPAT_MATRIX_RESULTS'] + '/rows.jsonl').readlines()))"
    path = notebook(tmp_path, code)
    nb, ran = execute(path, Sources(results), tmp_path / "cache")
    assert ran and nb.cells[0].outputs[0]["text"].strip() == "3"
    _, ran_again = execute(path, Sources(results), tmp_path / "cache")
    assert not ran_again
    Store(results).append(make_row("9", "9", "hang", family="f"))
    nb, ran_after_change = execute(path, Sources(results), tmp_path / "cache")
    assert ran_after_change and nb.cells[0].outputs[0]["text"].strip() == "4"


def test_failing_cell_names_the_notebook(tmp_path: Path) -> None:
    path = notebook(tmp_path, "raise ValueError('boom in cell')")
    with pytest.raises(NotebookError) as exc:
        execute(path, Sources(stored(tmp_path)), tmp_path / "cache")
    assert "probe.ipynb" in str(exc.value) and "boom in cell" in str(exc.value)


def test_a_warning_a_cell_prints_fails_the_build_instead_of_being_published(tmp_path: Path) -> None:
    path = notebook(tmp_path, "import warnings; warnings.warn('margins too small')")
    with pytest.raises(NotebookError) as exc:
        execute(path, Sources(stored(tmp_path)), tmp_path / "cache")
    assert "cell 1 wrote to stderr" in str(exc.value) and "margins too small" in str(exc.value)
    assert not list((tmp_path / "cache").glob("*.ipynb"))  # nor kept as a good run


def test_stored_notebooks_have_no_outputs() -> None:
    for path in (ROOT / "notebooks").glob("*.ipynb"):
        nb = json.loads(path.read_text())
        for cell in nb["cells"]:
            assert not cell.get("outputs"), f"{path.name} is stored with outputs"
            assert cell.get("execution_count") is None


def test_site_inputs_digest_changes_with_any_docs_file_or_the_config(tmp_path: Path) -> None:
    from matrix.site.build import _inputs_digest

    (tmp_path / "docs" / "guides").mkdir(parents=True)
    (tmp_path / "mkdocs.yml").write_text("site_name: x\n")
    page = tmp_path / "docs" / "guides" / "a.md"
    page.write_text("one")
    first = _inputs_digest(tmp_path, strict=True)
    assert _inputs_digest(tmp_path, strict=True) == first
    page.write_text("two")
    second = _inputs_digest(tmp_path, strict=True)
    assert second != first
    (tmp_path / "docs" / "new.png").write_bytes(b"\x89PNG")
    assert _inputs_digest(tmp_path, strict=True) != second
    (tmp_path / "mkdocs.yml").write_text("site_name: y\n")
    assert len({first, second, _inputs_digest(tmp_path, strict=True), _inputs_digest(tmp_path, strict=False)}) == 4


def test_version_pages_say_what_stop_left_running(tmp_path: Path) -> None:
    store = Store(tmp_path / "r")
    left = "left copilot running after stop() (still alive 5 s after stop() returned)"
    for sdk, cli, outcome, error_type, message, leaked, gone in [
            ("1.0.0", "1.0.60", "compatible", None, None, [], 0.31),
            ("1.0.0", "1.0.70", "degraded", "LeftRunning", left, ["copilot"], None),
            ("1.0.0", "0.0.420", "refused", "RuntimeError", "SDK expects version 3", ["node npm-loader.js"], None)]:
        store.append(make_row(sdk, cli, outcome, error_type=error_type, error_message=message, leaked=leaked,
                              exit_after_stop_seconds=gone, harness_version="t"))
    frame, _ = load_frame(tmp_path / "r")
    data = site_view(frame, {}, "now")
    sdk = sdk_page(data, FAMILIES["copilot-python"], "1.0.0")
    assert "| left a process it started running after `stop()` | with 2 of 3: 0.0.420, 1.0.70 |" in sdk
    assert "<td>gone in 0.31 s</td>" in sdk and "<td>left node npm-loader.js running</td>" in sdk
    assert "Works, but `stop()` leaves the CLI running" in sdk and "@github/copilot@1.0.70" in sdk
    cli = cli_page(data, FAMILIES["copilot-python"], "0.0.420")
    assert "<td>left node npm-loader.js running</td>" in cli
    assert "left copilot running" in cells_page(data, FAMILIES["copilot-python"])


def test_a_cell_measured_by_older_rules_is_marked_stale() -> None:
    """What its family's rules say of a stored cell is what its mark says."""
    from types import SimpleNamespace

    from matrix.families.copilot.rules import COPILOT_RULES
    from matrix.markup import flaky_mark

    def mark(row: Row) -> str:
        return flaky_mark(SimpleNamespace(flaky=False, stale=COPILOT_RULES.note(row)))

    now = COPILOT_RULES.version("handshake")
    assert "stale" not in mark(make_row("1", "1", "compatible", harness_version=now))
    older = make_row("1", "1", "compatible", harness_version="0")
    assert 'class="cm-stale"' in mark(older) and "run --stale" in mark(older) and f"now {now}" in mark(older)
    assert "stale" in mark(make_row("1", "1", "harness-error", harness_version=now))


def test_an_unchanged_rebuild_generates_nothing_and_a_new_row_regenerates(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The pages of the whole history take most of a build: they are written again only when
    the stored rows (or our code) changed. Notebooks and MkDocs keep their own caches; here
    they are left out."""
    import matrix.site.build as build
    from tests.conftest import site_root

    calls: list[int] = []
    real = build._generate

    def counted(sources: Sources, docs: Path) -> tuple[int, list[str]]:
        calls.append(1)
        return real(sources, docs)

    monkeypatch.setattr(build, "_generate", counted)
    monkeypatch.setattr(build, "render_notebooks", lambda *a: {})
    monkeypatch.setattr(build, "_inputs_digest", lambda root, strict: "same")  # MkDocs: already built
    root, site, results = site_root(tmp_path / "repo"), tmp_path / "site", stored(tmp_path)
    site.mkdir()
    (site / "index.html").write_text("built")
    (site / ".compat-matrix-build").write_text("same")
    first = build.build_site(root, Sources(results), site, tmp_path / "cache")
    again = build.build_site(root, Sources(results), site, tmp_path / "cache")
    assert calls == [1] and first.pages == again.pages > 0
    Store(results).append(make_row("1.0.9", "1.0.102", "refused"))
    build.build_site(root, Sources(results), site, tmp_path / "cache")
    assert calls == [1, 1] and "1.0.9" in (root / "docs" / "versions" / "copilot-python" / "sdk-1.0.9.md").read_text()
