"""Classification from agent outputs shaped as the real agent prints them (the messages
are the ones real SDK versions produced against real CLIs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from matrix.execute.proc import Result
from matrix.families.copilot.handshake_verdict import classify_handshake
from matrix.model import Outcome
from matrix.probes.report import AGENT_REPORT_PREFIX, parse_report
from matrix.probes.verdict import grade_message

LAUNCH = [["--headless", "--no-auto-update", "--log-level", "error", "--stdio"]]


def agent(*steps: dict, **extra: object) -> str:
    doc = {"schema": 1, "sdk_name": "github-copilot-sdk", "steps": [
        {"name": "import", "ok": True, "seconds": 0.5},
        {"name": "construct", "ok": True, "seconds": 0.01},
        *steps,
    ], "warnings": [], **extra}
    return "noise before\n" + AGENT_REPORT_PREFIX + json.dumps(doc) + "\n"


def err(type_: str, message: str, timeout: bool = False) -> dict:
    return {"type": type_, "module": "builtins", "message": message, "traceback": "", "timeout": timeout}


def result(stdout: str, returncode: int | None = 0, timed_out: bool = False, stderr: str = "") -> Result:
    return Result(argv=("python",), returncode=returncode, stdout=stdout, stderr=stderr,
                  started=0.0, elapsed=1.0, timed_out=timed_out)


def classify(stdout: str, launches=LAUNCH, **kw) -> Outcome:
    res = result(stdout, **kw)
    return classify_handshake(parse_report(res.stdout), res, "1.0.102", launches).outcome


OK = [{"name": "start", "ok": True}, {"name": "ping", "ok": True}, {"name": "get_status", "ok": True},
      {"name": "stop", "ok": True}]


def test_compatible() -> None:
    assert classify(agent(*OK, observed_cli_version="1.0.102", negotiated_protocol=3)) == Outcome.COMPATIBLE


def test_refused_exact_match_message() -> None:
    msg = ("SDK protocol version mismatch: SDK expects version 1, but server reports version 3. "
           "Please update your SDK or server to ensure compatibility.")
    assert classify(agent({"name": "start", "ok": False, "error": err("RuntimeError", msg)})) == Outcome.REFUSED


def test_launch_failed_unknown_option() -> None:
    msg = "CLI process exited with code 1\nstderr: error: unknown option '--headless'"
    assert classify(agent({"name": "start", "ok": False, "error": err("RuntimeError", msg)})) == Outcome.LAUNCH_FAILED


def test_old_sdk_waiting_forever_is_a_hang() -> None:
    e = err("TimeoutError", "start did not settle within 35s (harness deadline)", timeout=True)
    assert classify(agent({"name": "start", "ok": False, "error": e})) == Outcome.HANG


def test_sdk_own_timeout_is_a_hang() -> None:
    e = err("Exception", "Request timed out after 30 seconds")
    assert classify(agent({"name": "start", "ok": False, "error": e})) == Outcome.HANG


def test_harness_deadline_without_report_is_a_hang() -> None:
    res = result("", returncode=None, timed_out=True, stderr="[agent] step import\n[agent] step start\n")
    verdict = classify_handshake(None, res, "1.0.102", LAUNCH)
    assert verdict.outcome == Outcome.HANG and "step start" in verdict.error.message


def test_unexpected_exception_is_crashed() -> None:
    e = err("ValueError", "invalid literal for int() with base 10: '2026-11-29T22:21:01.450012115Z'")
    assert classify(agent({"name": "start", "ok": False, "error": e})) == Outcome.CRASHED


def test_import_failure_is_crashed() -> None:
    doc = agent().replace('"name": "import", "ok": true', '"name": "import", "ok": false')
    assert classify(doc) == Outcome.CRASHED


def test_later_call_failure_is_degraded() -> None:
    steps = [OK[0], {"name": "ping", "ok": True},
             {"name": "get_status", "ok": False, "error": err("JsonRpcError", "Unhandled method status.get")},
             OK[3]]
    assert classify(agent(*steps)) == Outcome.DEGRADED


def test_missing_report_is_never_a_pass() -> None:
    assert classify("no report here", returncode=1) == Outcome.HARNESS_ERROR
    assert classify("no report here", returncode=-11) == Outcome.CRASHED


def test_corrupt_report_is_never_a_pass() -> None:
    assert classify(AGENT_REPORT_PREFIX + "{not json", returncode=0) == Outcome.HARNESS_ERROR


def test_agent_that_could_not_drive_the_api_is_a_harness_error() -> None:
    assert classify(agent(harness_error="could not construct the client: TypeError")) == Outcome.HARNESS_ERROR


def test_sdk_that_ran_another_cli_is_never_compatible() -> None:
    assert classify(agent(*OK, observed_cli_version="1.0.57")) == Outcome.HARNESS_ERROR
    assert classify(agent(*OK, observed_cli_version="1.0.102"), launches=[]) == Outcome.HARNESS_ERROR


@pytest.mark.parametrize(("message", "names", "action"), [
    ("SDK protocol version mismatch: SDK expects version 1, but server reports version 3. Please update "
     "your SDK or server", True, True),
    ("CLI process exited with code 1", False, False),
    ("The Copilot CLI reports protocol version 2, but this SDK requires at least 3. Upgrade the CLI with: "
     "npm i -g @github/copilot@latest", True, True),
])
def test_message_grading(message: str, names: bool, action: bool) -> None:
    assert grade_message(message) == (names, action)


def test_messages_lose_token_values_and_our_cache_paths() -> None:
    from matrix.execute.redaction import redact

    text = ("Cannot find module '/home/u/.cache/compat-matrix/envs/sdk/npm-prefix/github__copilot-sdk-0.1.11/"
            "node_modules/x.json' with ghp_abcdefghijklmnopqrstuvwxyz0123")
    assert redact(text) == ("Cannot find module '<sdk env github__copilot-sdk-0.1.11>/node_modules/x.json' with "
                            "[redacted-token]")


def test_node_agent_reports() -> None:
    """What the Node agent adds: a release with no code, an uncaught error after a clean
    handshake, a dead CLI's EPIPE."""
    empty = AGENT_REPORT_PREFIX + json.dumps({"schema": 1, "no_code": True, "steps": [
        {"name": "import", "ok": False, "error": err("Error", "the release has no code to import")}]})
    assert classify(empty) == Outcome.NOT_APPLICABLE
    uncaught = agent(*OK, observed_cli_version="1.0.102", uncaught=["uncaughtException: Error: write EPIPE"])
    assert classify(uncaught) == Outcome.DEGRADED
    epipe = agent({"name": "start", "ok": False, "error": err("ResponseError", "write EPIPE (code -32099)")})
    assert classify(epipe) == Outcome.LAUNCH_FAILED


def test_transcripts_are_rewritten_without_token_values(tmp_path: Path) -> None:
    from matrix.execute.redaction import redact_file

    path = tmp_path / "t.jsonl"
    path.write_text('{"msg": "token ghp_abcdefghijklmnopqrstuvwxyz0123 echoed"}\n')
    redact_file(path)
    assert "ghp_abc" not in path.read_text() and "[redacted-token]" in path.read_text()
