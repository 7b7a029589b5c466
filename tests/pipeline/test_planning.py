from __future__ import annotations

from matrix.families.copilot.python.contract import judge
from matrix.families.copilot.shim import CONTROL_DESCRIPTIONS, RULES, control_of
from matrix.model import Row
from matrix.pipeline.planning import Resolved
from matrix.pipeline.runner import NO_CLI
from tests.conftest import make_row

row = make_row


RESOLVED = Resolved("copilot-python", ["0.1", "0.2", "0.3"], ["1.0.2", "1.0.10", "1.0.11"],
                    ["handshake", "tolerance", "contract"], [], [])
ROWS = [row("0.1", "1.0.2", "compatible"), row("0.1", "1.0.10", "compatible"), row("0.1", "1.0.11", "refused"),
        row("0.2", "1.0.2", "launch-failed"), row("0.2", "1.0.10", "hang"), row("0.3", "1.0.2", "refused"),
        row("0.3", "1.0.10", "launch-failed"), row("0.3", "1.0.11", "compatible"),
        row("0.3", "9.9.9", "compatible")]  # a CLI outside this selection is not a candidate


def test_tolerance_runs_its_controls_first_against_the_newest_compatible_cli_in_the_selection() -> None:
    cells = RESOLVED.cells("tolerance", ROWS)
    targets = {(c.sdk_version, c.cli_version, c.mutation) for c in cells if c.cli_version != NO_CLI}
    assert targets == {(s, c, m) for s, c in (("0.1", "1.0.10"), ("0.3", "1.0.11")) for m in CONTROL_DESCRIPTIONS}
    # 0.2 has no compatible CLI: its rules go to NO_CLI and are recorded as not-applicable.
    assert {c.mutation for c in cells if c.cli_version == NO_CLI} == set(RULES)
    assert {c.sdk_version for c in cells if c.cli_version == NO_CLI} == {"0.2"}


def _control(sdk: str, cli: str, name: str, outcome: str) -> Row:
    return row(sdk, cli, outcome, probe="tolerance", mutation=name, error_message=f"{outcome} on {cli}")


def test_a_rule_is_measured_only_where_its_control_passed_and_a_failed_control_moves_to_the_next_cli() -> None:
    history = [r for r in RULES if control_of(r) == "history.control"]
    rows = [*ROWS, _control("0.1", "1.0.10", "result.control", "passed"),
            _control("0.1", "1.0.10", "event.control", "passed"),
            _control("0.1", "1.0.10", "history.control", "failed")]
    cells = [c for c in RESOLVED.cells("tolerance", rows) if c.sdk_version == "0.1"]
    by_cli = {(c.cli_version, c.mutation) for c in cells}
    assert all(("1.0.10", r) in by_cli for r in RULES if r not in history)
    # The history rules wait: their control runs next against the next newest CLI 0.1 works with.
    assert ("1.0.2", "history.control") in by_cli and not any(m in history for _, m in by_cli)
    # It fails there too, and there is no other: the rules are not-applicable, saying why.
    rows.append(_control("0.1", "1.0.2", "history.control", "failed"))
    cells = [c for c in RESOLVED.cells("tolerance", rows) if c.sdk_version == "0.1" and c.mutation in history]
    assert {c.cli_version for c in cells} == {NO_CLI}
    assert all("fails against every CLI release this SDK release works with (2, newest first: 1.0.10: failed on "
               "1.0.10; 1.0.2: failed on 1.0.2)" in c.why for c in cells)


def test_a_control_that_passed_keeps_its_cli_when_a_newer_one_is_released() -> None:
    rows = [*ROWS, row("0.1", "1.0.11", "compatible"),
            *(_control("0.1", "1.0.10", name, "passed") for name in CONTROL_DESCRIPTIONS),
            *(row("0.1", "1.0.10", "ignored", probe="tolerance", mutation=r) for r in RULES)]
    cells = [c for c in RESOLVED.cells("tolerance", rows) if c.sdk_version == "0.1"]
    assert {c.cli_version for c in cells} == {"1.0.10"}


def test_contract_runs_against_the_newest_refused_or_launch_failed_cli() -> None:
    assert {(c.sdk_version, c.cli_version) for c in RESOLVED.cells("contract", ROWS)} == {
        ("0.1", "1.0.11"), ("0.2", "1.0.2"), ("0.3", "1.0.10")}


def test_probes_not_selected_plan_nothing() -> None:
    only = Resolved("copilot-python", ["0.1"], ["1.0.2"], ["handshake"], [], [])
    assert only.cells("tolerance", ROWS) == [] and only.cells("contract", ROWS) == []


def test_contract_judgement() -> None:
    kept = judge({"queued_call": {"ok": False, "error": "x"}, "queued_settled_after_start_s": 0.1,
                  "cli_alive_after_failure": []}, [], [])
    assert kept["cli_terminated"] and kept["queued_call_rejected"] and kept["no_files_written"]
    broken = judge({"queued_call": {"ok": True}, "queued_settled_after_start_s": 0.0,
                    "cli_alive_after_failure": ["node copilot"]}, ["node copilot"], [".copilot/config.json"])
    assert not broken["cli_terminated"] and not broken["queued_call_rejected"] and not broken["no_files_written"]
    slow = judge({"queued_call": {"ok": False}, "queued_settled_after_start_s": 9.0}, [], [])
    assert not slow["queued_call_rejected"]


def test_a_stand_in_family_plans_every_check_of_its_probes_for_every_version() -> None:
    from matrix.families.cosmo.checks import STANDIN_VERSION, checks_of

    cosmo = Resolved("cosmo-python", ["0.1.0", "0.6.1"], [STANDIN_VERSION], ["tolerance", "strictness"], [], [])
    cells = cosmo.cells("stand-in", [])
    names = {c.name for p in ("tolerance", "strictness") for c in checks_of(p)}
    assert {(c.sdk_version, c.mutation) for c in cells} == {(s, n) for s in ("0.1.0", "0.6.1") for n in names}
    assert {c.cli_version for c in cells} == {STANDIN_VERSION}
    # It has no handshake, so nothing is planned from handshake verdicts.
    assert all(cosmo.cells(p, ROWS) == [] for p in ("handshake", "tolerance", "contract"))
    assert RESOLVED.cells("stand-in", []) == []


def test_closed_sets_a_release_declares_become_its_own_checks() -> None:
    from matrix import HARNESS_VERSION
    from matrix.families.cosmo.checks import STANDIN_VERSION

    def declaring(sdk: str, sets: list[dict[str, str]], harness: str = HARNESS_VERSION) -> Row:
        return Row(family="cosmo-python", sdk_version=sdk, cli_version=STANDIN_VERSION, probe="tolerance",
                   mutation="frame.extra-field", outcome="ignored", sdk_declared={"closed_sets": sets},
                   harness_version=harness, measured_at="2026-11-30T00:00:00+00:00")

    role = {"where": "frame", "name": "transcript", "path": "role"}
    code = {"where": "frame", "name": "error", "path": "code"}  # the named enum.error-code probes it
    rest = {"where": "rest", "name": "mint", "path": "kind"}  # no stand-in answer carries it
    stale = {"where": "frame", "name": "turn-complete", "path": "role"}
    rows = [declaring("0.6.1", [role, code, rest]), declaring("0.6.1", [stale], harness="0"),
            declaring("0.1.0", [])]
    cosmo = Resolved("cosmo-python", ["0.1.0", "0.6.1"], [STANDIN_VERSION], ["tolerance"], [], [])
    assert [(c.sdk_version, c.mutation, c.probe) for c in cosmo.cells("closed sets", rows)] == [
        ("0.6.1", "set.transcript.role", "tolerance")]
    assert Resolved("cosmo-python", ["0.6.1"], [STANDIN_VERSION], ["identity"], [], []).cells("closed sets", rows) == []


def test_tolerance_keeps_the_cli_its_history_was_measured_with() -> None:
    earlier = Row(family="copilot-python", sdk_version="0.1", cli_version="1.0.2", probe="tolerance",
                  mutation="event.extra-field", outcome="surfaced")
    cells = RESOLVED.cells("tolerance", [*ROWS, earlier])
    assert {c.cli_version for c in cells if c.sdk_version == "0.1"} == {"1.0.2"}  # not the newer 1.0.10


def test_rules_this_release_never_failed_are_planned_together_by_kind_and_the_others_alone() -> None:
    rows = [*ROWS, *(_control("0.1", "1.0.10", name, "passed") for name in CONTROL_DESCRIPTIONS),
            row("0.1", "1.0.2", "fatal", probe="tolerance", mutation="history.unknown-enum-value"),
            row("0.1", "1.0.2", "ignored", probe="tolerance", mutation="history.extra-field")]
    cells = {c.mutation: c for c in RESOLVED.cells("tolerance", rows) if c.sdk_version == "0.1"}
    assert cells["history.unknown-enum-value"].together == ()  # it failed before: alone
    assert cells["history.extra-field"].together == ("history.unknown-type", "history.extra-field")
    events = tuple(r for r in RULES if control_of(r) == "event.control")
    assert all(cells[r].together == events for r in events)
    assert all(cells[c].together == () for c in CONTROL_DESCRIPTIONS)  # a control is always alone
