"""The Rust SDK on real releases: the agent built against the newest release (found through
cargo's configured registry) runs the newest CLI; the crate's first release, a name kept with
no library in it, is not-applicable, as the compiler says."""

from __future__ import annotations

from pathlib import Path

import pytest

from matrix.ecosystems.discovery import Discovery
from matrix.execute import proc
from matrix.execute.cache import cache_root
from matrix.families.copilot.rust.environment import RustAgent
from matrix.pipeline.config import Plan
from matrix.pipeline.runner import Cell, Runner
from matrix.store.results import Store, load_frame
from matrix.versions import apply_selection

pytestmark = pytest.mark.integration
CRATE = "github-copilot-sdk"


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    disc = Discovery(cache_root() / "discovery", 6 * 3600)
    sdk = apply_selection(CRATE, disc.releases("crates", CRATE), ["latest:1"], [], False)[0]
    cli = apply_selection("@github/copilot", disc.releases("npm", "@github/copilot"), ["latest:1"], [], False)[0]
    out = tmp_path_factory.mktemp("rust")
    plan = Plan.model_validate({"families": {"copilot-rust": {}}, "timeouts": {"install": 2400}})
    Runner(plan, Store(out), cache_root(), proc.Reaper()).run(
        [Cell("copilot-rust", v, cli, "handshake") for v in (sdk, "0.0.0")], jobs=2)
    return out, sdk, cli


def row(results: tuple[Path, str, str], sdk: str) -> dict:
    frame, _ = load_frame(results[0])
    return frame[frame["sdk_version"] == sdk].iloc[0].to_dict()


def test_the_newest_rust_sdk_runs_the_cli_we_gave_it_by_path(results: tuple[Path, str, str]) -> None:
    _, sdk, cli = results
    r = row(results, sdk)
    assert r["outcome"] in ("compatible", "degraded"), r["error_message"]
    assert r["observed_cli_version"] == cli and r["protocol"] == 3 and not r["wrong_cli"]
    assert r["detail"]["features"] == "runtime" and len(r["stops"]) >= 5
    agent = RustAgent(package=CRATE, version=sdk, location=cache_root() / "envs" / "sdk" / "rust-agent" /
                      f"{CRATE}-{sdk}")
    assert agent.sdk_dir.endswith(f"{CRATE}-{sdk}")


def test_a_release_with_no_library_is_not_applicable_as_the_compiler_says(results: tuple[Path, str, str]) -> None:
    r = row(results, "0.0.0")
    assert r["outcome"] == "not-applicable" and r["error_type"] == "NoLibrary"
    assert "has no library github_copilot_sdk" in r["error_message"]
