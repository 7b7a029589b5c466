"""What stop() leaves behind, as a rate: a connected handshake is measured until its stop has
been seen ``stops`` times (more where they disagree), and its verdict is the worst seen.

The pure rules first, from agent reports shaped as the real agents print them; then the whole
series for real: the Python handshake agent against a stand-in SDK whose CLI ignores SIGTERM on
every other start (tests/families/copilot/test_leak.py has the stand-ins)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from matrix.execute.proc import Result
from matrix.execute.sandbox import sandbox
from matrix.families.copilot.agent_run import AgentRun
from matrix.families.copilot.cli import CliInstall, Runtime
from matrix.families.copilot.handshake import Attempt, HandshakeCell, measure_handshake
from matrix.families.copilot.handshake_verdict import classify_handshake, combine_stops, needs_another
from matrix.model import Outcome
from matrix.probes.report import AGENT_REPORT_PREFIX, AgentReport, parse_report
from matrix.probes.verdict import LEFT_RUNNING, Verdict
from tests.families.copilot.test_leak import CLI, PY_SDK

OK = [{"name": n, "ok": True} for n in ("import", "construct", "start", "ping", "get_status", "stop")]
LAUNCH = [["--headless", "--stdio"]]


def report(leaked: bool, steps: list[dict] | None = None, gone: float = 0.2) -> AgentReport:
    after = {"wait": 5.0, "processes": [{"pid": 7, "command": "/x/node /x/copilot/index.js --stdio",
                                         "gone_after": None if leaked else gone}],
             "leaked": ["/x/node /x/copilot/index.js --stdio"] if leaked else [],
             "exit_after_stop_seconds": None if leaked else gone}
    doc = {"schema": 1, "steps": steps or OK, "warnings": [], "after_stop": after}
    parsed = parse_report(AGENT_REPORT_PREFIX + json.dumps(doc))
    assert parsed is not None
    return parsed


def verdict_of(rep: AgentReport) -> Verdict:
    res = Result(("agent",), 0, "", "", 0.0, 1.0, False)
    return classify_handshake(rep, res, "1.0.102", LAUNCH)


def combined(*reports: AgentReport) -> Verdict:
    return combine_stops([verdict_of(r) for r in reports], list(reports))[0]


def test_stops_that_all_end_cleanly_are_compatible() -> None:
    assert combined(*(report(False) for _ in range(5))).outcome == Outcome.COMPATIBLE


def test_a_leak_in_some_stops_is_degraded_and_says_how_often() -> None:
    v = combined(report(False), report(True), report(False), report(True), report(False))
    assert v.outcome == Outcome.DEGRADED and v.error is not None and v.error.type == LEFT_RUNNING
    assert v.error.message == ("left node index.js running after stop() in 2 of 5 stops (still alive 5 s after "
                               "stop() returned)")


def test_a_leak_in_every_stop_says_so() -> None:
    v = combined(*(report(True) for _ in range(5)))
    assert v.error is not None and "in 5 of 5 stops" in v.error.message


def test_a_leak_beside_another_failure_is_in_the_message_too() -> None:
    stop_failed = [*OK[:-1], {"name": "stop", "ok": False, "error": {
        "type": "StopError", "message": "Unhandled method runtime.shutdown"}}]
    v = combined(report(False, stop_failed), report(True, stop_failed), report(False, stop_failed))
    assert v.outcome == Outcome.DEGRADED and v.error is not None and v.error.type == "StopError"
    assert v.error.message.startswith("Unhandled method runtime.shutdown; and left")
    assert "in 1 of 3 stops" in v.error.message


def test_the_worst_outcome_seen_is_the_verdict() -> None:
    hung = [*OK[:3], {"name": "ping", "ok": False, "error": {"type": "TimeoutError", "message": "x", "timeout": True}},
            OK[-1]]
    reports = [report(False), report(False, hung), report(False)]
    verdicts = [verdict_of(r) for r in reports]
    v, shown = combine_stops(verdicts, reports)
    assert v.outcome == Outcome.DEGRADED and shown == 1


@pytest.mark.parametrize(("outcomes", "stops", "expected"), [
    (["refused"], [None], False),  # did not connect: measured once
    (["compatible"], [0.1], True),
    (["compatible"] * 5, [0.1] * 5, False),  # five stops agree
    (["compatible", "degraded", "compatible", "compatible", "compatible"], [0.1, None, 0.1, 0.1, 0.1], True),
    (["compatible", "degraded"] * 5, [0.1, None] * 5, False),  # disagreeing, at the most
    (["compatible", "harness-error"], [0.1], False),  # not a verdict: measured again next run
])
def test_how_many_stops_a_cell_measures(outcomes: list[str], stops: list[float | None], expected: bool) -> None:
    assert needs_another([Outcome(o) for o in outcomes], stops, 5, 10) is expected


ALTERNATE_CLI = CLI.replace('mode = sys.argv[1]', '''mode = sys.argv[1]
if mode == "alternate":
    count = os.path.join(os.environ["COUNT_DIR"], "starts")
    n = int(open(count).read()) if os.path.exists(count) else 0
    open(count, "w").write(str(n + 1))
    mode = "late" if n % 2 else "never"''')


def test_a_racy_stop_is_measured_until_the_most_and_kept_as_a_rate(tmp_path: Path) -> None:
    """The real agent, a stand-in SDK whose stop() sends SIGTERM and returns, and a CLI that
    ignores the TERM on every other start: the series goes on to the most, and the row keeps
    each stop, each outcome and the rate."""
    (tmp_path / "sdk" / "copilot").mkdir(parents=True)
    (tmp_path / "sdk" / "copilot" / "__init__.py").write_text(PY_SDK)
    meta = tmp_path / "sdk" / "github_copilot_sdk-9.9.9.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: github-copilot-sdk\nVersion: 9.9.9\n")
    (tmp_path / "cli.py").write_text(ALTERNATE_CLI)
    launcher = tmp_path / "copilot"
    launcher.write_text(f"#!/bin/sh\nexec {sys.executable} {tmp_path / 'cli.py'} alternate\n")
    launcher.chmod(0o755)
    agent = Path(__file__).parents[3] / "matrix/families/copilot/python/agents/copilot_python_handshake.py"
    turns: list[int] = []

    def once() -> Attempt:
        from matrix.execute import proc

        cfg = {"cli_path": str(launcher), "step_timeout": 10, "leak": 1.5}
        with sandbox(tmp_path / "scratch", extra={"PYTHONPATH": str(tmp_path / "sdk"),
                                                 "COUNT_DIR": str(tmp_path)}) as box:
            res = proc.run(proc.Request((sys.executable, str(agent), json.dumps(cfg)), box.env, box.root,
                                        timeout=30, grace=1))
        return Attempt(AgentRun(parse_report(res.stdout), res, LAUNCH, []))

    cell = HandshakeCell("copilot-python", "9.9.9", "9.9.9", 40, 10, 1, tmp_path, stops=4, stops_max=6,
                         working=lambda: turns.append(1))
    row = measure_handshake(cell, once, Runtime("node20", Path("node")), CliInstall("9.9.9", launcher, None, "", {}))
    assert row.outcome == "degraded" and row.error_type == LEFT_RUNNING
    assert len(row.get("stops")) == 6 and row.get("stops").count(None) == 3  # never, late, never, ...
    assert all(s is not None and s < 1.5 for s in row.get("stops")[1::2])
    assert row.repeats == ["degraded", "compatible"] * 3 and row.flaky
    assert row.error_message is not None and "in 3 of 6 stops" in row.error_message
    assert row.get("leaked") == ["python cli.py"]
    assert len(turns) == 5  # the CPU slot asked for again before every repeat
