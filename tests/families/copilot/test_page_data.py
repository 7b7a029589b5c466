"""The tolerance pages of the Copilot families as plain data (``*_page_data``), from small
hand-made frames; one rendering test that third-party text stays text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from matrix.families.copilot.family import CopilotFamily
from matrix.families.copilot.pages import (
    cell_page_data,
    contract_data,
    matrix_page_data,
    tolerance_pages,
    transcript_entries,
)
from matrix.families.registry import FAMILIES
from matrix.site.sitedata import site_view
from matrix.store.dataset import Sources
from matrix.store.results import frame_of
from tests.conftest import make_row

EVIL = "<script>alert(1)</script>"


def tolerance(sdk: str, rule: str, outcome: str = "surfaced", **fields: Any) -> Any:
    return make_row(sdk, "0.0.400", outcome, probe="tolerance", mutation=rule, **fields)


def only_row(frame: pd.DataFrame) -> Any:
    return next(frame.itertuples())


def test_matrix_lists_measured_rules_in_the_shims_order_and_versions_by_number() -> None:
    frame = frame_of([tolerance("0.10.0", "event.unknown-type"), tolerance("0.9.0", "result.extra-field"),
                      tolerance("0.9.0", "event.unknown-type", "lost", flaky=True, repeats=["lost", "surfaced"]),
                      tolerance("0.9.0", "result.extra-field", family="copilot-node")])
    page = matrix_page_data(frame, "copilot-python")
    assert [r.name for r in page.rules] == ["result.extra-field", "event.unknown-type"]
    assert [r.sdk for r in page.rows] == ["0.9.0", "0.10.0"]
    assert page.rows[1].cells[0] is None  # 0.10.0 was not measured with result.extra-field
    cell = page.rows[0].cells[1]
    assert cell is not None and cell.outcome == "lost" and cell.flaky and cell.repeats == ["lost", "surfaced"]
    assert cell.link == "copilot-python/sdk-0.9.0.md#event.unknown-type"
    assert page.rows[0].cli == "0.0.400"


def test_contract_grades_only_booleans_and_keeps_the_first_line_of_the_queued_calls_error() -> None:
    contract = {"cli_terminated": True, "cli_gone_after_s": 2, "queued_call_rejected": "maybe",
                "no_files_written": False, "files_written": ["a.log", "b.log"],
                "queued_call": {"ok": False, "error": "refused\nsecond line"}}
    frame = frame_of([make_row("1.0.0", "0.0.300", "refused", probe="contract", detail={"contract": contract}),
                      make_row("0.9.0", "0.0.300", "launch-failed", probe="contract",
                               detail={"contract": {"queued_call": {"ok": True}}})])
    first, second = contract_data(frame, "copilot-python")
    assert (first.sdk, second.sdk) == ("0.9.0", "1.0.0")
    assert first.answer == "resolved" and first.cli_terminated is None and first.gone_after is None
    assert second.cli_terminated is True and second.gone_after == 2.0
    assert second.queued_rejected is None and second.no_files_written is False
    assert second.files == "a.log, b.log" and second.answer == "refused"


def test_cell_without_a_transcript_differs_from_one_whose_transcript_is_unreadable(tmp_path: Path) -> None:
    (tmp_path / "t.jsonl").write_text("not json\n")
    without = cell_page_data(only_row(frame_of([tolerance("1.0.0", "event.unknown-type")])), Sources(tmp_path))
    unreadable = cell_page_data(only_row(frame_of([tolerance("1.0.0", "event.unknown-type",
                                                            detail={"transcript": "t.jsonl"})])), Sources(tmp_path))
    assert without.transcript is None and unreadable.transcript == []
    assert without.applied == "nothing" and without.error == "" and without.observed == ""
    assert without.description.startswith("A session.event of a type no SDK knows")


def test_cell_keeps_five_pieces_of_evidence_and_what_the_shim_applied(tmp_path: Path) -> None:
    detail = {"loop_errors": [f"error {i}" for i in range(7)], "applied": ["one", "two"], "observed": {"canary": True}}
    page = cell_page_data(only_row(frame_of([tolerance("1.0.0", "no.such-rule", "fatal", detail=detail,
                                                       error_message="boom")])), Sources(tmp_path))
    assert page.evidence == [f"error {i}" for i in range(5)]
    assert page.applied == "one; two" and page.error == "boom" and page.description == ""
    assert json.loads(page.observed) == {"canary": True}


def test_a_verdict_from_a_batch_names_the_rules_that_shared_its_run(tmp_path: Path) -> None:
    detail = {"applied": ["after session.create: session.event session.info"],
              "batch": ["event.unknown-type", "field.type-change"]}
    page = cell_page_data(only_row(frame_of([tolerance("1.0.0", "event.extra-field", "ignored", detail=detail)])),
                          Sources(tmp_path))
    assert page.applied.endswith("(in one run with event.unknown-type, field.type-change)")


def test_transcript_entries_shorten_long_messages_and_keep_the_direction() -> None:
    lines = [{"t": 0.5, "dir": "shim->sdk", "note": "injected", "msg": {"id": 1}},
             {"t": 1, "dir": "cli->sdk", "raw": "x" * 5000}]
    first, second = transcript_entries("\n".join(json.dumps(line) for line in lines) + "\n\n")
    assert (first.t, first.direction, first.note) == ("0.5", "shim->sdk", "injected")
    assert json.loads(first.text) == {"id": 1}
    assert second.note == "" and second.text.endswith("\n… (1000 more characters)")
    assert transcript_entries(None) == []


def pages_of(frame: pd.DataFrame, evidence: Path, family: str) -> dict[str, str]:
    """``family``'s tolerance pages of ``frame``, transcripts read from ``evidence``."""
    return tolerance_pages(site_view(frame, sources=Sources(evidence)), FAMILIES[family], CopilotFamily)


def test_the_index_lists_every_family_with_tolerance_checks(tmp_path: Path) -> None:
    frame = frame_of([tolerance("1.0.0", "event.unknown-type"), tolerance("1.0.0", "event.unknown-type",
                                                                          family="copilot-node")])
    pages = pages_of(frame, tmp_path, "copilot-node")
    assert set(pages) == {"tolerance/index.md", "tolerance/copilot-node.md", "tolerance/copilot-node/sdk-1.0.0.md"}
    assert "[copilot-python](copilot-python.md)" in pages["tolerance/index.md"]
    assert "No tolerance checks" in pages_of(frame_of([make_row()]), tmp_path, "copilot-node")["tolerance/index.md"]


def test_what_an_sdk_or_the_cli_sent_is_text_on_the_release_page(tmp_path: Path) -> None:
    (tmp_path / "t.jsonl").write_text(json.dumps({"t": 0, "dir": "cli->sdk", "note": EVIL, "raw": EVIL}) + "\n")
    frame = frame_of([tolerance("1.0.0", "event.unknown-type", "lost", error_message=f"failed: {EVIL}",
                                detail={"transcript": "t.jsonl", "loop_errors": [EVIL]})])
    page = pages_of(frame, tmp_path, "copilot-python")["tolerance/copilot-python/sdk-1.0.0.md"]
    assert EVIL not in page
    assert page.count("&lt;script&gt;alert(1)&lt;/script&gt;") == 4  # error, evidence, the note, the message
    assert "&amp;lt;" not in page  # escaped once


def test_a_release_page_has_a_section_per_rule_in_the_shims_order_linked_from_the_matrix(tmp_path: Path) -> None:
    frame = frame_of([tolerance("1.0.0", "event.unknown-type", "lost"), tolerance("1.0.0", "result.extra-field")])
    pages = pages_of(frame, tmp_path, "copilot-python")
    page = pages["tolerance/copilot-python/sdk-1.0.0.md"]
    assert page.index("## `result.extra-field` { #result.extra-field }") < page.index("## `event.unknown-type`")
    assert 'href="../copilot-python/sdk-1.0.0/#event.unknown-type"' in pages["tolerance/copilot-python.md"]


def test_a_release_page_of_transcripts_is_left_out_of_search_and_its_family_matrix_is_not(tmp_path: Path) -> None:
    """Search finds the release's version page, which links its evidence page; indexing every
    transcript was a third of MkDocs' time."""
    pages = pages_of(frame_of([tolerance("1.0.0", "event.unknown-type", "lost")]), tmp_path, "copilot-python")
    assert pages["tolerance/copilot-python/sdk-1.0.0.md"].startswith("---\nsearch:\n  exclude: true\n---\n")
    assert "exclude: true" not in pages["tolerance/copilot-python.md"]
