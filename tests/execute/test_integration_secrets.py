"""Credentials planted in the harness's own environment reach no probe: each agent reports
the names of the variables it was given, and no stored file holds a planted value."""

from __future__ import annotations

from pathlib import Path

import pytest

from matrix.execute import proc
from matrix.execute.cache import cache_root
from matrix.execute.sandbox import is_secret_name
from matrix.pipeline.config import Plan
from matrix.pipeline.runner import Cell, Runner
from matrix.store.results import Store, load_frame

pytestmark = pytest.mark.integration

PLANTED = {
    "GH_TOKEN": "ghp_plantedplantedplantedplanted0001",
    "GITHUB_TOKEN": "ghp_plantedplantedplantedplanted0002",
    "COPILOT_GITHUB_TOKEN": "ghp_plantedplantedplantedplanted0003",
    "MY_SERVICE_TOKEN": "planted-service-token-0004",
    "DEPLOY_KEY": "planted-deploy-key-0005",
    "CLIENT_SECRET": "planted-client-secret-0006",
    "AWS_ACCESS_KEY_ID": "AKIAPLANTED000000007",
    "AWS_SECRET_ACCESS_KEY": "planted/aws/secret/0008",
    "COSMO_API_KEY": "cosmo_planted_key_0009",
}
CELLS = [
    Cell("copilot-python", "1.0.27", "1.0.102", "handshake"),
    Cell("copilot-python", "1.0.27", "1.0.102", "tolerance", "event.unknown-type"),
    Cell("copilot-node", "1.0.14", "1.0.102", "handshake"),
    Cell("cosmo-python", "0.6.1", "stand-in-1", "identity", "identity.sdk-block"),
]


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("secrets")
    with pytest.MonkeyPatch.context() as mp:
        for name, value in PLANTED.items():
            mp.setenv(name, value)
        plan = Plan.model_validate({"families": {f: {} for f in ("copilot-python", "copilot-node", "cosmo-python")}})
        Runner(plan, Store(out), cache_root(), proc.Reaper()).run(CELLS, jobs=2)
    return out


def test_every_agent_reports_an_environment_without_credentials(results: Path) -> None:
    frame, _ = load_frame(results)
    assert len(frame) == len(CELLS)
    for r in frame.to_dict("records"):
        names = r["detail"]["agent_env_names"]
        assert names and "HOME" in names, (r["family"], r["outcome"], r["error_message"])
        assert not [n for n in names if n in PLANTED or is_secret_name(n)], (r["family"], names)


def test_no_stored_file_holds_a_planted_value(results: Path) -> None:
    stored = [p for p in results.rglob("*") if p.is_file()]
    assert any("transcripts" in p.parts for p in stored) and any("standin" in p.parts for p in stored)
    for path in stored:
        text = path.read_text(errors="replace")
        assert not [v for v in PLANTED.values() if v in text], path
