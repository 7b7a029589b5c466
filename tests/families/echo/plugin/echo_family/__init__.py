"""echo: a family written for the test suite, as a third party would write one.

Its SDK (``echo-sdk``) and its CLI (``echo-cli``) are small programs published as wheels to a
local package index; it registers itself through the ``compat_matrix.families`` entry point of
this distribution. Everything it uses from compat-matrix is public: the ``Family`` interface,
the uv venv environment, the sandbox and the process runner."""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from matrix.ecosystems.pypi_env import UvVenv
from matrix.execute import proc
from matrix.execute.environment import Environment
from matrix.execute.sandbox import sandbox
from matrix.families.base import Context, Family, MakeEnv, Planning, SiteView
from matrix.model import Cell, Outcome, Row

AGENT = Path(__file__).parent / "agent.py"
# Its one probe: a message sent and echoed back. Its cells pair an SDK release with a CLI release,
# so the site gives it a matrix, release pages, pins and can-i-ship (it names no probe "handshake").
ROUNDTRIP = "roundtrip"


def verdict(res: proc.Result) -> tuple[Outcome, str | None, str | None]:
    """What the agent's report says about the cell: outcome, error type, error message."""
    if res.timed_out:
        return Outcome.HANG, None, "no answer before the deadline"
    lines = res.stdout.strip().splitlines()
    try:
        report = json.loads(lines[-1]) if lines else None
    except ValueError:
        report = None
    if not isinstance(report, dict):
        return Outcome.CRASHED, None, res.stderr.strip()[-500:] or f"the agent exited {res.returncode}, no report"
    if report.get("ok"):
        return Outcome.COMPATIBLE, None, None
    kind = str(report.get("type"))
    return (Outcome.REFUSED if kind == "VersionMismatch" else Outcome.CRASHED), kind, report.get("message")


@dataclass(frozen=True)
class Echo(Family):
    def plan(self, phase: str, planning: Planning) -> list[Cell]:
        return [Cell(self.name, s, c, ROUNDTRIP) for s in planning.sdk_versions for c in planning.cli_versions]

    def environments(self, cell: Cell, make: MakeEnv) -> tuple[Environment, Environment | None]:
        return (make(UvVenv, "sdk", self.sdk_package, cell.sdk_version),
                make(UvVenv, "cli", self.cli_package, cell.cli_version))

    def measure(self, cell: Cell, sdk: Environment, other: Environment | None, ctx: Context) -> Row:
        assert isinstance(sdk, UvVenv) and isinstance(other, UvVenv)
        with sandbox(ctx.scratch) as box:
            argv = (str(sdk.interpreter), "-I", str(AGENT), str(other.location / "bin" / "echo-cli"))
            res = proc.run(proc.Request(argv, box.env, box.root, timeout=ctx.settings.probe_timeout,
                                        grace=ctx.settings.grace), ctx.reaper)
        outcome, error_type, message = verdict(res)
        return Row(family=cell.family, sdk_version=cell.sdk_version, cli_version=cell.cli_version,
                   probe=cell.probe, outcome=outcome, error_type=error_type, error_message=message,
                   seconds=round(res.elapsed, 3), leftovers_killed=list(res.leftovers),
                   harness_version=self.rules.version(cell.probe),
                   measured_at=datetime.now(UTC).isoformat(timespec="seconds"), host=socket.gethostname())

    def pages(self, view: SiteView) -> dict[str, str]:
        frame = view.frame
        mine = frame[frame["family"] == self.name]
        if mine.empty:
            return {}
        refused = mine[mine["outcome"] == Outcome.REFUSED]
        lines = [f"- echo-sdk {r.sdk_version} × echo-cli {r.cli_version}: {r.error_message}"
                 for r in refused.itertuples()]
        return {"echo/index.md": "# echo\n\nWhat the echo SDK says when it refuses a CLI:\n\n" + "\n".join(lines)
                + "\n"}


family = Echo(name="echo", description="echo-sdk against echo-cli (a family of the test suite)",
              sdk_ecosystem="pypi", sdk_package="echo-sdk", cli_ecosystem="pypi", cli_package="echo-cli",
              probes=(ROUNDTRIP,), phases=(ROUNDTRIP,), pair_probe=ROUNDTRIP)
