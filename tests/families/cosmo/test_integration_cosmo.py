"""The newest cosmo-ai-sdk release end to end against the stand-in, through the CLI as a
user runs it; and one room-lane release through the relay transport."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from matrix.commands.cli import main
from matrix.families.cosmo.checks import CHECKS
from matrix.store.results import load_frame

pytestmark = pytest.mark.integration

ROOM_LANE = "0.5.1"


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cosmo")
    config = out / "matrix.toml"
    config.write_text(f'[families.cosmo-python]\nprobes = ["tolerance", "identity", "strictness"]\n'
                      f'sdk.select = ["latest:1", "{ROOM_LANE}"]\n')
    assert main(["run", "--config", str(config), "--results", str(out / "r"), "--jobs", "4"]) == 0
    return out / "r"


def rows(results: Path, sdk: str | None = None) -> dict[str, dict]:
    frame, warnings = load_frame(results)
    assert not warnings
    latest = max(frame["sdk_version"], key=lambda v: tuple(int(x) for x in v.split(".")))
    chosen = frame[frame["sdk_version"] == (sdk or latest)]
    return {str(r["mutation"]): r for r in chosen.to_dict("records")}


def test_every_check_of_the_newest_release_is_measured_over_its_websocket(results: Path) -> None:
    got = rows(results)
    named = {c.name for c in CHECKS}
    # Besides the named checks, one per closed set the release's own models hold (planned
    # from the inventory its agent reads): set.<frame>.<field>.
    assert named <= set(got) and all(k.startswith("set.") for k in set(got) - named)
    bad = {k: (r["outcome"], r["error_message"]) for k, r in got.items()
           if r["outcome"] in ("harness-error", "infra-error", "hang", "crashed")}
    assert not bad
    assert {r["detail"]["path"] for r in got.values()} == {"websocket"}


def test_the_newest_release_stamps_what_is_installed(results: Path) -> None:
    got = rows(results)
    block = got["identity.sdk-block"]
    version = block["sdk_version"]
    assert block["outcome"] == "kept"
    assert block["detail"]["sent_sdk"][0] == {"name": "cosmo-ai-sdk", "version": version}
    log = [json.loads(line) for line in (results / block["detail"]["standin_log"]).read_text().splitlines()]
    headers = {e["sdk_header"] for e in log if e["kind"] == "request" and e["path"].startswith("/api/")}
    assert headers == {f"cosmo-ai-sdk/{version}"}


def test_the_newest_release_survives_an_unknown_frame_type(results: Path) -> None:
    r = rows(results)["frame.unknown-type"]
    assert r["outcome"] == "surfaced" and r["detail"]["delivered"]["raw_type"] == "compat-matrix.new-frame"


def test_a_room_lane_release_runs_its_real_decoder_through_the_relay(results: Path) -> None:
    got = rows(results, ROOM_LANE)
    assert {r["detail"]["path"] for r in got.values()} == {"room-relay"}
    assert got["frame.unknown-type"]["outcome"] == "surfaced"
    # Its session-config reached the strict server over real HTTP.
    assert got["strict.session-start"]["outcome"] in ("kept", "broken")
    assert not [k for k, r in got.items() if r["outcome"] in ("harness-error", "infra-error", "hang")]
