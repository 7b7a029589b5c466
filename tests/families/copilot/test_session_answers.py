"""A pair works only where its session works too (where one was measured): ranges, pins and
can-i-ship read the session cell of each pair, and can-i-ship says which step failed."""

from __future__ import annotations

from matrix.answers.analysis import caveat_ranges, rows_of, working_ranges
from matrix.answers.ship import can_i_ship
from matrix.families.registry import cells_frame
from matrix.site.api import sdk_release
from matrix.site.api_v2 import cli_release as cli_release_v2
from matrix.site.api_v2 import sdk_release as sdk_release_v2
from matrix.site.sitedata import site_view
from tests.conftest import make_row

CLIS = ["1.0.1", "1.0.2", "1.0.3", "1.0.4"]


def frame(sessions: dict[str, tuple[str, str | None, str | None]]):  # type: ignore[no-untyped-def]
    """Handshakes of SDK 1.0.0 with every CLI, all compatible; ``sessions``: cli -> (outcome,
    error type, error message) of its session cell."""
    rows = [make_row("1.0.0", c, "compatible", protocol=3, harness_version="5") for c in CLIS]
    rows += [make_row("1.0.0", c, outcome, probe="session", error_type=etype, error_message=msg)
             for c, (outcome, etype, msg) in sessions.items()]
    return cells_frame(rows)


def spans(ranges):  # type: ignore[no-untyped-def]
    return [(r.first, r.last) for r in ranges]


def test_a_pair_whose_session_fails_is_no_longer_in_the_working_range() -> None:
    f = rows_of(frame({"1.0.2": ("crashed", "ValueError", "tool: 'x' is not a valid SessionEventType"),
                       "1.0.3": ("surfaced", "UnknownEvent", "delivered as the SDK's unknown event: model.x")}))
    # 1.0.1 and 1.0.4: no session measured (the handshake's verdict stands); 1.0.3: surfaced works.
    assert spans(working_ranges(f, "copilot-python", sdk="1.0.0")) == [("1.0.1", "1.0.1"), ("1.0.3", "1.0.4")]


def test_a_session_that_left_the_cli_running_is_the_caveat() -> None:
    f = rows_of(frame({"1.0.2": ("degraded", "LeftRunning", "left node copilot running after stop()")}))
    assert spans(working_ranges(f, "copilot-python", sdk="1.0.0")) == [("1.0.1", "1.0.1"), ("1.0.3", "1.0.4")]
    assert spans(caveat_ranges(f, "copilot-python", sdk="1.0.0")) == [("1.0.2", "1.0.2")]


def test_can_i_ship_says_no_and_which_step_of_the_session_failed() -> None:
    f = frame({"1.0.2": ("hang", "TimeoutError", "tool: turn:tool did not settle within 35s (harness deadline)")})
    decision = can_i_ship(f, "copilot-python", sdk="1.0.0", against="all")
    assert decision.answer == "no"
    judged = {c.cli_version: c for c in decision.cells}
    assert judged["1.0.2"].verdict == "no" and "session hang: tool:" in judged["1.0.2"].reason
    assert judged["1.0.1"].verdict == "yes"


def test_a_session_that_measured_nothing_leaves_the_handshakes_verdict() -> None:
    f = rows_of(frame({"1.0.2": ("infra-error", "InfraError", "the model stand-in could not listen"),
                       "1.0.3": ("not-applicable", "NoLocalRoute", "no model call reached the stand-in"),
                       "1.0.4": ("lost", "EventLost", "the CLI sent session.start, which never reached it")}))
    assert spans(working_ranges(f, "copilot-python", sdk="1.0.0")) == [("1.0.1", "1.0.3")]


def test_api_v1_has_the_session_in_its_working_ranges_and_in_no_list_of_its_own() -> None:
    f = frame({"1.0.2": ("crashed", "ValueError", "tool: 'x' is not a valid SessionEventType")})
    doc = sdk_release(site_view(f), "copilot-python", "1.0.0")
    assert [(s.first, s.last) for s in doc.works_with_spans] == [("1.0.1", "1.0.1"), ("1.0.3", "1.0.4")]
    assert doc.tolerance == [] and [c.other for c in doc.cells] == CLIS  # v1's shape: handshake cells only


def test_api_v2_gives_each_pair_cell_its_session_its_payload_and_whether_it_works() -> None:
    f = cells_frame([
        make_row("1.0.0", "1.0.1", "degraded", protocol=3, harness_version="5", error_type="LeftRunning",
                 error_message="left copilot running after stop()", stops=[0.1, None, 0.2, None, 0.1],
                 leaked=["copilot"]),
        make_row("1.0.0", "1.0.2", "compatible", protocol=3, harness_version="5", stops=[0.1] * 5),
        make_row("1.0.0", "1.0.2", "hang", probe="session", error_type="TimeoutError",
                 error_message="reply: turn:reply did not settle\nmore"),
        make_row("1.0.0", "1.0.2", "passed", probe="tolerance", mutation="event.unknown-type")])
    view = site_view(f)
    doc = sdk_release_v2(view, "copilot-python", "1.0.0")
    first, second = doc.cells
    assert (first.other, first.works, first.works_with_caveat) == ("1.0.1", False, True)
    assert first.payload["stops"] == [0.1, None, 0.2, None, 0.1] and first.payload["leaked"] == ["copilot"]
    assert first.payload["protocol"] == 3 and first.error_type == "LeftRunning"
    assert first.refinements[0].outcome is None  # no session measured for that pair
    assert (second.works, second.works_with_caveat) == (False, False)  # its session hangs
    session = second.refinements[0]
    assert (session.probe, session.outcome, session.error) == ("session", "hang", "reply: turn:reply did not settle")
    assert [(c.probe, c.check, c.other) for c in doc.checks] == [("tolerance", "event.unknown-type", "1.0.2")]
    assert doc.pair_probe == "handshake"
    assert doc.caveat and doc.works_with == [] and doc.works_with_caveat == ["@github/copilot@1.0.1"]
    cli = cli_release_v2(view, "copilot-python", "1.0.2")
    assert [c.refinements[0].outcome for c in cli.cells] == ["hang"] and cli.does_not_start is None
