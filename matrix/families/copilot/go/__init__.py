"""copilot-go: the Go module ``github.com/github/copilot-sdk/go`` against the ``@github/copilot``
CLI (npm). One agent binary is built against each release (its environment) and runs both
probes."""

from __future__ import annotations

from dataclasses import dataclass

from matrix.execute.environment import Environment
from matrix.families.base import Context, MakeEnv
from matrix.families.copilot.cli import CliInstall, Runtime
from matrix.families.copilot.family import CopilotFamily
from matrix.families.copilot.go.environment import GoAgent
from matrix.families.copilot.go.measure import (
    run_go_handshake,
    run_go_session,
    run_go_tolerance,
    run_go_tolerance_batch,
)
from matrix.families.copilot.handshake import HandshakeCell
from matrix.families.copilot.payload import SESSION
from matrix.families.copilot.tolerance import measure_rule
from matrix.model import Cell, Row

__all__ = ["CopilotGo", "family"]


@dataclass(frozen=True)
class CopilotGo(CopilotFamily):
    phases: tuple[str, ...] = ("handshake", "session", "tolerance")

    def sdk_environment(self, cell: Cell, make: MakeEnv) -> Environment:
        return make(GoAgent, "sdk", self.sdk_package, cell.sdk_version)

    def run(self, cell: Cell, hs: HandshakeCell, sdk: Environment, cli: CliInstall, runtime: Runtime,
            ctx: Context) -> Row:
        assert isinstance(sdk, GoAgent)
        if cell.probe == "tolerance":
            return measure_rule(
                ctx, cell, hs, lambda rule: run_go_tolerance(hs, rule, sdk, cli, runtime, ctx.results, ctx.reaper),
                lambda rules: run_go_tolerance_batch(hs, rules, sdk, cli, runtime, ctx.results, ctx.reaper))
        if cell.probe == SESSION:
            return run_go_session(hs, sdk, cli, runtime, ctx.results, ctx.reaper)
        return run_go_handshake(hs, sdk, cli, runtime, ctx.reaper)


family = CopilotGo(
    name="copilot-go",
    description="the Go module github.com/github/copilot-sdk/go against the @github/copilot CLI (npm)",
    sdk_ecosystem="go",
    sdk_package="github.com/github/copilot-sdk/go",
    probes=("handshake", "session", "tolerance"),
    version_hints=(("pypi", "github-copilot-sdk"), ("npm", "@github/copilot-sdk")),
    batches=True,
)
