"""Our logic for the Go family: discovery when the proxy refuses the version list, and a
version the agent does not compile against (fakes for the go command and the build)."""

from __future__ import annotations

from pathlib import Path

import pytest

from matrix.ecosystems import discovery as registry
from matrix.families.copilot.cli import CliInstall, Runtime
from matrix.families.copilot.go.environment import GO_BUILD_ERRORS, GoAgent
from matrix.families.copilot.go.measure import run_go_handshake
from matrix.families.copilot.handshake import HandshakeCell
from matrix.model import Outcome


def test_a_refused_version_list_falls_back_to_the_sibling_sdks_numbers(monkeypatch: pytest.MonkeyPatch) -> None:
    class Res:
        def __init__(self, ok: bool, stdout: str = "", stderr: str = "") -> None:
            self.ok, self.stdout, self.stderr, self.timed_out = ok, stdout, stderr, False

    served = {"1.0.0", "0.3.0"}

    def fake_run(req: object, reaper: object = None) -> Res:
        argv = req.argv  # type: ignore[attr-defined]
        if "-versions" in argv:
            return Res(False, stderr="reading .../@v/list: 403 Forbidden\n\tserver response: not available")
        version = argv[-1].rsplit("@v", 1)[1]
        if version in served:
            return Res(True, stdout=f'{{"Version": "v{version}", "Time": "2026-06-02T14:31:31Z"}}')
        return Res(False, stderr=f"reading .../@v/v{version}.info: 403 Forbidden")

    monkeypatch.setattr(registry.proc, "run", fake_run)
    monkeypatch.setattr(registry, "go_command", lambda *a: (("go", *a), {}))
    found, note = registry.fetch_go("example.com/m/go", ["1.0.0", "0.3.0", "0.2.9", "1.0.0"])
    assert sorted(r.version for r in found) == ["0.3.0", "1.0.0"] and found[0].released_at
    assert note is not None and "2 of 3" in note
    with pytest.raises(registry.InfraError):
        registry.fetch_go("example.com/m/go", [])  # nothing to ask for: the refusal is the answer


def test_a_version_the_agent_does_not_compile_against_is_crashed_with_the_compilers_words(tmp_path: Path) -> None:
    agent = GoAgent(package="github.com/github/copilot-sdk/go", version="9.9.9", location=tmp_path / "env")
    agent.location.mkdir()
    (agent.location / GO_BUILD_ERRORS).write_text("./main.go:12:3: undefined: copilot.NewClient")
    cell = HandshakeCell("copilot-go", "9.9.9", "1.0.102", 60, 30, 5, tmp_path / "scratch")
    cli = CliInstall("1.0.102", tmp_path / "entry.js", None, "", {})
    row = run_go_handshake(cell, agent, cli, Runtime("node20", tmp_path / "node"))
    assert row.outcome == Outcome.CRASHED.value and row.error_type == "CompileError"
    assert "undefined: copilot.NewClient" in (row.error_message or "")
