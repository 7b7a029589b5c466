"""github-copilot-sdk (PyPI): its handshake, session and tolerance agents, run in the SDK's uv venv."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from matrix.ecosystems.pypi_env import UvVenv
from matrix.execute import proc
from matrix.families.copilot.cli import CliInstall, Runtime
from matrix.families.copilot.handshake import Attempt, HandshakeCell, measure_handshake
from matrix.families.copilot.session.probe import run_session
from matrix.families.copilot.tolerance import run_batch, run_tolerance
from matrix.model import Row

__all__ = ["AGENTS", "run_python_handshake", "run_python_session", "run_python_tolerance",
           "run_python_tolerance_batch"]

AGENTS = Path(__file__).parent / "agents"


def run_python_handshake(
    cell: HandshakeCell, venv: UvVenv, cli: CliInstall, runtime: Runtime,
    reaper: proc.Reaper | None = None,
) -> Row:
    def once() -> Attempt:
        return Attempt(cell.run_agent(AGENTS / "copilot_python_handshake.py", cell.python_agent(venv), cli, runtime,
                                      reaper))

    return measure_handshake(cell, once, runtime, cli)


def run_python_tolerance(cell: HandshakeCell, rule: str, venv: UvVenv, cli: CliInstall, runtime: Runtime,
                         results: Path, reaper: proc.Reaper | None = None) -> Row:
    return run_tolerance(AGENTS / "copilot_python_tolerance.py", cell.python_agent(venv), {}, cell, rule, cli, runtime,
                         results, reaper)


def run_python_tolerance_batch(cell: HandshakeCell, rules: Sequence[str], venv: UvVenv, cli: CliInstall,
                               runtime: Runtime, results: Path, reaper: proc.Reaper | None = None) -> dict[str, Row]:
    return run_batch(AGENTS / "copilot_python_tolerance.py", cell.python_agent(venv), {}, cell, rules, cli, runtime,
                     results, reaper)


def run_python_session(cell: HandshakeCell, venv: UvVenv, cli: CliInstall, runtime: Runtime, results: Path,
                       reaper: proc.Reaper | None = None) -> Row:
    return run_session(AGENTS / "copilot_python_session.py", cell.python_agent(venv), {"no_login": True}, cell, cli,
                       runtime, results, reaper)
