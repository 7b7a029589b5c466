"""The Go SDK on real versions: the agent built against the newest release (found through
the go command's configured proxy) against the newest CLI, an exact-protocol release, and a
release whose ping decoding breaks on a newer CLI."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest

from matrix.ecosystems.discovery import Discovery
from matrix.execute import proc
from matrix.execute.cache import cache_root
from matrix.execute.sandbox import sandbox
from matrix.families.copilot.go.environment import GoAgent
from matrix.families.registry import FAMILIES
from matrix.pipeline.config import Plan
from matrix.pipeline.runner import Cell, Runner
from matrix.probes.report import parse_report
from matrix.store.results import Store, load_frame
from matrix.versions import apply_selection

pytestmark = pytest.mark.integration
MODULE = "github.com/github/copilot-sdk/go"


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    disc = Discovery(cache_root() / "discovery", 6 * 3600)
    sdk = apply_selection(MODULE, disc.releases("go", MODULE, FAMILIES["copilot-go"].version_hints),
                          ["latest:1"], [], False)[0]
    cli = apply_selection("@github/copilot", disc.releases("npm", "@github/copilot"), ["latest:1"], [], False)[0]
    out = tmp_path_factory.mktemp("go")
    plan = Plan.model_validate({"families": {"copilot-go": {}}})
    Runner(plan, Store(out), cache_root(), proc.Reaper()).run(
        [Cell("copilot-go", v, cli, "handshake") for v in (sdk, "0.1.14", "0.1.24")], jobs=3)
    return out, sdk, cli


def row(results: tuple[Path, str, str], sdk: str) -> dict:
    frame, _ = load_frame(results[0])
    return frame[frame["sdk_version"] == sdk].iloc[0].to_dict()


def test_newest_go_sdk_runs_the_cli_we_installed(results: tuple[Path, str, str]) -> None:
    _, sdk, cli = results
    r = row(results, sdk)
    assert r["outcome"] == "compatible", r["error_message"]
    assert r["observed_cli_version"] == cli and r["protocol"] == 3 and not r["wrong_cli"]
    assert r["detail"]["go_variant"] == "copilot_connection"


def test_exact_protocol_release_refuses_naming_both_versions(results: tuple[Path, str, str]) -> None:
    r = row(results, "0.1.14")
    assert r["outcome"] == "refused" and "expects version 1, but server reports version 3" in r["error_message"]


def test_a_retyped_ping_field_is_a_crash_with_the_decoder_error(results: tuple[Path, str, str]) -> None:
    r = row(results, "0.1.24")
    assert r["outcome"] == "crashed" and "PingResponse.timestamp" in r["error_message"]


def test_go_tolerance_unknown_event_surfaced_retyped_field_loses_the_event(tmp_path: Path,
                                                                           results: tuple[Path, str, str]) -> None:
    """Go's typed events: an unknown type still arrives (its Type is a string); a field that
    changes JSON type fails the whole event, and the session goes on (the canary arrives)."""
    _, sdk, cli = results
    plan = Plan.model_validate({"families": {"copilot-go": {}}})
    rules = ("event.unknown-type", "field.type-change")
    Runner(plan, Store(tmp_path), cache_root(), proc.Reaper()).run(
        [Cell("copilot-go", sdk, cli, "tolerance", rule) for rule in rules], jobs=2)
    frame, _ = load_frame(tmp_path)
    got = {r["mutation"]: r for r in frame.to_dict("records")}
    assert got["event.unknown-type"]["outcome"] == "surfaced"
    assert got["event.unknown-type"]["detail"]["observed"]["mutated"]["type"] == "compat_matrix.unknown_event"
    assert got["field.type-change"]["outcome"] == "lost"
    assert all(r["detail"]["observed"]["canary"] for r in got.values())


def test_a_start_still_waiting_on_an_exited_cli_is_stopped_by_the_watch(tmp_path: Path,
                                                                         results: tuple[Path, str, str]) -> None:
    """0.1.24's start() never notices a CLI that exits at once (as old CLIs do on flags they
    do not know); with dead_cli the agent stops it a second after the exit, naming it."""
    plan = Plan.model_validate({"families": {"copilot-go": {}}})
    runner = Runner(plan, Store(tmp_path), cache_root(), proc.Reaper())
    with contextlib.closing(runner):
        agent = runner.make(GoAgent, "sdk", MODULE, "0.1.24")
        runner.ensure(agent)  # built by the fixture's run
        cli = tmp_path / "copilot"  # a stand-in: this tests our watch, not the SDK
        # It exits at once, as an old CLI does, but a process it leaves holds its stdin open:
        # otherwise the SDK's first write can meet the closed pipe (EPIPE, a failed start) or
        # not, by the scheduler's whim, and the watch would only sometimes have a start to stop.
        # (A background job's stdin is /dev/null unless given one: fd 3 carries the pipe to it.)
        cli.write_text("#!/bin/sh\nexec 3<&0\nsleep 10 <&3 >/dev/null 2>&1 &\nexit 7\n")
        cli.chmod(0o755)
        cfg = {"cli_path": str(cli), "step_timeout": 20, "log_level": "error", "dead_cli": 1}
        with sandbox(tmp_path / "box") as box:
            res = proc.run(proc.Request((str(agent.binary), json.dumps(cfg)), box.env, box.root, timeout=60))
    report = parse_report(res.stdout)
    assert report is not None, res.stderr
    start = next(s for s in report.steps if s.name == "start")
    assert start.error is not None and start.error.type == "CliExitedUnnoticed" and start.error.timeout
    assert "exit 7" in start.error.message and start.seconds < 10
