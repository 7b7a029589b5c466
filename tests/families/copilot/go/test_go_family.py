"""Our logic for the Go family: a version the agent does not compile against (a fake build)."""

from __future__ import annotations

from pathlib import Path

from matrix.families.copilot.cli import CliInstall, Runtime
from matrix.families.copilot.go.environment import GO_BUILD_ERRORS, GoAgent
from matrix.families.copilot.go.measure import run_go_handshake
from matrix.families.copilot.handshake import HandshakeCell
from matrix.model import Outcome


def test_a_version_the_agent_does_not_compile_against_is_crashed_with_the_compilers_words(tmp_path: Path) -> None:
    agent = GoAgent(package="github.com/github/copilot-sdk/go", version="9.9.9", location=tmp_path / "env")
    agent.location.mkdir()
    (agent.location / GO_BUILD_ERRORS).write_text("./main.go:12:3: undefined: copilot.NewClient")
    cell = HandshakeCell("copilot-go", "9.9.9", "1.0.102", 60, 30, 5, tmp_path / "scratch")
    cli = CliInstall("1.0.102", tmp_path / "entry.js", None, "", {})
    row = run_go_handshake(cell, agent, cli, Runtime("node20", tmp_path / "node"))
    assert row.outcome == Outcome.CRASHED.value and row.error_type == "CompileError"
    assert "undefined: copilot.NewClient" in (row.error_message or "")
