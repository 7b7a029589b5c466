"""copilot-node: ``@github/copilot-sdk`` (npm) against the ``@github/copilot`` CLI (npm). Its
agents run with the first Node runtime that imports the release."""

from __future__ import annotations

from dataclasses import dataclass

from matrix.ecosystems.npm_env import NpmPrefix
from matrix.execute.environment import Environment
from matrix.families.base import Context, MakeEnv
from matrix.families.copilot.cli import CliInstall, Runtime
from matrix.families.copilot.family import CopilotFamily, runtimes
from matrix.families.copilot.handshake import HandshakeCell
from matrix.families.copilot.node.measure import (
    run_node_handshake,
    run_node_session,
    run_node_tolerance,
    run_node_tolerance_batch,
)
from matrix.families.copilot.node.sdk import NodeSdk, agent_command, prepare_node_sdk
from matrix.families.copilot.payload import SESSION
from matrix.families.copilot.tolerance import measure_rule
from matrix.model import Cell, Row

__all__ = ["CopilotNode", "family"]


def node_sdk(prefix: NpmPrefix, ctx: Context) -> NodeSdk:
    return ctx.memo(("node-sdk", prefix.location),
                    lambda: prepare_node_sdk(prefix, runtimes(ctx), ctx.scratch, timeout=ctx.settings.probe_timeout))


@dataclass(frozen=True)
class CopilotNode(CopilotFamily):
    phases: tuple[str, ...] = ("handshake", "session", "tolerance")

    def sdk_environment(self, cell: Cell, make: MakeEnv) -> Environment:
        return make(NpmPrefix, "sdk", self.sdk_package, cell.sdk_version)

    def prepare_sdk(self, env: Environment, ctx: Context) -> None:
        assert isinstance(env, NpmPrefix)
        command = agent_command(node_sdk(env, ctx), ctx.ahead)
        ctx.ahead.ready(command.prefix, command.preload)  # the first cell's agent, started before it

    def run(self, cell: Cell, hs: HandshakeCell, sdk: Environment, cli: CliInstall, runtime: Runtime,
            ctx: Context) -> Row:
        assert isinstance(sdk, NpmPrefix)
        if cell.probe == "tolerance":
            env = node_sdk(sdk, ctx)
            return measure_rule(
                ctx, cell, hs, lambda rule: run_node_tolerance(hs, rule, env, cli, runtime, ctx.results, ctx.reaper),
                lambda rules: run_node_tolerance_batch(hs, rules, env, cli, runtime, ctx.results, ctx.reaper))
        if cell.probe == SESSION:
            return run_node_session(hs, node_sdk(sdk, ctx), cli, runtime, ctx.results, ctx.reaper)
        return run_node_handshake(hs, node_sdk(sdk, ctx), cli, runtime, ctx.reaper)


family = CopilotNode(
    name="copilot-node",
    description="@github/copilot-sdk (npm) against the @github/copilot CLI (npm)",
    sdk_ecosystem="npm",
    sdk_package="@github/copilot-sdk",
    probes=("handshake", "session", "tolerance"),
    batches=True,
)
