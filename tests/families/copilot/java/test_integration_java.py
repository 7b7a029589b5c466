"""The Java SDK on its real release: resolved by Maven, the agent compiled against it, run
against an older CLI it works with and the newest, whose ping it cannot decode."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.families.copilot.measured import measure, newest

pytestmark = pytest.mark.integration
ARTIFACT = "com.github:copilot-sdk-java"


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> tuple[pd.DataFrame, str, str]:
    sdk, cli = newest("maven", ARTIFACT), newest("npm", "@github/copilot")
    return measure(tmp_path_factory.mktemp("java"), "copilot-java", [(sdk, cli), (sdk, "0.0.400")]), sdk, cli


def row(results: tuple[pd.DataFrame, str, str], cli: str) -> dict:
    frame = results[0]
    return frame[frame["cli_version"] == cli].iloc[0].to_dict()


def test_the_java_sdk_negotiates_with_a_cli_of_its_protocol_window(results: tuple[pd.DataFrame, str, str]) -> None:
    r = row(results, "0.0.400")
    assert r["outcome"] in ("compatible", "degraded"), r["error_message"]
    assert r["observed_cli_version"] == "0.0.400" and r["protocol"] == 2
    assert r["sdk_declared"]["MIN_PROTOCOL_VERSION"] == 2 and len(r["stops"]) >= 5


def test_the_newest_cli_is_judged_from_what_the_sdk_did(results: tuple[pd.DataFrame, str, str]) -> None:
    _, sdk, cli = results
    r = row(results, cli)
    # Measured on 2026-12-02: 0.3.0-java.2 cannot decode the newest CLI's ping (its timestamp
    # became a string). A later release may; the cell must then have connected.
    if sdk == "0.3.0-java.2":
        assert r["outcome"] == "crashed" and "timestamp" in r["error_message"]
    else:
        assert r["outcome"] in ("compatible", "degraded", "refused"), r["error_message"]


@pytest.fixture(scope="module")
def probes(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    """The one release the repositories serve, with the CLI it connects to: two tolerance rules
    and a session (measured on 2026-12-02: surfaced, lost, compatible)."""
    from matrix.execute import proc
    from matrix.execute.cache import cache_root
    from matrix.pipeline.config import Plan
    from matrix.pipeline.runner import Cell, Runner
    from matrix.store.results import Store, load_frame

    out = tmp_path_factory.mktemp("java-probes")
    cells = [Cell("copilot-java", "0.3.0-java.2", "1.0.50", "tolerance", rule)
             for rule in ("event.unknown-type", "event.unknown-enum-value")]
    cells.append(Cell("copilot-java", "0.3.0-java.2", "1.0.50", "session"))
    Runner(Plan.model_validate({"families": {"copilot-java": {}}}), Store(out), cache_root(), proc.Reaper()).run(
        cells, jobs=2)
    return load_frame(out)[0]


def test_an_unknown_event_type_reaches_the_application_with_its_type(probes: pd.DataFrame) -> None:
    r = probes[probes["mutation"] == "event.unknown-type"].iloc[0]
    assert r["outcome"] == "surfaced", r["error_message"]
    assert r["detail"]["observed"]["mutated"]["raw_type"] == "compat_matrix.unknown_event"


def test_an_event_with_an_unknown_enum_value_is_lost_with_the_sdks_own_log_as_evidence(
        probes: pd.DataFrame) -> None:
    r = probes[probes["mutation"] == "event.unknown-enum-value"].iloc[0]
    assert r["outcome"] == "lost" and r["error_type"] == "DecodeError"
    assert "Error handling session event" in r["error_message"]


def test_a_session_holds_every_scripted_turn_through_the_provider(probes: pd.DataFrame) -> None:
    r = probes[probes["probe"] == "session"].iloc[0]
    assert r["outcome"] in ("compatible", "surfaced"), r["error_message"]
    assert [t["held"] for t in r["turns"]] == [True] * 4 and r["route"] == "provider"
