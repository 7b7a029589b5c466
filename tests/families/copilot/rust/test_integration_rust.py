"""The Rust SDK on real releases: the agent built against the newest release (found through
cargo's configured registry) runs the newest CLI; the crate's first release, a name kept with
no library in it, is not-applicable, as the compiler says."""

from __future__ import annotations

import pandas as pd
import pytest

from matrix.execute.cache import cache_root
from matrix.families.copilot.rust.environment import RustAgent
from tests.families.copilot.measured import measure, newest

pytestmark = pytest.mark.integration
CRATE = "github-copilot-sdk"


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> tuple[pd.DataFrame, str, str]:
    sdk, cli = newest("crates", CRATE), newest("npm", "@github/copilot")
    frame = measure(tmp_path_factory.mktemp("rust"), "copilot-rust", [(sdk, cli), ("0.0.0", cli)],
                    timeouts={"install": 2400})
    return frame, sdk, cli


def row(results: tuple[pd.DataFrame, str, str], sdk: str) -> dict:
    frame = results[0]
    return frame[frame["sdk_version"] == sdk].iloc[0].to_dict()


def test_the_newest_rust_sdk_runs_the_cli_we_gave_it_by_path(results: tuple[pd.DataFrame, str, str]) -> None:
    _, sdk, cli = results
    r = row(results, sdk)
    assert r["outcome"] in ("compatible", "degraded"), r["error_message"]
    assert r["observed_cli_version"] == cli and r["protocol"] == 3 and not r["wrong_cli"]
    assert r["detail"]["features"] == "runtime" and len(r["stops"]) >= 5
    agent = RustAgent(package=CRATE, version=sdk, location=cache_root() / "envs" / "sdk" / "rust-agent" /
                      f"{CRATE}-{sdk}")
    assert agent.sdk_dir.endswith(f"{CRATE}-{sdk}")


Measured = tuple[pd.DataFrame, str, str]


def test_a_release_with_no_library_is_not_applicable_as_the_compiler_says(results: Measured) -> None:
    r = row(results, "0.0.0")
    assert r["outcome"] == "not-applicable" and r["error_type"] == "NoLibrary"
    assert "has no library github_copilot_sdk" in r["error_message"]


@pytest.fixture(scope="module")
def probes(tmp_path_factory: pytest.TempPathFactory) -> tuple[pd.DataFrame, str]:
    """The newest release's agent runs the other probes against the newest CLI: an unknown event
    type and a session (measured on 2026-12-02 with 1.0.28 x 1.0.102: surfaced, surfaced)."""
    from matrix.execute import proc
    from matrix.pipeline.config import Plan
    from matrix.pipeline.runner import Cell, Runner
    from matrix.store.results import Store, load_frame

    sdk, cli = newest("crates", CRATE), newest("npm", "@github/copilot")
    out = tmp_path_factory.mktemp("rust-probes")
    cells = [Cell("copilot-rust", sdk, cli, "tolerance", "event.unknown-type"),
             Cell("copilot-rust", sdk, cli, "session")]
    Runner(Plan.model_validate({"families": {"copilot-rust": {}}, "timeouts": {"install": 2400}}), Store(out),
           cache_root(), proc.Reaper()).run(cells, jobs=2)
    return load_frame(out)[0], cli


def test_an_unknown_event_type_reaches_the_rust_application_with_its_type(
        probes: tuple[pd.DataFrame, str]) -> None:
    frame, _ = probes
    r = frame[frame["mutation"] == "event.unknown-type"].iloc[0]
    assert r["outcome"] == "surfaced", r["error_message"]
    assert r["detail"]["observed"]["mutated"]["raw_type"] == "compat_matrix.unknown_event"


def test_a_rust_session_holds_every_scripted_turn_through_the_provider(probes: tuple[pd.DataFrame, str]) -> None:
    frame, _ = probes
    r = frame[frame["probe"] == "session"].iloc[0]
    assert r["outcome"] in ("compatible", "surfaced"), r["error_message"]
    assert [t["held"] for t in r["turns"]] == [True] * 4 and r["route"] == "provider"
