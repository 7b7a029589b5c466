"""A family's session grid and events page, from session rows: each cell as its outcome reads,
each event type with the first CLI that sent it and what every SDK release did with it."""

from __future__ import annotations

from matrix.families.copilot.session_pages import event_rows, session_label, session_pages
from matrix.families.registry import FAMILIES, cells_frame
from matrix.site.sitedata import site_view
from tests.conftest import make_row


def session(sdk: str, cli: str, outcome: str, events: dict[str, str], **kw: object):  # type: ignore[no-untyped-def]
    return make_row(sdk, cli, outcome, probe="session", route="provider", events=events,
                    turns=[{"name": "reply", "ok": True, "seconds": 0.2, "held": True, "why": ""}], **kw)


ROWS = [
    session("0.1.10", "1.0.60", "crashed", {"session.start": "typed", "model.call_start": "missed"},
            error_message="reply: 'model.call_start' is not a valid SessionEventType"),
    session("0.1.11", "1.0.60", "lost", {"session.start": "typed", "model.call_start": "missed"}),
    session("0.2.0", "1.0.60", "surfaced", {"session.start": "typed", "model.call_start": "unknown"}),
    session("0.2.0", "1.0.48", "compatible", {"session.start": "typed"}),
    session("1.0.0", "1.0.60", "compatible", {"session.start": "typed", "model.call_start": "typed"}),
]


def test_an_event_type_says_which_cli_first_sent_it_and_what_each_sdk_did() -> None:
    by = {e.type: e for e in event_rows([r.model_dump() | r.payload for r in ROWS])}
    assert by["model.call_start"].first_cli == "1.0.60" and by["session.start"].first_cli == "1.0.48"
    assert dict(by["model.call_start"].by_delivery) == {"fails": "0.1.10", "missed": "0.1.11", "unknown": "0.2.0",
                                                         "typed": "1.0.0"}
    assert dict(by["session.start"].by_delivery) == {"typed": "0.1.10–1.0.0"}  # one run of consecutive releases


def test_an_event_missed_only_after_close_is_its_own_word_below_missed() -> None:
    rows = [session("1.0.0", "1.0.87", "compatible", {"session.background_tasks_changed": "missed after close"}),
            session("1.0.0", "1.0.88", "surfaced", {"session.background_tasks_changed": "unknown"}),
            session("1.0.5", "1.0.88", "lost", {"session.background_tasks_changed": "missed"}),
            session("1.0.5", "1.0.87", "compatible", {"session.background_tasks_changed": "missed after close"})]
    by = {e.type: e for e in event_rows([r.model_dump() | r.payload for r in rows])}
    assert dict(by["session.background_tasks_changed"].by_delivery) == {"missed": "1.0.5",
                                                                         "missed after close": "1.0.0"}


def test_the_session_grid_and_events_page_of_a_family() -> None:
    view = site_view(cells_frame(ROWS), {}, "now")
    pages = session_pages(view, FAMILIES["copilot-python"])
    grid, events = pages["matrix/copilot-python-session.md"], pages["matrix/copilot-python-events.md"]
    assert "5 sessions" in grid and "#session-cli-1.0.60" in grid and "`provider` 5" in grid
    assert "<code>model.call_start</code>" in events and "0.1.11" in events
    assert session_label({"outcome": "compatible"}) == "" and session_label({"outcome": "surfaced"}) == "S"
    assert session_pages(site_view(cells_frame(ROWS[:0]), {}, "now"), FAMILIES["copilot-python"]) == {}
