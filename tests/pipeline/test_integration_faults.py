"""Faults injected for real: the run killed with SIGKILL at a random moment and run again;
SIGINT in the middle of a cell; a full disk under the environment cache."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from matrix.execute.proc import marked_by
from tests.conftest import ROOT

pytestmark = pytest.mark.integration

COSMO = ('[families.cosmo-python]\nprobes = ["identity", "strictness"]\n'
         'sdk.select = ["0.4.0", "0.5.1", "0.6.0", "0.6.1"]\n')


def marked(*runs: subprocess.Popen[bytes]) -> list[str]:
    """What is alive of these runs: the commands, so a failure says what outlived its run.
    Only theirs: under --cells-apart a test on the other worker may run a harness meanwhile."""
    return [command for _, command in marked_by(*(r.pid for r in runs))]


def _interruptible() -> None:
    # A shell runs background jobs with SIGINT ignored, and Python then keeps ignoring it:
    # the run gets Ctrl-C as a terminal would give it, however this suite was started.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run(args: list[str], env: dict[str, str] | None = None, output: bool = True) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "matrix.commands.cli", "run", *args],
                            stdout=subprocess.PIPE if output else subprocess.DEVNULL, stderr=subprocess.STDOUT, env=env,
                            preexec_fn=_interruptible)


def test_sigkill_at_a_random_moment_loses_at_most_the_cells_in_flight(tmp_path: Path) -> None:
    config = tmp_path / "m.toml"
    config.write_text(COSMO)
    results = tmp_path / "r"
    args = ["--config", str(config), "--results", str(results), "--jobs", "4"]
    # Every environment installed first (a cold cache would otherwise have the kill land
    # among installs), then the results thrown away: the kill lands among probes.
    subprocess.run([sys.executable, "-m", "matrix.commands.cli", "run", *args], check=True, capture_output=True)
    planned = (results / "rows.jsonl").read_text().count("\n")  # every cell of the config, once
    assert planned >= 4 * 7
    (results / "rows.jsonl").unlink()
    seed = random.randrange(1_000_000)
    delay = random.Random(seed).uniform(1.0, 6.0)
    victim = run(args, output=False)
    time.sleep(delay)
    victim.kill()
    victim.wait()
    stored = results / "rows.jsonl"
    lines = [ln for ln in stored.read_text().split("\n") if ln] if stored.exists() else []
    rows = [json.loads(ln) for ln in lines]  # every stored line is a whole row
    keys = [(r["family"], r["sdk_version"], r["cli_version"], r["probe"], r["mutation"]) for r in rows]
    assert len(keys) == len(set(keys)), f"duplicated rows (seed {seed}, killed after {delay:.1f}s)"
    again = run(args)  # sweeps what the killed run left, then measures only what is missing
    out, _ = again.communicate(timeout=600)
    assert again.returncode == 0, out.decode()
    rows = [json.loads(ln) for ln in (results / "rows.jsonl").read_text().split("\n") if ln]
    keys_after = [(r["family"], r["sdk_version"], r["cli_version"], r["probe"], r["mutation"]) for r in rows]
    assert len(keys_after) == len(set(keys_after)) == planned, f"seed {seed}, killed after {delay:.1f}s"
    assert keys_after[: len(keys)] == keys  # the killed run's rows stand; nothing was rewritten
    assert marked(victim, again) == []


def test_sigint_mid_cell_leaves_no_process(tmp_path: Path) -> None:
    config = tmp_path / "m.toml"
    config.write_text('[families.copilot-python]\nsdk.select = ["0.1.10"]\ncli.select = ["0.0.354"]\n')
    # The committed history has this cell; COMPAT_MATRIX_DATA="" reads none, so it is measured here.
    victim = run(["--config", str(config), "--results", str(tmp_path / "r")],
                 env={**os.environ, "COMPAT_MATRIX_DATA": ""})
    try:
        deadline = time.monotonic() + 120
        while not marked(victim) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert marked(victim), "the probe never started"
        time.sleep(2)
        victim.send_signal(signal.SIGINT)
        out, _ = victim.communicate(timeout=60)
    finally:
        if victim.poll() is None:
            victim.kill()
            victim.communicate()
    assert victim.returncode == 130, out.decode()
    assert marked(victim) == []


def test_a_full_disk_is_an_infra_error_never_a_verdict(tmp_path: Path) -> None:
    if not shutil.which("mount") or os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    cache = tmp_path / "cache"
    cache.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(cache)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        config = tmp_path / "m.toml"
        config.write_text('[run]\ninstall_retries = 0\n' + COSMO)
        env = {**os.environ, "COMPAT_MATRIX_CACHE": str(cache)}
        victim = run(["--config", str(config), "--results", str(tmp_path / "r"), "--sdk", "0.6.1"], env=env)
        out, _ = victim.communicate(timeout=600)
        assert victim.returncode == 3, out.decode()  # some cells were infrastructure errors
        rows = [json.loads(ln) for ln in (tmp_path / "r" / "rows.jsonl").read_text().splitlines()]
        assert rows and {r["outcome"] for r in rows} == {"infra-error"}
        assert all("disk full" in r["error_message"] for r in rows), rows[0]["error_message"]
        envs = cache / "envs" / "sdk" / "uv-venv"
        assert not envs.exists() or not any((p / ".compat-matrix-env.json").exists() for p in envs.iterdir())
    finally:
        subprocess.run(["umount", "-l", str(cache)], check=False)


BAD_INPUTS = [
    (["run", "--family", "cosmo-python", "--sdk", "99.0.0"], "99.0.0"),  # never released
    (["run", "--family", "copilot-python", "--cli", "0.0.0-nope"], "0.0.0-nope"),
    # A family that exists, but not in the config named (every family is in matrix.toml).
    (["run", "--config", "configs/copilot-java.toml", "--family", "copilot-rust"], "copilot-rust"),
    (["run", "--probe", "fuzz", "--family", "copilot-python"], "fuzz"),
    (["run", "--shard", "0/3"], "--shard"),
    (["run", "--shard", "two/three"], "--shard"),
    (["run", "--family", "cosmo-python", "--cli", "1.0.102"], "stand-in"),
    (["can-i-ship", "--family", "copilot-python", "--sdk", "1.0.27", "--against", "latest:x"], "latest"),
    (["can-i-ship", "--family", "cosmo-python", "--sdk", "0.6.1"], "cosmo-python"),
    (["pins", "--family", "copilot-python"], "exactly one of"),
    (["diff", "nowhere-old", "nowhere-new"], "nowhere-old"),
    (["build", "--root", "/nonexistent-root"], "mkdocs.yml"),
]


@pytest.mark.parametrize(("argv", "named"), BAD_INPUTS)
def test_bad_input_is_one_line_exit_2_and_touches_no_stored_result(tmp_path: Path, argv: list[str],
                                                                   named: str) -> None:
    results = tmp_path / "results"
    results.mkdir()
    stored = {"rows.jsonl": '{"family": "copilot-python", "sdk_version": "1.0.27", "cli_version": "1.0.102", '
                            '"probe": "handshake", "outcome": "compatible"}\n',
              "releases.json": '{"copilot-python": {}}'}
    for name, text in stored.items():
        (results / name).write_text(text)
    with_results = [*argv, "--results", str(results)] if argv[0] in ("run", "can-i-ship", "pins", "build") else argv
    res = subprocess.run([sys.executable, "-m", "matrix.commands.cli", *with_results], capture_output=True, text=True,
                         cwd=ROOT, timeout=300)
    assert res.returncode == 2, res.stdout + res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and named in lines[0], res.stderr
    assert {n: (results / n).read_text() for n in stored} == stored


def _listening_of(pids: list[int]) -> set[str]:
    """Local addresses of the TCP sockets ``pids`` listen on, from the kernel's tables."""
    inodes = set()
    for pid in pids:
        try:
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except OSError:
            continue
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            parts = line.split()
            if parts[3] == "0A" and parts[9] in inodes:
                found.add(parts[1].rsplit(":", 1)[0])
    return found


def test_the_harness_and_its_probes_listen_on_loopback_only(tmp_path: Path) -> None:
    config = tmp_path / "m.toml"
    config.write_text('[families.cosmo-python]\nprobes = ["identity"]\nsdk.select = ["0.6.1"]\n'
                      '[families.copilot-python]\nsdk.select = ["1.0.27"]\ncli.select = ["1.0.102"]\n')
    victim = run(["--config", str(config), "--results", str(tmp_path / "r")], output=False)
    seen: set[str] = set()
    while victim.poll() is None:
        seen |= _listening_of([victim.pid, *(pid for pid, _ in marked_by(victim.pid))])
        time.sleep(0.05)
    assert victim.returncode == 0
    loopback = {"0100007F", "00000000000000000000000001000000"}  # 127.0.0.1, ::1
    assert seen, "no listening socket was ever seen: the check would prove nothing"
    assert seen <= loopback, seen
