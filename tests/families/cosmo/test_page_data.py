"""The Cosmo pages as plain data (``*_page_data``), from small hand-made frames; rendering
tests that what a release reported stays text, escaped once, and inside its table cell."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from matrix.families.cosmo.checks import CHECKS, STANDIN_VERSION
from matrix.families.cosmo.pages import (
    closed_set_rows,
    family_page,
    family_page_data,
    standin_log,
    version_page,
    version_page_data,
)
from matrix.families.registry import FAMILIES
from matrix.store.dataset import Sources
from matrix.store.results import frame_of
from tests.conftest import make_row

FAMILY = FAMILIES["cosmo-python"]
EVIL = "<script>alert(1)</script>"


def check(sdk: str, name: str, outcome: str = "kept", probe: str = "identity", **fields: Any) -> Any:
    return make_row(sdk, STANDIN_VERSION, outcome, family=FAMILY.name, probe=probe, mutation=name, **fields)


def test_family_page_says_how_each_release_was_probed() -> None:
    frame = frame_of([check("0.10.0", "identity.exports", detail={"path": "websocket", "api": {"client": "B"}}),
                      check("0.10.0", "identity.sdk-block", detail={"path": "websocket", "api": {"client": "A"}}),
                      check("0.9.0", "identity.exports")])
    page = family_page_data(frame, FAMILY, {"0.10.0": "2026-09-24T10:00:00"})
    assert (page.releases, page.checks, page.cells) == (2, len(CHECKS), 3)
    old, new = page.probed
    assert (old.sdk, old.released, old.paths, old.clients) == ("0.9.0", "?", [], [])
    assert (new.released, new.paths, new.clients) == ("2026-09-24", ["websocket"], ["A", "B"])
    assert [p for p, _ in page.paths] == ["websocket"]


def test_grids_split_tolerance_from_identity_and_leave_unmeasured_cells_empty() -> None:
    frame = frame_of([check("1.0.0", "frame.malformed", "surfaced", probe="tolerance", error_message="bad\nframe"),
                      check("1.0.0", "identity.exports"), check("0.9.0", "identity.sdk-block", "broken"),
                      check("1.0.0", "set.transcript.role", "lost", probe="tolerance")])
    page = family_page_data(frame, FAMILY, {})
    names = [c.name for c in page.tolerance.checks]
    assert names == [c.name for c in CHECKS if c.probe == "tolerance"] + ["set.transcript.role"]
    assert [c.name for c in page.identity.checks] == [c.name for c in CHECKS if c.probe == "identity"]
    assert [r.sdk for r in page.identity.rows] == ["0.9.0", "1.0.0"]
    exports = [c.name for c in page.identity.checks].index("identity.exports")
    assert page.identity.rows[0].cells[exports] is None
    assert page.tolerance.rows[1].cells[0] is None  # frame.unknown-type: not measured
    cell = page.tolerance.rows[1].cells[names.index("frame.malformed")]
    assert cell is not None and cell.summary == "bad" and cell.link == "cosmo-python/sdk-1.0.0.md#frame-malformed"


def test_strict_findings_list_what_was_refused_only_for_a_verdict() -> None:
    refused = [{"message": "session-config", "unknown": ["extra"]}, {"message": "send-text", "unknown": [],
                                                                     "reason": "not JSON"}]
    frame = frame_of([check("1.0.0", "strict.session-start", "broken", probe="strictness",
                            detail={"rejected": refused, "application_told": "x" * 400}),
                      check("1.0.0", "strict.data-channel", "harness-error", probe="strictness"),
                      check("0.9.0", "identity.exports")])
    (row,) = family_page_data(frame, FAMILY, {}).strict  # 0.9.0 has neither strictness check
    assert row.session_start is not None and row.session_start.rejected is not None
    assert [(f.message, f.keys) for f in row.session_start.rejected] == [("session-config", "extra"),
                                                                         ("send-text", "not JSON")]
    assert row.data_channel is not None and row.data_channel.rejected is None
    assert len(row.told) == 300


def test_promises_are_those_measured_each_with_every_release_by_version() -> None:
    frame = frame_of([check("0.10.0", "identity.exports"), check("0.9.0", "identity.exports", "broken")])
    (promise,) = family_page_data(frame, FAMILY, {}).promises
    assert promise.name == "identity.exports" and promise.anchor == "identity-exports"
    assert [(v.sdk, v.outcome) for v in promise.verdicts] == [("0.9.0", "broken"), ("0.10.0", "kept")]
    assert promise.verdicts[0].link == "cosmo-python/sdk-0.9.0.md#identity-exports"


def test_closed_sets_link_their_check_on_the_family_page_and_on_the_release_page() -> None:
    declared = {"closed_sets": [{"where": "frame", "name": "error", "path": "code", "kind": "Enum",
                                 "values": ["a", "b"], "unknown": "refused"},
                                {"where": "rest", "name": "odd", "path": "x[]", "kind": "Literal"}]}
    frame = frame_of([check("1.0.0", "identity.exports", sdk_declared=declared)])
    named, unprobed = closed_set_rows(frame, FAMILY.name)
    assert (named.check, named.link, named.values) == ("enum.error-code", "cosmo-python/sdk-1.0.0.md#enum-error-code",
                                                      "a, b")
    assert named.unknown == "refused (ValueError)"
    assert unprobed.check is None and unprobed.unknown == "decided by the model (Literal or tag)"
    assert closed_set_rows(frame, FAMILY.name, own_page=True)[0].link == "#enum-error-code"


def test_version_page_has_the_evidence_of_each_measured_check(tmp_path: Path) -> None:
    frame = frame_of([check("1.0.0", "identity.exports", error_message="  ", seconds=1.5,
                            detail={"path": "websocket", "traceback": "hidden", "exports": {"SDK_NAME": "n"}}),
                      check("0.9.0", "identity.sdk-block")])
    page = version_page_data(frame, FAMILY, "1.0.0", Sources(tmp_path))
    assert (page.package, page.paths) == ("cosmo-ai-sdk", "websocket")
    assert [v.check for v in page.verdicts] == [c.name for c in page.checks] == ["identity.exports"]
    (evidence,) = page.checks
    assert evidence.error == "" and evidence.seconds == "1.5"
    assert json.loads(evidence.evidence) == {"exports": {"SDK_NAME": "n"}}
    assert evidence.log.text == "" and evidence.log.absent == "No stand-in log for this check."


def test_the_stand_in_log_drops_headers_and_stops_after_eighty_entries(tmp_path: Path) -> None:
    lines = [json.dumps({"n": i, "headers": {"a": "b"}}) for i in range(85)]
    (tmp_path / "log.jsonl").write_text("\n".join(lines) + "\n")
    log = standin_log(Sources(tmp_path), "log.jsonl")
    shown = log.text.splitlines()
    assert shown[0] == '{"n": 0}' and shown[79] == '{"n": 79}' and shown[80] == "… 5 more entries"
    assert standin_log(Sources(tmp_path), "gone.jsonl").absent == "The stand-in log of this check is missing."


def test_what_a_release_reported_is_text_escaped_once_and_stays_in_its_cell(tmp_path: Path) -> None:
    (tmp_path / "log.jsonl").write_text(json.dumps({"content": EVIL}) + "\n")
    frame = frame_of([check("1.0.0", "identity.exports", "broken", error_message=f"a|b {EVIL}",
                            detail={"standin_log": "log.jsonl"})])
    for page in (family_page(frame, FAMILY, {}), version_page(frame, FAMILY, "1.0.0", Sources(tmp_path))):
        assert EVIL not in page and "&amp;" not in page
        assert "| a&#124;b &lt;script&gt;alert(1)&lt;/script&gt; |" in page
