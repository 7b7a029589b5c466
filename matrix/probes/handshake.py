"""The handshake probe for github-copilot-sdk: start, negotiate, ping, status, stop."""

from __future__ import annotations

import json
import re
import socket
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from .. import HARNESS_VERSION, proc
from ..classify import classify_handshake, grade_message
from ..envs import UvVenv
from ..products.copilot_cli import CliInstall, Runtime, read_launches, write_launcher
from ..report_schema import parse_report
from ..sandbox import sandbox
from ..store import Row
from . import AGENTS_DIR

__all__ = ["HandshakeCell", "redact", "run_python_handshake"]

_TOKENISH = re.compile(r"\b(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|"
                       r"(?:sk|xox[abp])-[A-Za-z0-9-]{20,})\b")


def redact(text: str) -> str:
    """Third-party output may echo a credential; keep its shape, drop its value."""
    return _TOKENISH.sub("[redacted-token]", text)


@dataclass(frozen=True)
class HandshakeCell:
    family: str
    sdk_version: str
    cli_version: str
    probe_timeout: float
    call_timeout: float
    grace: float
    scratch: Path


def run_python_handshake(
    cell: HandshakeCell, venv: UvVenv, cli: CliInstall, runtime: Runtime,
    reaper: proc.Reaper | None = None,
) -> Row:
    with sandbox(cell.scratch, path_dirs=[runtime.node.parent]) as box:
        launcher, log = write_launcher(box.root, cli, runtime)
        env = dict(box.env)
        # Every way a version may look for its CLI points at our launcher; none downloads.
        env.update(COPILOT_CLI_PATH=str(launcher), COPILOT_SKIP_CLI_DOWNLOAD="1")
        cfg = {"cli_path": str(launcher), "step_timeout": cell.call_timeout, "log_level": "error"}
        argv = (str(venv.interpreter), "-I", str(AGENTS_DIR / "copilot_python_handshake.py"),
                json.dumps(cfg))
        res = proc.run(proc.Request(argv, env, box.root, timeout=cell.probe_timeout,
                                    grace=cell.grace), reaper)
        launches = read_launches(log)
    report = parse_report(res.stdout)
    verdict = classify_handshake(report, res, cell.cli_version, launches)
    message = redact(verdict.error.message) if verdict.error else None
    names, actionable = grade_message(message) if verdict.outcome != "compatible" else (None, None)
    seconds = {s.name: s.seconds for s in report.steps} if report else {}
    detail: dict[str, object] = dict(verdict.detail)
    detail.update(
        launch_argv=launches[0][:40] if launches else None,
        launches=len(launches),
        api=report.api if report else None,
        warnings=[redact(w) for w in report.warnings][:20] if report else [],
        agent_stderr_tail=redact(res.stderr[-2000:]),
        runtime_failures=cli.runtime_failures,
    )
    if verdict.error and verdict.error.traceback:
        detail["traceback"] = redact(verdict.error.traceback[-4000:])
    return Row(
        family=cell.family,
        sdk_version=cell.sdk_version,
        cli_version=cell.cli_version,
        probe="handshake",
        outcome=str(verdict.outcome),
        protocol=report.negotiated_protocol if report and verdict.outcome in ("compatible", "degraded") else None,
        observed_cli_version=report.observed_cli_version if report else None,
        error_type=verdict.error.type if verdict.error else None,
        error_message=message,
        message_names_versions=names,
        message_actionable=actionable,
        seconds=round(res.elapsed, 3),
        start_seconds=seconds.get("start"),
        calls_seconds=round(seconds.get("ping", 0.0) + seconds.get("get_status", 0.0), 4)
        if "ping" in seconds else None,
        stop_seconds=seconds.get("stop"),
        sdk_declared=report.declared if report else {},
        node_runtime=runtime.label,
        leftovers_killed=list(res.leftovers),
        wrong_cli=verdict.wrong_cli,
        detail=detail,
        harness_version=HARNESS_VERSION,
        measured_at=datetime.now(UTC).isoformat(timespec="seconds"),
        host=socket.gethostname(),
    )
