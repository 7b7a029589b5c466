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
