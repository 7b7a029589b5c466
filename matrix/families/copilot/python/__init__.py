"""copilot-python: ``github-copilot-sdk`` (PyPI, import ``copilot``) against the
``@github/copilot`` CLI (npm). Its agents run with the SDK venv's interpreter, warm-started
from a server that imports the release once."""

from __future__ import annotations

from dataclasses import dataclass

from matrix.ecosystems.pypi_env import UvVenv
from matrix.execute.environment import Environment
from matrix.families.base import Context, MakeEnv
from matrix.families.copilot.cli import CliInstall, Runtime
from matrix.families.copilot.family import CopilotFamily
from matrix.families.copilot.handshake import HandshakeCell
from matrix.families.copilot.payload import SESSION
from matrix.families.copilot.python.contract import run_python_contract
from matrix.families.copilot.python.measure import (
    run_python_handshake,
    run_python_session,
    run_python_tolerance,
    run_python_tolerance_batch,
)
from matrix.families.copilot.tolerance import measure_rule
from matrix.model import Cell, Row

__all__ = ["CopilotPython", "family"]


@dataclass(frozen=True)
class CopilotPython(CopilotFamily):
    def sdk_environment(self, cell: Cell, make: MakeEnv) -> Environment:
        return make(UvVenv, "sdk", self.sdk_package, cell.sdk_version, **({"extras": self.sdk_extras}
                                                                          if self.sdk_extras else {}))

    def prepare_sdk(self, env: Environment, ctx: Context) -> None:
        assert isinstance(env, UvVenv)
        with ctx.warm.use(env.interpreter, self.preload, env.location.name):
            pass

    def run(self, cell: Cell, hs: HandshakeCell, sdk: Environment, cli: CliInstall, runtime: Runtime,
            ctx: Context) -> Row:
        assert isinstance(sdk, UvVenv)
        if cell.probe == "contract":
            return run_python_contract(hs, sdk, cli, runtime, ctx.reaper)
        if cell.probe == "tolerance":
            return measure_rule(
                ctx, cell, hs,
                lambda rule: run_python_tolerance(hs, rule, sdk, cli, runtime, ctx.results, ctx.reaper),
                lambda rules: run_python_tolerance_batch(hs, rules, sdk, cli, runtime, ctx.results, ctx.reaper))
        if cell.probe == SESSION:
            return run_python_session(hs, sdk, cli, runtime, ctx.results, ctx.reaper)
        return run_python_handshake(hs, sdk, cli, runtime, ctx.reaper)


family = CopilotPython(
    name="copilot-python",
    description="github-copilot-sdk (PyPI) against the @github/copilot CLI (npm)",
    sdk_ecosystem="pypi",
    sdk_package="github-copilot-sdk",
    probes=("handshake", "session", "tolerance", "contract"),
    preload=("copilot",),
    batches=True,
)
