"""copilot-java: the Maven artifact ``com.github:copilot-sdk-java`` against the ``@github/copilot``
CLI (npm). Each release the repositories serve is resolved by Maven (its jar and dependencies)
and a Java agent is compiled against it, which runs every probe (``measure.py``); its releases
come through mvn (``ecosystem.py``, registered as the ecosystem ``maven``), so a release is
picked up as soon as it is served."""

from __future__ import annotations

from dataclasses import dataclass

from matrix.execute.environment import Environment
from matrix.families.base import Context, MakeEnv
from matrix.families.copilot.cli import CliInstall, Runtime
from matrix.families.copilot.family import CopilotFamily
from matrix.families.copilot.handshake import HandshakeCell
from matrix.families.copilot.java.environment import JavaAgent
from matrix.families.copilot.java.measure import (
    run_java_handshake,
    run_java_session,
    run_java_tolerance,
    run_java_tolerance_batch,
)
from matrix.families.copilot.payload import SESSION
from matrix.families.copilot.tolerance import measure_rule
from matrix.model import Cell, Row

__all__ = ["CopilotJava", "family"]


@dataclass(frozen=True)
class CopilotJava(CopilotFamily):
    phases: tuple[str, ...] = ("handshake", "session", "tolerance")

    def sdk_environment(self, cell: Cell, make: MakeEnv) -> Environment:
        return make(JavaAgent, "sdk", self.sdk_package, cell.sdk_version)

    def run(self, cell: Cell, hs: HandshakeCell, sdk: Environment, cli: CliInstall, runtime: Runtime,
            ctx: Context) -> Row:
        assert isinstance(sdk, JavaAgent)
        if cell.probe == "tolerance":
            return measure_rule(
                ctx, cell, hs, lambda rule: run_java_tolerance(hs, rule, sdk, cli, runtime, ctx.results, ctx.reaper),
                lambda rules: run_java_tolerance_batch(hs, rules, sdk, cli, runtime, ctx.results, ctx.reaper))
        if cell.probe == SESSION:
            return run_java_session(hs, sdk, cli, runtime, ctx.results, ctx.reaper)
        return run_java_handshake(hs, sdk, cli, runtime, ctx.reaper)


family = CopilotJava(
    name="copilot-java",
    description="the Maven artifact com.github:copilot-sdk-java against the @github/copilot CLI (npm)",
    sdk_ecosystem="maven",
    sdk_package="com.github:copilot-sdk-java",
    probes=("handshake", "session", "tolerance"),
    batches=True,
)
