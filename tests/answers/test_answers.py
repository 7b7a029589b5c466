"""can-i-ship, pins, diff, drift, semver findings, and bisect, on stored
result fixtures that include unknown and infra cells."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from matrix.answers.bisect import bisect_gap, gaps
from matrix.answers.diff import diff_frames
from matrix.answers.ship import can_i_ship
from matrix.commands.cli import main
from matrix.families.copilot.drift import NO_PROTOCOL, cli_protocols, drift, predict, semver_findings
from matrix.store.results import Store, load_frame, save_releases
from tests.conftest import ROOT, make_row

EXACT_2 = {"SDK_PROTOCOL_VERSION": 2}
RANGE_2_3 = {"SDK_PROTOCOL_VERSION": 3, "MIN_PROTOCOL_VERSION": 2}
# (sdk, cli, outcome, protocol, message)
CELLS = [
    ("1.0.0", "2.0.0", "compatible", 3, None),
    ("1.0.0", "2.1.0", "compatible", 3, None),
    ("1.0.0", "2.2.0", "infra-error", None, "registry timed out"),
    ("1.0.1", "2.0.0", "compatible", 3, None),
    ("1.0.1", "2.1.0", "crashed", None, "invalid literal for int()"),
    ("1.0.1", "2.2.0", "harness-error", None, "agent could not drive it"),
    ("0.9.0", "2.0.0", "refused", None, "SDK expects version 2, but server reports version 3"),
    ("0.9.0", "1.9.0", "compatible", 2, None),
    ("0.9.0", "2.1.0", "uninstallable", None, "gone"),
]


def store(tmp_path: Path, cells: list[tuple] = CELLS, name: str = "r") -> Path:
    s = Store(tmp_path / name)
    for sdk, cli, outcome, proto, msg in cells:
        decl = EXACT_2 if sdk == "0.9.0" else RANGE_2_3
        s.append(make_row(sdk, cli, outcome, protocol=proto, error_message=msg, sdk_declared=decl,
                          harness_version="t"))
    return tmp_path / name


@pytest.fixture
def frame(tmp_path: Path):
    f, _ = load_frame(store(tmp_path))
    return f


def test_ship_an_sdk_against_the_supported_clis(frame) -> None:
    # Supported: what the newest SDK (1.0.1) works with: only 2.0.0. 1.0.0 works there.
    d = can_i_ship(frame, "copilot-python", sdk="1.0.0")
    assert (d.answer, d.exit_code, [c.cli_version for c in d.cells]) == ("yes", 0, ["2.0.0"])


def test_infra_and_harness_cells_are_unknown_never_yes(frame) -> None:
    d = can_i_ship(frame, "copilot-python", sdk="1.0.0", cli="2.2.0")
    assert d.answer == "unknown" and d.exit_code == 2 and "not a verdict" in d.cells[0].reason
    all_of_them = can_i_ship(frame, "copilot-python", sdk="1.0.0", against="all")
    assert all_of_them.answer == "unknown"  # two yes, one infra-error, one never measured (1.9.0)
    assert {c.cli_version: c.verdict for c in all_of_them.cells} == {
        "1.9.0": "unknown", "2.0.0": "yes", "2.1.0": "yes", "2.2.0": "unknown"}


def test_one_failure_is_a_no_and_uninstallable_versions_are_skipped(frame) -> None:
    d = can_i_ship(frame, "copilot-python", cli="2.1.0", against="all")
    assert d.answer == "no" and d.exit_code == 1
    verdicts = {c.sdk_version: c.verdict for c in d.cells}
    assert verdicts == {"0.9.0": "skipped", "1.0.0": "yes", "1.0.1": "no"}
    assert can_i_ship(frame, "copilot-python", cli="2.0.0", against="latest:2").answer == "yes"


def test_can_i_ship_command_exit_codes_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the repository's own data/ is not this test's history
    results = str(store(tmp_path))
    assert main(["can-i-ship", "--family", "copilot-python", "--sdk", "1.0.0", "--results", results]) == 0
    assert main(["can-i-ship", "--family", "copilot-python", "--cli", "2.1.0", "--against", "all",
                 "--results", results]) == 1
    capsys.readouterr()
    # A release the results list (released) but never measured against this SDK: unknown, never yes.
    save_releases(Path(results), {"copilot-python": {"sdk": {"1.0.0": None}, "cli": {"7.7.7": None}}})
    assert main(["can-i-ship", "--family", "copilot-python", "--sdk", "1.0.0", "--cli", "7.7.7", "--json",
                 "--results", results]) == 2
    doc = json.loads(capsys.readouterr().out)
    assert doc["answer"] == "unknown" and doc["cells"][0]["reason"] == "never measured"
    assert main(["can-i-ship", "--family", "copilot-python", "--sdk", "1.0.0", "--against", "latest:0",
                 "--results", results]) == 2  # a user error is exit 2 too, with its own message


def test_verify_refuses_a_selection_it_cannot_measure_before_measuring(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    results = str(store(tmp_path))
    assert main(["verify", "--sample", "1", "--probe", "handshak", "--results", results]) == 2
    assert "--probe handshak: no family has such a probe" in capsys.readouterr().err
    assert main(["verify", "--sample", "1", "--probe", "handshake", "--cli", "9.9.9", "--results", results,
                 "--config", str(ROOT / "matrix.toml")]) == 2
    err = capsys.readouterr().err
    assert "for --probe handshake --cli 9.9.9: widen the selection" in err, err
    # Verdicts a batch gave: this store has none (each of its cells was measured alone).
    assert main(["verify", "--sample", "1", "--batched", "--results", results,
                 "--config", str(ROOT / "matrix.toml")]) == 2
    assert "for --batched: widen the selection" in capsys.readouterr().err


def test_pins_command_prints_specifiers(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the repository's own data/ is not this test's history
    results = str(store(tmp_path))
    assert main(["pins", "--family", "copilot-python", "--sdk", "1.0.0", "--results", results, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["works_with"] == ["@github/copilot@>=2.0.0 <=2.1.0"]
    assert main(["pins", "--family", "copilot-python", "--cli", "2.0.0", "--results", results]) == 0
    assert '"github-copilot-sdk>=1.0.0,<=1.0.1"' in capsys.readouterr().out


def test_a_pair_that_leaves_the_cli_running_is_not_a_yes_and_pins_list_it_apart(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    s = Store(tmp_path / "leaks")
    left = "left copilot running after stop() (still alive 5 s after stop() returned)"
    for cli, outcome, error_type, message, leaked in [
            ("2.0.0", "compatible", None, None, []), ("2.1.0", "degraded", "LeftRunning", left, ["copilot"]),
            ("2.2.0", "refused", "RuntimeError", "SDK expects version 2, but server reports version 3", ["copilot"])]:
        s.append(make_row("1.0.0", cli, outcome, family="copilot-go", error_type=error_type, error_message=message,
                          leaked=leaked, harness_version="t"))
    frame, _ = load_frame(tmp_path / "leaks")
    d = can_i_ship(frame, "copilot-go", sdk="1.0.0", against="all")
    reasons = {c.cli_version: (c.verdict, c.reason) for c in d.cells}
    assert d.answer == "no" and reasons["2.0.0"][0] == "yes"
    assert reasons["2.1.0"] == ("no", f"degraded: {left}; session not measured yet")  # no session row here
    assert reasons["2.2.0"][0] == "no" and reasons["2.2.0"][1].endswith("; left copilot running after stop()")
    assert main(["pins", "--family", "copilot-go", "--sdk", "1.0.0", "--results", str(tmp_path / "leaks"),
                 "--json"]) == 0
    pins = json.loads(capsys.readouterr().out)
    assert pins["works_with"] == ["@github/copilot@2.0.0"]
    assert pins["works_but_leaves_cli_running"] == ["@github/copilot@2.1.0"]
    assert main(["pins", "--family", "copilot-go", "--cli", "2.0.0", "--results", str(tmp_path / "leaks")]) == 0
    out = capsys.readouterr().out
    assert "go get github.com/github/copilot-sdk/go@v1.0.0" in out and ">=" not in out


def test_diff_lists_regressions_first_and_infra_moves_as_changes(tmp_path: Path) -> None:
    old, _ = load_frame(store(tmp_path, name="old"))
    newer = [c for c in CELLS if c[:2] != ("0.9.0", "1.9.0")]  # a cell gone
    newer = [(s, c, "refused" if (s, c) == ("1.0.0", "2.1.0") else o, p, m) for s, c, o, p, m in newer]
    newer = [(s, c, "compatible" if (s, c) == ("1.0.1", "2.1.0") else o, p, m) for s, c, o, p, m in newer]
    newer = [(s, c, "compatible" if (s, c) == ("1.0.0", "2.2.0") else o, p, m) for s, c, o, p, m in newer]
    newer.append(("1.0.2", "2.0.0", "hang", None, "start never settled"))
    new, _ = load_frame(store(tmp_path, newer, name="new"))
    changes = diff_frames(old, new)
    assert [(c.kind, c.sdk_version, c.cli_version) for c in changes] == [
        ("regression", "1.0.0", "2.1.0"), ("new failure", "1.0.2", "2.0.0"), ("improvement", "1.0.1", "2.1.0"),
        ("changed", "1.0.0", "2.2.0"), ("gone", "0.9.0", "1.9.0")]


def test_diff_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = store(tmp_path, name="a")
    b = store(tmp_path, [(*CELLS[0][:2], "refused", None, "nope"), *CELLS[1:]], name="b")
    assert main(["diff", str(a), str(b / "rows.jsonl")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("regression (1):") and "compatible -> refused" in out
    assert main(["diff", str(a), str(tmp_path / "nowhere")]) == 2


def test_predictions_come_from_declarations_only() -> None:
    assert predict(RANGE_2_3, 3).outcome == "compatible" and predict(RANGE_2_3, 1).outcome == "refused"
    assert predict(EXACT_2, 3).outcome == "refused" and predict(EXACT_2, 2).outcome == "compatible"
    assert predict(EXACT_2, NO_PROTOCOL).outcome == "refused"
    assert predict({}, 3).outcome is None and predict(EXACT_2, None).outcome is None


def test_drift_flags_measurements_the_declarations_do_not_explain(frame) -> None:
    assert cli_protocols(frame, "copilot-python") == {"1.9.0": 2, "2.0.0": 3, "2.1.0": 3}
    findings, predicted, agree = drift(frame, "copilot-python")
    # 1.0.1 x 2.1.0: protocols match (3 in 2..3), yet it crashed. Infra, harness and uninstallable cells
    # are not predicted.
    assert [(f.sdk_version, f.cli_version, f.predicted, f.observed) for f in findings] == [
        ("1.0.1", "2.1.0", "compatible", "crashed")]
    assert (predicted, agree) == (6, 5)


def test_semver_findings_name_the_release_that_broke(frame) -> None:
    found = semver_findings(frame, "copilot-python")
    assert [(s.side, s.before, s.after, s.bump, s.other) for s in found] == [
        ("sdk", "1.0.0", "1.0.1", "patch", "2.1.0"), ("cli", "2.0.0", "2.1.0", "minor", "1.0.1")]
    assert not found[0].initial_development


def test_gaps_and_bisect_find_the_exact_boundary_with_few_probes() -> None:
    released = [f"1.{i}.0" for i in range(10)]
    axis = [("1.0.0", "compatible"), ("1.9.0", "refused")]
    ((low, high, between),) = gaps(axis, released)
    assert (low, high, len(between)) == ("1.0.0", "1.9.0", 8)
    truth = {v: "compatible" if int(v.split(".")[1]) < 6 else "refused" for v in released}
    probed: list[str] = []
    b = bisect_gap(low, "compatible", high, between, lambda v: probed.append(v) or truth[v])
    assert (b.last_same, b.first_other, b.exact) == ("1.5.0", "1.6.0", True) and len(probed) <= 4
    stopped = bisect_gap(low, "compatible", high, between, lambda v: "infra-error")
    assert not stopped.exact and "not a verdict" in stopped.note
