"""The failure contract of the Copilot SDK's version negotiation design, checked on pairs
whose handshake failed: did the SDK terminate the CLI, reject the call queued behind the
start promptly, and leave no files?"""

from __future__ import annotations

from typing import Any

from matrix.ecosystems.pypi_env import UvVenv
from matrix.execute import proc
from matrix.families.copilot.agent_run import run_agent
from matrix.families.copilot.cli import CliInstall, Runtime
from matrix.families.copilot.handshake import HandshakeCell, build_row
from matrix.families.copilot.handshake_verdict import classify_handshake
from matrix.families.copilot.python.measure import AGENTS
from matrix.model import Row

__all__ = ["PROMPT_SECONDS", "run_python_contract"]

PROMPT_SECONDS = 2.0  # a queued call settled within this after the failed start counts as prompt


def judge(contract: dict[str, Any], leftovers: list[str], home_files: list[str]) -> dict[str, Any]:
    queued = contract.get("queued_call") or {}
    settled = contract.get("queued_settled_after_start_s")
    return {
        "cli_terminated": not contract.get("cli_alive_after_failure") and not leftovers,
        "cli_gone_after_s": contract.get("cli_gone_after_s"),
        "queued_call_rejected": queued.get("ok") is False and settled is not None and settled <= PROMPT_SECONDS,
        "queued_call": queued,
        "queued_settled_after_start_s": settled,
        "no_files_written": not home_files,
        "files_written": home_files[:20],
    }


def run_python_contract(cell: HandshakeCell, venv: UvVenv, cli: CliInstall, runtime: Runtime,
                        reaper: proc.Reaper | None = None) -> Row:
    cfg = {"step_timeout": cell.call_timeout}
    run = run_agent(AGENTS / "copilot_python_contract.py", cfg, cell.python_agent(venv), cli, runtime,
                    cell.probe_timeout, cell.grace, cell.scratch, reaper, waiting=cell.waiting)
    verdict = classify_handshake(run.report, run.result, cell.expected_cli(run), run.launches)
    contract = run.report.extra.get("contract", {}) if run.report else {}
    return build_row(cell, "contract", "", run, verdict, runtime, cli,
                     extra={"contract": judge(contract, list(run.result.leftovers), run.home_files)})
