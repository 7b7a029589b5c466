"""The drift, compare and "What changed" pages as plain data (no HTML involved), and that the
templates drawing them keep third-party text as text."""

from __future__ import annotations

import pandas as pd

from matrix.answers.changes import Broken, ReleaseNote
from matrix.families.copilot.compare_pages import (
    FamilyCell,
    SameNumberCell,
    SameNumberRow,
    ToleranceRow,
    compare_page,
    compare_page_data,
)
from matrix.families.copilot.drift import DriftFinding, SemverFinding
from matrix.families.copilot.drift_page import Disagreement, SdkDeclares, drift_page, drift_page_data
from matrix.families.copilot.family import CopilotFamily
from matrix.site.changes_page import MoveRow, Pending, changes_page, changes_page_data
from matrix.site.sitedata import site_view
from matrix.store.changelog import Entry, Move
from matrix.store.results import frame_of
from tests.conftest import make_row

EVIL = '<script>alert(1)</script> | "x"\nsecond line'
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"


def _drift_frame() -> pd.DataFrame:
    """copilot-python: SDK 1.0.0 accepts protocols 2..3, SDK 1.0.1 exactly 3; CLI 0.0.1 reports
    none, 1.0.7 reports 2, 1.0.60 reports 3, 1.0.61 was never measured (infra error)."""
    window = {"SDK_PROTOCOL_VERSION": 3, "MIN_PROTOCOL_VERSION": 2, "bundled_cli": True}
    exact = {"SDK_PROTOCOL_VERSION": 3, "CLI_VERSION": "1.0.60"}
    rows = [make_row("1.0.0", "0.0.1", "refused", error_message="the CLI does not report a protocol version",
                     sdk_declared=window),
            make_row("1.0.0", "1.0.7", "compatible", protocol=2, sdk_declared=window),
            make_row("1.0.0", "1.0.60", "compatible", protocol=3, sdk_declared=window),
            make_row("1.0.0", "1.0.61", "infra-error", sdk_declared=window),
            make_row("1.0.1", "1.0.7", "hang", error_message=EVIL, sdk_declared=exact),
            make_row("1.0.1", "1.0.60", "compatible", protocol=3, sdk_declared=exact),
            # A stand-in family is no release manager's concern: not on the page.
            make_row("1.0.0", "1.0.7", "hang", family="cosmo-python", sdk_declared=window)]
    return frame_of(rows)


def test_drift_counts_what_was_predicted_and_groups_the_disagreements() -> None:
    page = drift_page_data(site_view(_drift_frame()), CopilotFamily)
    assert [f.family for f in page.families] == ["copilot-python"]
    fam = page.families[0]
    # The infra error is not predicted; of the rest only the hang contradicts its declarations.
    assert (fam.predicted, fam.agree, fam.disagree) == (5, 4, 1)
    assert fam.cli_protocols == [("0.0.1", "none"), ("1.0.7", "2"), ("1.0.60", "3")]
    assert fam.sdks == [SdkDeclares("1.0.0", "2..3", "bundles one"), SdkDeclares("1.0.1", "exactly 3", "1.0.60")]
    finding = DriftFinding("copilot-python", "1.0.1", "1.0.7", "refused", "SDK requires exactly 3, CLI reports 2",
                           "hang", EVIL.splitlines()[0])
    assert fam.disagreements == [Disagreement(
        "refused", "hang", "a refusal was due, but the SDK never noticed the CLI had gone: it waited", [finding])]


def test_drift_names_a_patch_release_that_broke_a_working_pair() -> None:
    fam = drift_page_data(site_view(_drift_frame()), CopilotFamily).families[0]
    assert fam.semver == [SemverFinding("copilot-python", "sdk", "1.0.0", "1.0.1", "patch", "1.0.7", "compatible",
                                        "hang", EVIL.splitlines()[0])]


def test_drift_page_keeps_evidence_as_text_inside_its_table_cell() -> None:
    text = drift_page(site_view(_drift_frame()), CopilotFamily)
    assert "<script>" not in text and "&amp;lt;" not in text  # escaped once, not twice
    # A "|" in the evidence would end the Markdown table's cell.
    assert f"| {ESCAPED} &#124; &#34;x&#34; |" in text
    assert "**Predicted refused, measured" in text and "(1 cells): a refusal was due" in text


def _compare_frame() -> pd.DataFrame:
    rows = [make_row("1.0.0", "1.0.60", "compatible"), make_row("0.3.0", "1.0.60", "crashed", error_message=EVIL),
            make_row("1.0.0", "1.0.7", "refused"),
            make_row("1.0.0", "1.0.60", "compatible", family="copilot-node"),
            make_row("0.3.0", "1.0.60", "compatible", family="copilot-node"),
            make_row("0.3.0", "0.0.402", "compatible", family="copilot-node"),
            make_row("1.0.0", "1.0.7", "refused", family="copilot-node"),
            make_row("1.0.0", "1.0.60", "lost", probe="tolerance", mutation="event.unknown"),
            make_row("1.0.0", "1.0.60", "surfaced", family="copilot-node", probe="tolerance", mutation="event.unknown")]
    return frame_of(rows)


FAMILIES = ["copilot-node", "copilot-python"]


def test_compare_summarises_each_family_per_cli_version() -> None:
    page = compare_page_data(site_view(_compare_frame()), "@github/copilot", FAMILIES, "x.png")
    assert (page.clis, [r.cli for r in page.rows]) == (3, ["0.0.402", "1.0.7", "1.0.60"])
    only_node, _, both = page.rows
    assert only_node.cells == [FamilyCell("copilot-node", "../versions/copilot-node/cli-0.0.402.md", ["0.3.0"], 1,
                                          [("compatible", 1)]), None]
    node, python = both.cells
    assert node is not None and (node.works, node.measured, node.tally) == (["0.3.0", "1.0.0"], 2, [("compatible", 2)])
    assert python is not None and (python.works, python.measured) == (["1.0.0"], 2)
    assert sorted(python.tally) == [("compatible", 1), ("crashed", 1)]


def test_compare_lines_up_tolerance_rules_and_shared_version_numbers() -> None:
    page = compare_page_data(site_view(_compare_frame()), "@github/copilot", FAMILIES, "x.png")
    assert page.tolerance == [ToleranceRow("event.unknown", [[("surfaced", 1)], [("lost", 1)]])]
    assert page.shared == ["0.3.0", "1.0.0"]
    # Only 0.3.0 against 1.0.60 differs; 1.0.0 did the same in both families.
    assert page.differ == [SameNumberRow("0.3.0", "1.0.60", [
        SameNumberCell("copilot-node", "../versions/copilot-node/sdk-0.3.0.md", "compatible", ""),
        SameNumberCell("copilot-python", "../versions/copilot-python/sdk-0.3.0.md", "crashed", EVIL[:120])])]


def test_compare_without_tolerance_cells_or_shared_numbers_says_so() -> None:
    frame = frame_of([make_row("1.0.0", "1.0.60"), make_row("0.3.0", "1.0.60", family="copilot-node")])
    page = compare_page_data(site_view(frame), "@github/copilot", FAMILIES, "x.png")
    assert (page.tolerance, page.shared, page.differ) == ([], [], [])
    text = compare_page(site_view(frame), "@github/copilot", FAMILIES, "x.png")
    assert "No SDK version number was measured in more than one family." in text and "Tolerance" not in text


def test_compare_page_keeps_error_messages_as_text() -> None:
    text = compare_page(site_view(_compare_frame()), "@github/copilot", FAMILIES, "x.png")
    assert "<script>" not in text and "&amp;lt;" not in text
    assert f"{ESCAPED} | &#34;x&#34;" in text  # an HTML cell: a "|" is only a character there
    assert "1 cells differ." in text


PAGES = {"versions/copilot-python/cli-2.1.0.md"}


def _entry() -> tuple[Entry, list[ReleaseNote]]:
    moved = [Move(family="copilot-python", probe="handshake", sdk_version="1.0.0", cli_version="2.0.0",
                  old="refused", new="compatible"),
             Move(family="copilot-python", probe="tolerance", mutation="event.unknown", sdk_version="1.0.0",
                  cli_version="2.0.0", old="surfaced", new="lost", new_error=EVIL)]
    entry = Entry(at="2026-11-30T10:00:00+00:00", added={"copilot-python": {"cli": ["2.1.0"], "sdk": ["1.0.2"]}},
                  cells_added=5, cells_measured_again=2, moved=moved)
    cli = ReleaseNote("copilot-python", "cli", "@github/copilot", "2.1.0", "github-copilot-sdk", "2.0.0",
                      works_with=['"github-copilot-sdk>=1.0.1"'],
                      broke=[Broken("1.0.0", "handshake", "", "compatible", "refused", "SDK expects 2\nmore")])
    sdk = ReleaseNote("copilot-python", "sdk", "github-copilot-sdk", "1.0.2", "@github/copilot", None,
                      outcomes={"compatible": 2})
    return entry, [cli, sdk]


def test_a_change_lists_its_releases_and_moves_regressions_first() -> None:
    page = changes_page_data(frame_of([make_row()]), [_entry()], None, PAGES)
    assert page.pending is None  # no dataset to differ from
    (section,) = page.changes
    assert (section.date, section.cells_added, section.cells_measured_again) == ("2026-11-30", 5, 2)
    assert section.regressions == 2  # the cell 2.1.0 broke and the tolerance move
    cli, sdk = section.releases
    assert (cli.link, cli.works, cli.previous) == ("versions/copilot-python/cli-2.1.0/", ["github-copilot-sdk>=1.0.1"],
                                                   "2.0.0")
    assert cli.broke == ["handshake with github-copilot-sdk 1.0.0: compatible → refused (SDK expects 2)"]
    assert (sdk.link, sdk.works, sdk.broke, sdk.previous) == (None, ["measured: 2 compatible"], [], None)
    assert [(m.kind, m.what, m.error) for m in section.moved] == [
        ("regression", "tolerance event.unknown", EVIL.splitlines()[0]), ("improvement", "handshake", "")]


def test_cells_measured_here_and_not_folded_yet_are_pending() -> None:
    dataset = frame_of([make_row("1.0.0", "2.0.0"), make_row("1.0.1", "2.0.0")])
    local = frame_of([make_row("1.0.0", "2.0.0", "hang", error_message=EVIL), make_row("1.0.1", "2.0.0"),
                      make_row("1.0.2", "2.0.0")])
    assert changes_page_data(dataset, [], dataset, PAGES).pending is None  # nothing differs
    pending = changes_page_data(local, [], dataset, PAGES).pending
    assert pending == Pending(new=1, moved=[MoveRow("regression", "copilot-python", "handshake", "1.0.0", "2.0.0",
                                                    "compatible", "hang", EVIL.splitlines()[0])])
    text = changes_page(local, [], dataset, PAGES)
    assert "1 new cells and 1 cells whose outcome differs from the dataset's" in text
    assert text.endswith("The dataset has recorded no change yet.\n")


def test_changes_page_keeps_error_messages_as_text() -> None:
    dataset = frame_of([make_row("1.0.0", "2.0.0")])
    local = frame_of([make_row("1.0.0", "2.0.0", "hang", error_message=EVIL)])
    for text in (changes_page(local, [_entry()], dataset, PAGES), changes_page(dataset, [_entry()], None, PAGES)):
        assert "<script>" not in text and "&amp;lt;" not in text
        assert f'<td class="cm-msg">{ESCAPED} | &#34;x&#34;</td>' in text
    assert '<a href="../versions/copilot-python/cli-2.1.0/">@github/copilot 2.1.0</a>' in text
