"""What a fold changed, for a reviewer: each new release's reach and what it broke, regressions
first; from a dataset of our own rows folded twice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from matrix.answers.changes import notes_of, render_markdown, render_text
from matrix.commands.cli import main
from matrix.probes.verdict import LEFT_RUNNING
from matrix.store.dataset import Dataset
from matrix.store.results import Store, frame_of
from tests.conftest import make_row

LEFT = "left copilot running after stop() (still alive 5 s after stop() returned)"


def fold(data: Path, results: Path, cells: list, at: str) -> None:
    store = Store(results)
    for sdk, cli, outcome, *rest in cells:
        store.append(make_row(sdk, cli, outcome, protocol=3 if outcome != "refused" else None,
                              error_message=rest[0] if rest else None, error_type=rest[1] if len(rest) > 1 else None,
                              measured_at=at, harness_version="t"))
    Dataset(data).fold(results, at=at)


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """Two SDKs against CLI 2.0.0; then CLI 2.1.0 arrives, breaking SDK 1.0.0, and 1.0.1 against
    2.0.0 is measured again, now refused."""
    d = tmp_path / "data"
    fold(d, tmp_path / "r1", [("1.0.0", "2.0.0", "compatible"), ("1.0.1", "2.0.0", "compatible"),
                              ("1.0.2", "2.0.0", "degraded", LEFT, LEFT_RUNNING)], "2026-11-01T00:00:00+00:00")
    fold(d, tmp_path / "r2", [("1.0.0", "2.1.0", "refused", "SDK expects version 2, but server reports version 3"),
                              ("1.0.1", "2.1.0", "compatible"), ("1.0.2", "2.1.0", "compatible"),
                              ("1.0.1", "2.0.0", "crashed", "KeyError: 'sessionId'")], "2026-11-30T00:00:00+00:00")
    return d


def test_a_new_cli_release_says_what_it_works_with_and_what_it_broke(data: Path) -> None:
    entry = Dataset(data).changes()[0]
    assert entry.added == {"copilot-python": {"cli": ["2.1.0"]}}
    frame = frame_of(Dataset(data).read()[0])
    (note,) = notes_of(frame, entry)
    assert (note.title, note.previous) == ("@github/copilot 2.1.0", "2.0.0")
    assert note.works_with == ['"github-copilot-sdk>=1.0.1,<=1.0.2"']
    assert [(b.other, b.was, b.now) for b in note.broke] == [("1.0.0", "compatible", "refused")]
    # 1.0.2 worked with 2.0.0 only with a leak: degraded there, so 2.1.0 broke nothing of it.
    assert "broke 1 cell(s) that worked with 2.0.0" in note.summary()


def test_the_pull_request_body_puts_regressions_first(data: Path) -> None:
    entry = Dataset(data).changes()[0]
    frame = frame_of(Dataset(data).read()[0])
    body = render_markdown(frame, entry)
    regressions, releases = body.index("## Regressions"), body.index("## New releases")
    assert regressions < releases
    section = body[regressions:releases]
    assert "**@github/copilot 2.1.0** (copilot-python) broke handshake with github-copilot-sdk 1.0.0" in section
    assert "sdk 1.0.1 × 2.0.0: compatible → crashed (KeyError: 'sessionId')" in section
    assert "github-copilot-sdk>=1.0.1,<=1.0.2" in body[releases:]
    assert render_text(frame, entry).startswith("data: @github/copilot 2.1.0 measured (3 cells; 2 regression(s))")


def test_an_older_entry_is_read_with_the_dataset_as_it_is_now(data: Path) -> None:
    first = Dataset(data).changes()[1]
    frame = frame_of(Dataset(data).read()[0])
    notes = notes_of(frame, first)
    assert [n.title for n in notes] == ["@github/copilot 2.0.0", "github-copilot-sdk 1.0.0", "github-copilot-sdk 1.0.1",
                                        "github-copilot-sdk 1.0.2"]
    assert [n.previous for n in notes[:2]] == [None, None] and not notes[0].broke and not notes[1].broke
    # 1.0.1 against 2.0.0 was measured again later (crashed): its note says so, as the site does.
    assert [(b.other, b.now) for b in notes[2].broke] == [("2.0.0", "crashed")]
    sdk2 = notes[3]
    assert sdk2.works_but == ['@github/copilot@2.0.0'] and sdk2.previous == "1.0.1"


def test_changes_command(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["changes", "--data", str(data), "--format", "title"]) == 0
    assert capsys.readouterr().out == "data: @github/copilot 2.1.0 measured (3 cells; 2 regression(s))\n"
    assert main(["changes", "--data", str(data), "--format", "json", "--entry", "2"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["at"] == "2026-11-01T00:00:00+00:00" and len(doc["releases"]) == 4
    assert main(["changes", "--data", str(data), "--entry", "3"]) == 2
    assert "has 2 fold(s)" in capsys.readouterr().err
    assert main(["changes", "--data", str(data.parent / "nowhere")]) == 2
