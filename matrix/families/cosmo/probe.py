"""The Cosmo probes: one check, one cosmo-ai-sdk release, one stand-in started for it.

The stand-in serves the check's scenario (``matrix/families/cosmo/scenarios.json``) from a thread
of the harness and logs what it receives into the results directory, next to the row
that cites it; the agent drives the release in its own venv and sandbox."""

from __future__ import annotations

import json
import socket
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import Field

from matrix.ecosystems.pypi_env import UvVenv
from matrix.errors import StorageError
from matrix.execute import proc
from matrix.execute.redaction import redact, redact_file, strip_paths
from matrix.execute.sandbox import sandbox
from matrix.execute.storage import writing
from matrix.families.cosmo import background
from matrix.families.cosmo.checks import COSMO_RULES, SET_PREFIX, set_frames, set_target
from matrix.families.cosmo.standin import Scenario
from matrix.families.cosmo.verdicts import judge
from matrix.families.payload import Payload
from matrix.model import Cell, CellSettings, Row
from matrix.probes.report import parse_report

__all__ = ["PATHS", "SCENARIOS", "CosmoPayload", "run_cosmo", "scenario_for", "standin_log_path"]


class CosmoPayload(Payload):
    """What a Cosmo check carries beside its core: what the release's own models say the server
    may send it (the closed sets, read from its source)."""

    sdk_declared: dict[str, Any] = Field(default_factory=dict)


SCENARIOS: dict[str, Any] = json.loads((Path(__file__).parent / "scenarios.json").read_text())
AGENT = Path(__file__).parent / "agents" / "cosmo_python.py"

# How the agent reached a release (it reports which): shown on the site next to each row.
PATHS = {
    "websocket": "the release's own websocket transport, end to end against the stand-in",
    "room-relay": "the release's REST calls against the stand-in; its LiveKit room (not hostable here) replaced "
                  "at RealtimeSession._make_transport, the seam its own tests use, by a transport relaying the "
                  "same data-channel frames over HTTP, so its real frame encoder and decoder run",
    "none": "nothing to drive: the release has no client",
}


_CANARY = {"type": "model-text", "text": "canary", "is_final": True}
_LENIENT = ["session-start", "data-channel"]


def scenario_for(check: str) -> Scenario:
    if check.startswith(SET_PREFIX):  # a closed set read from a release's models
        known, unknown = set_frames(check)
        return Scenario(sessions=[[known, _CANARY], [unknown, _CANARY]], echo_text=False, lenient=list(_LENIENT))
    return Scenario.from_json(SCENARIOS[check])


def standin_log_path(results: Path, family: str, sdk: str, check: str) -> Path:
    return results.absolute() / "standin" / family / f"sdk-{sdk}" / f"{check}.jsonl"


def _read_log(path: Path) -> list[dict[str, Any]]:
    entries = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    for line in lines:
        try:
            entries.append(json.loads(line))
        except ValueError:
            continue
    return entries


def run_cosmo(cell: Cell, settings: CellSettings, scratch: Path, venv: UvVenv, results: Path,
              reaper: proc.Reaper | None = None) -> Row:
    probe, check = cell.probe, cell.mutation
    scenario = scenario_for(check)
    log = standin_log_path(results, cell.family, cell.sdk_version, check)
    with writing(log):
        log.parent.mkdir(parents=True, exist_ok=True)
        log.unlink(missing_ok=True)
    cfg: dict[str, Any] = {"check": check, "step_timeout": settings.call_timeout, "event_wait": 8}
    if check.startswith(SET_PREFIX):
        cfg.update(path=set_target(check)[1], two_sessions=True)
    with background.serving(scenario, log) as server, sandbox(scratch) as box:
        env = {**box.env, "COSMO_BASE_URL": server.url}
        argv = (str(venv.interpreter), "-I", str(AGENT), json.dumps(cfg))
        res = proc.run(proc.Request(argv, env, box.root, timeout=settings.probe_timeout, grace=settings.grace), reaper)
    if server.storage_error is not None:  # the log is evidence the verdict stands on: no row without it
        raise StorageError(log, server.storage_error)
    redact_file(log)
    report = parse_report(res.stdout)
    entries = _read_log(log)
    verdict = judge(check, report, res, entries, scenario)
    path = str(report.extra.get("path", "")) if report else ""
    detail: dict[str, Any] = {
        **verdict.detail,
        "path": path,
        "path_text": PATHS.get(path, ""),
        "api": report.api if report else {},
        "agent_env_names": report.extra.get("env_names") if report else None,
        "standin_log": str(log.relative_to(results.absolute())),
        "agent_stderr_tail": redact(res.stderr[-2000:]),
        "steps": [{"name": s.name, "ok": s.ok, "seconds": s.seconds} for s in report.steps] if report else [],
    }
    if verdict.error and verdict.error.traceback:
        detail["traceback"] = redact(verdict.error.traceback[-4000:])
    return Row(
        family=cell.family, sdk_version=cell.sdk_version, cli_version=cell.cli_version, probe=probe,
        mutation=check, outcome=verdict.outcome,
        payload=CosmoPayload(sdk_declared={"closed_sets": report.extra.get("closed_sets")}
                             if report and "closed_sets" in report.extra else {}).model_dump(mode="json"),
        error_type=verdict.error.type if verdict.error else None,
        error_message=redact(verdict.error.message) if verdict.error else None,
        seconds=round(res.elapsed, 3), leftovers_killed=[strip_paths(c) for c in res.leftovers], detail=detail,
        harness_version=COSMO_RULES.version(probe), measured_at=datetime.now(UTC).isoformat(timespec="seconds"),
        host=socket.gethostname(),
    )
