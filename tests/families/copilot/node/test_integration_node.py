"""The npm SDK on real versions: the newest against the newest CLI (through its
RuntimeConnection API, which silently ignores the old cliPath), a release that requires an
exact protocol, and one that cannot even be imported."""

from __future__ import annotations

from pathlib import Path

import pytest

from matrix.ecosystems.discovery import Discovery
from matrix.execute import proc
from matrix.execute.cache import cache_root
from matrix.pipeline.config import Plan
from matrix.pipeline.runner import Cell, Runner
from matrix.store.results import Store, load_frame
from matrix.versions import apply_selection

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def latest() -> tuple[str, str]:
    disc = Discovery(cache_root() / "discovery", 6 * 3600)
    sdk = apply_selection("@github/copilot-sdk", disc.releases("npm", "@github/copilot-sdk"), ["latest:1"], [], False)
    cli = apply_selection("@github/copilot", disc.releases("npm", "@github/copilot"), ["latest:1"], [], False)
    return sdk[0], cli[0]


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory, latest: tuple[str, str]) -> Path:
    out = tmp_path_factory.mktemp("node")
    sdk, cli = latest
    plan = Plan.model_validate({"families": {"copilot-node": {}}})
    runner = Runner(plan, Store(out), cache_root(), proc.Reaper())
    cells = [Cell("copilot-node", v, cli, "handshake") for v in (sdk, "0.1.13", "0.1.32")]
    runner.run(cells, jobs=3)
    return out


def row(results: Path, sdk: str) -> dict:
    frame, _ = load_frame(results)
    return frame[frame["sdk_version"] == sdk].iloc[0].to_dict()


def test_newest_sdk_runs_the_cli_we_installed(results: Path, latest: tuple[str, str]) -> None:
    sdk, cli = latest
    r = row(results, sdk)
    assert r["outcome"] == "compatible", r["error_message"]
    assert r["observed_cli_version"] == cli and r["protocol"] == 3 and not r["wrong_cli"]
    assert r["detail"]["api"]["constructor"] == "connection"
    # What the SDK spawned is our launcher, not the runtime it bundles.
    assert r["detail"]["spawned"] and all(s.split()[0].endswith("/copilot") for s in r["detail"]["spawned"])


def test_exact_match_release_refuses_with_both_versions(results: Path) -> None:
    r = row(results, "0.1.13")
    assert r["outcome"] == "refused"
    assert "expects version 1, but server reports version 3" in r["error_message"]
    assert r["message_names_versions"] is True


def test_a_release_that_does_not_import_is_crashed_with_the_reason(results: Path) -> None:
    r = row(results, "0.1.32")
    assert r["outcome"] == "crashed" and "vscode-jsonrpc/node" in r["error_message"]
    assert "/.cache/" not in r["error_message"]  # our cache path is shortened to the environment's name


def test_unknown_event_and_retyped_field_reach_the_application_as_sent(tmp_path: Path,
                                                                      latest: tuple[str, str]) -> None:
    """JavaScript widens: the newest SDK hands both events to the application raw, and the
    session keeps working (the canary after them arrives)."""
    sdk, cli = latest
    plan = Plan.model_validate({"families": {"copilot-node": {}}})
    runner = Runner(plan, Store(tmp_path), cache_root(), proc.Reaper())
    rules = ("event.unknown-type", "field.type-change")
    runner.run([Cell("copilot-node", sdk, cli, "tolerance", rule) for rule in rules], jobs=2)
    frame, _ = load_frame(tmp_path)
    got = {r["mutation"]: r for r in frame.to_dict("records")}
    assert got["event.unknown-type"]["outcome"] == "surfaced"
    assert got["event.unknown-type"]["detail"]["observed"]["mutated"]["type"] == "compat_matrix.unknown_event"
    assert got["field.type-change"]["outcome"] == "surfaced"
    assert got["field.type-change"]["detail"]["observed"]["mutated"]["name"] == 42
    assert all(r["detail"]["observed"]["canary"] for r in got.values())
