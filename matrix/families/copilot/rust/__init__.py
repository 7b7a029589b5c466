"""copilot-rust: the crate ``github-copilot-sdk`` against the ``@github/copilot`` CLI (npm). One
agent binary is built against each release (its environment), without the crate's bundled CLI,
and given the CLI by path; it runs every probe. Its releases come from crates.io through cargo
(``ecosystem.py``, registered as the ecosystem ``crates``)."""

from __future__ import annotations

from dataclasses import dataclass

from matrix.execute.environment import Environment
from matrix.families.base import Context, MakeEnv
from matrix.families.copilot.cli import CliInstall, Runtime
from matrix.families.copilot.family import CopilotFamily
from matrix.families.copilot.handshake import HandshakeCell
from matrix.families.copilot.payload import SESSION
from matrix.families.copilot.rust.environment import RustAgent
from matrix.families.copilot.rust.measure import (
    run_rust_handshake,
    run_rust_session,
    run_rust_tolerance,
    run_rust_tolerance_batch,
)
from matrix.families.copilot.tolerance import measure_rule
from matrix.model import Cell, Row

__all__ = ["CopilotRust", "family"]


@dataclass(frozen=True)
class CopilotRust(CopilotFamily):
    phases: tuple[str, ...] = ("handshake", "session", "tolerance")

    def sdk_environment(self, cell: Cell, make: MakeEnv) -> Environment:
        return make(RustAgent, "sdk", self.sdk_package, cell.sdk_version)

    def run(self, cell: Cell, hs: HandshakeCell, sdk: Environment, cli: CliInstall, runtime: Runtime,
            ctx: Context) -> Row:
        assert isinstance(sdk, RustAgent)
        if cell.probe == "tolerance":
            return measure_rule(
                ctx, cell, hs, lambda rule: run_rust_tolerance(hs, rule, sdk, cli, runtime, ctx.results, ctx.reaper),
                lambda rules: run_rust_tolerance_batch(hs, rules, sdk, cli, runtime, ctx.results, ctx.reaper))
        if cell.probe == SESSION:
            return run_rust_session(hs, sdk, cli, runtime, ctx.results, ctx.reaper)
        return run_rust_handshake(hs, sdk, cli, runtime, ctx.reaper)


family = CopilotRust(
    name="copilot-rust",
    description="the crate github-copilot-sdk against the @github/copilot CLI (npm)",
    sdk_ecosystem="crates",
    sdk_package="github-copilot-sdk",
    probes=("handshake", "session", "tolerance"),
    batches=True,
)
