"""A CLI that reports another version than its own: asked with no SDK (matrix/families/copilot/cli_status.py),
and only then its cells are judged as its own; otherwise the wrong-CLI rule stands."""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from matrix.execute import proc
from matrix.families.copilot.agent_run import AgentRun
from matrix.families.copilot.handshake import HandshakeCell
from matrix.probes.report import AgentReport
from tests.conftest import ROOT

STATUS = ROOT / "matrix" / "families" / "copilot" / "cli_status.py"
# A stand-in "CLI" (Content-Length framed JSON-RPC on stdio) answering status.get.
FAKE = textwrap.dedent("""
    import json, sys
    if "--refuse" in sys.argv:
        sys.exit(1)
    head = b""
    while not head.endswith(b"\\r\\n\\r\\n"):
        head += sys.stdin.buffer.read(1)
    length = int(head.split(b":")[1].split(b"\\r")[0])
    request = json.loads(sys.stdin.buffer.read(length))
    body = json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {"version": "0.0.1"}}).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\\r\\n\\r\\n" % len(body) + body)
    sys.stdout.buffer.flush()
    sys.stdin.buffer.read()
""")


def ask(tmp_path: Path, *extra: str) -> object:
    fake = tmp_path / "fake_cli.py"
    fake.write_text(FAKE)
    res = proc.run(proc.Request((sys.executable, "-I", str(STATUS), sys.executable, str(fake), *extra),
                                {"PATH": "/usr/bin:/bin"}, tmp_path, timeout=30))
    return json.loads(res.stdout.strip().splitlines()[-1])["version"]


def test_the_status_client_prints_what_the_cli_says(tmp_path: Path) -> None:
    assert ask(tmp_path) == "0.0.1"


def test_a_cli_that_refuses_says_nothing(tmp_path: Path) -> None:
    assert ask(tmp_path, "--refuse") is None


def run_with(seen: str | None, launches: int) -> AgentRun:
    report = AgentReport(steps=(), observed_cli_version=seen)
    return AgentRun(report, proc.Result((), 0, "", "", 0.0, 0.0, False), [["--stdio"]] * launches, [])


def cell(says: Callable[[], str | None] | None) -> HandshakeCell:
    return HandshakeCell("copilot-python", "1.0.0", "1.0.81", 30, 30, 3, Path("/nonexistent"), cli_says=says)


@pytest.mark.parametrize(("seen", "launches", "says", "expected"), [
    ("0.0.1", 1, "0.0.1", "0.0.1"),  # the CLI misreports to everyone: the SDK ran ours
    ("0.0.1", 1, "1.0.81", "1.0.81"),  # ours says otherwise: another CLI answered the SDK
    ("0.0.1", 1, None, "1.0.81"),  # ours does not answer us: no evidence, the rule stands
    ("0.0.1", 2, "0.0.1", "1.0.81"),  # two starts: which one answered is unknown
    ("1.0.81", 1, "0.0.1", "1.0.81"),
    (None, 1, "0.0.1", "1.0.81"),
])
def test_the_version_a_cell_expects(seen: str | None, launches: int, says: str | None, expected: str) -> None:
    asked: list[int] = []

    def cli_says() -> str | None:
        asked.append(1)
        return says

    assert cell(cli_says).expected_cli(run_with(seen, launches)) == expected
    assert not asked or (seen not in (None, "1.0.81") and launches == 1)  # asked only when it matters
    assert cell(None).expected_cli(run_with(seen, launches)) == "1.0.81"


def test_what_a_release_says_is_asked_once_per_install_and_runtime_and_no_answer_is_not_kept(tmp_path: Path) -> None:
    from matrix.families.copilot.cli import SAYS_FILE, CliInstall, Runtime, self_reported_version

    fake, home, scratch = tmp_path / "fake_cli.py", tmp_path / "prefix", tmp_path / "scratch"
    home.mkdir()
    scratch.mkdir()
    fake.write_text(FAKE)
    cli = CliInstall("1.0.81", fake, None, "", {}, home=home)
    python = Runtime("node20", Path(sys.executable))
    assert self_reported_version(cli, python, scratch, 30) == "0.0.1"
    fake.write_text("import sys; sys.exit(1)\n")  # it would say nothing now: the kept answer stands
    assert self_reported_version(cli, python, scratch, 30) == "0.0.1"
    assert self_reported_version(cli, Runtime("node24", Path(sys.executable)), scratch, 30) is None
    (home / SAYS_FILE).unlink()
    assert self_reported_version(cli, python, scratch, 30) is None
    assert not (home / SAYS_FILE).exists()  # asked again next run
