"""copilot-java: the Maven artifact ``com.github:copilot-sdk-java`` against the ``@github/copilot``
CLI (npm). Each release the repositories serve is resolved by Maven (its jar and dependencies)
and a Java agent is compiled against it; its releases come through mvn (``ecosystem.py``,
registered as the ecosystem ``maven``), so a release is picked up as soon as it is served."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from matrix.execute.environment import Environment
from matrix.families.base import Context, MakeEnv
from matrix.families.copilot.agent_run import AgentCommand, AgentRun
from matrix.families.copilot.cli import CliInstall, Runtime
from matrix.families.copilot.compiled import run_compiled_handshake
from matrix.families.copilot.family import CopilotFamily
from matrix.families.copilot.handshake import HandshakeCell
from matrix.families.copilot.java.environment import JavaAgent
from matrix.model import Cell, Row

__all__ = ["CopilotJava", "family"]


@dataclass(frozen=True)
class CopilotJava(CopilotFamily):
    phases: tuple[str, ...] = ("handshake",)

    def sdk_environment(self, cell: Cell, make: MakeEnv) -> Environment:
        return make(JavaAgent, "sdk", self.sdk_package, cell.sdk_version)

    def run(self, cell: Cell, hs: HandshakeCell, sdk: Environment, cli: CliInstall, runtime: Runtime,
            ctx: Context) -> Row:
        assert isinstance(sdk, JavaAgent)
        def extra(run: AgentRun) -> dict[str, Any]:
            return {"ping_protocol": run.report.extra.get("ping_protocol")} if run.report else {}

        # The class path is resolved before the agent compiles: it is there when javac failed too.
        return run_compiled_handshake(hs, AgentCommand(sdk.command()), sdk.build_errors, sdk.classes, cli, runtime,
                                      ctx.reaper, extra)


family = CopilotJava(
    name="copilot-java",
    description="the Maven artifact com.github:copilot-sdk-java against the @github/copilot CLI (npm)",
    sdk_ecosystem="maven",
    sdk_package="com.github:copilot-sdk-java",
    probes=("handshake",),
)
