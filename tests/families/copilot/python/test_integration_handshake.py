"""Real packages from the registries, real probes: one cell of each main class.

Installs github-copilot-sdk 1.0.27 and 0.1.10 (uv venvs) and @github/copilot 1.0.102 and
0.0.354 (npm prefixes) into the user's compat-matrix cache, so a second run is warm."""

from __future__ import annotations

from pathlib import Path

import pytest

from matrix.execute import proc
from matrix.execute.cache import cache_root
from matrix.pipeline.config import Plan
from matrix.pipeline.runner import Cell, Runner
from matrix.store.results import Store, load_frame

pytestmark = pytest.mark.integration

EXPECTED = {
    # The SDK's own negotiation succeeds on protocol 3.
    ("1.0.27", "1.0.102"): "compatible",
    # 0.1.10 speaks protocol 1 only and says so: "SDK expects version 1, but server reports version 3".
    ("0.1.10", "1.0.102"): "refused",
    # 1.0.27 starts the CLI with --headless, which 0.0.354 does not know: the CLI exits at once.
    ("1.0.27", "0.0.354"): "launch-failed",
}


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    results = tmp_path_factory.mktemp("results")
    plan = Plan.model_validate({"families": {"copilot-python": {}}})
    runner = Runner(plan, Store(results), cache_root(), proc.Reaper())
    cells = [Cell("copilot-python", sdk, cli, "handshake") for sdk, cli in EXPECTED]
    runner.run(cells, jobs=2)
    return results


def test_shim_without_mutation_is_invisible(measured: Path, tmp_path: Path) -> None:
    """The same cells relayed through the recording shim give the same outcome and protocol."""
    plan = Plan.model_validate({"families": {"copilot-python": {}}})
    runner = Runner(plan, Store(tmp_path), cache_root(), proc.Reaper(), through_shim=True)
    runner.run([Cell("copilot-python", sdk, cli, "handshake") for sdk, cli in EXPECTED], jobs=2)
    direct, _ = load_frame(measured)
    shimmed, _ = load_frame(tmp_path)

    def view(frame):  # type: ignore[no-untyped-def]
        return {(r.sdk_version, r.cli_version): (r.outcome, r.protocol if r.protocol == r.protocol else None,
                                                 r.observed_cli_version) for r in frame.itertuples()}

    assert view(shimmed) == view(direct)


def test_each_cell_has_its_measured_class(measured: Path) -> None:
    frame, warnings = load_frame(measured)
    assert warnings == []
    got = {(r.sdk_version, r.cli_version): r.outcome for r in frame.itertuples()}
    assert got == EXPECTED, frame[["sdk_version", "cli_version", "outcome", "error_message"]].to_string()


def test_compatible_cell_ran_the_intended_cli_and_left_nothing(measured: Path) -> None:
    frame, _ = load_frame(measured)
    row = frame[(frame.sdk_version == "1.0.27") & (frame.cli_version == "1.0.102")].iloc[0]
    assert row.observed_cli_version == "1.0.102"
    assert row.protocol == 3
    assert not row.wrong_cli
    assert list(row.leftovers_killed) == []
    assert "--headless" in row.detail["launch_argv"]


def test_refusal_names_the_versions(measured: Path) -> None:
    frame, _ = load_frame(measured)
    row = frame[(frame.sdk_version == "0.1.10")].iloc[0]
    assert "version 1" in row.error_message and "version 3" in row.error_message
    assert row.message_names_versions is True
    # The launcher log proves 0.1.10 ran the CLI we installed, with its own flags.
    assert "--server" in row.detail["launch_argv"]


def test_launch_failure_carries_the_cli_error(measured: Path) -> None:
    frame, _ = load_frame(measured)
    row = frame[(frame.cli_version == "0.0.354")].iloc[0]
    assert "unknown option" in row.error_message


def test_sigterm_mid_cell_leaves_no_process_and_keeps_rows(tmp_path: Path) -> None:
    """0.1.10 × 0.0.354 waits ~30 s (the CLI exits, the SDK never notices): stop the run
    inside that cell. The run ends as interrupted, nothing it started stays alive, and the
    store holds only whole rows."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from matrix.execute.proc import marked_by

    def marked() -> list[int]:
        return [pid for pid, _ in marked_by(proc.pid)]  # this run's, not another harness's beside it

    config = tmp_path / "m.toml"
    config.write_text('[families.copilot-python]\nsdk.select = ["0.1.10"]\ncli.select = ["0.0.354"]\n')
    # The committed history has this cell; COMPAT_MATRIX_DATA="" reads none, so it is measured here.
    proc = subprocess.Popen([sys.executable, "-m", "matrix.commands.cli", "run", "--config", str(config),
                             "--results", str(tmp_path / "r")],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            env={**os.environ, "COMPAT_MATRIX_DATA": ""})
    try:
        deadline = time.monotonic() + 120
        while not marked() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert marked(), "the probe never started"
        time.sleep(3)
        os.kill(proc.pid, signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, out.decode()
    assert marked() == []
    frame, warnings = load_frame(tmp_path / "r")
    assert warnings == [] and frame.empty  # the interrupted cell is not recorded as anything
