"""Reuse, rebuild and eviction logic, with a fake environment kind (our own logic only)."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest

from matrix.errors import InfraError, UninstallableError
from matrix.execute.environment import FINGERPRINT, Environment, evict, tool_version, with_retries


@dataclass
class FakeEnv(Environment):
    kind: ClassVar[str] = "fake"
    installs: int = 0
    fail_with: Exception | None = None
    size: int = 10

    def _install(self) -> None:
        self.installs += 1
        if self.fail_with:
            raise self.fail_with
        (self.location / "payload").write_bytes(b"x" * self.size)


def fake(tmp_path: Path, name: str = "pkg", version: str = "1.0", **kw) -> FakeEnv:
    return FakeEnv(package=name, version=version, location=tmp_path / "fake" / f"{name}-{version}", **kw)


def test_second_create_reuses(tmp_path: Path) -> None:
    env = fake(tmp_path)
    assert env.create() is True
    assert env.create() is False
    assert env.installs == 1


def test_fingerprint_mismatch_rebuilds(tmp_path: Path) -> None:
    env = fake(tmp_path)
    env.create()
    other = fake(tmp_path, extra={"tool": "2.0"})
    assert other.create() is True


def test_corrupt_fingerprint_rebuilds(tmp_path: Path) -> None:
    env = fake(tmp_path)
    env.create()
    (env.location / FINGERPRINT).write_text("{garbage")
    assert env.create() is True


def test_failed_install_leaves_nothing_reusable(tmp_path: Path) -> None:
    env = fake(tmp_path, fail_with=InfraError("npm", "ECONNREFUSED"))
    with pytest.raises(InfraError):
        env.create()
    assert not env.location.exists()
    env.fail_with = None
    assert env.create() is True


def test_retries_infra_but_not_uninstallable(tmp_path: Path) -> None:
    calls = []

    def flaky() -> bool:
        calls.append(1)
        if len(calls) < 3:
            raise InfraError("npm", "ETIMEDOUT")
        return True

    assert with_retries(flaky, retries=2, base_delay=0.0) is True
    assert len(calls) == 3

    def gone() -> bool:
        calls.append(1)
        raise UninstallableError("pkg", "1.0", "ETARGET")

    calls.clear()
    with pytest.raises(UninstallableError):
        with_retries(gone, retries=5, base_delay=0.0)
    assert len(calls) == 1


def test_evict_removes_least_recently_used_until_within_budget(tmp_path: Path) -> None:
    envs = [fake(tmp_path, version=f"1.{i}", size=1000) for i in range(4)]
    for i, env in enumerate(envs):
        env.create()
        with env.in_use():
            pass
        t = time.time() - 100 + i
        os.utime(env.location / ".compat-matrix-last-used", (t, t))
    sizes = json.loads((envs[0].location / FINGERPRINT).read_text())["bytes"]
    removed = evict(tmp_path, "fake", budget_bytes=2 * sizes, keep=set())
    assert removed == [envs[0].location, envs[1].location]
    assert envs[2].location.exists() and envs[3].location.exists()


def test_evict_never_removes_an_environment_in_use(tmp_path: Path) -> None:
    envs = [fake(tmp_path, version=f"1.{i}", size=1000) for i in range(2)]
    for env in envs:
        env.create()
    with envs[0].in_use():
        removed = evict(tmp_path, "fake", budget_bytes=0, keep=set())
    assert envs[0].location.exists()
    assert removed == [envs[1].location]


NPM_GONE_OUTPUT = """npm error code E404
npm error 404 Not Found - GET https://registry.example.invalid/keytar-forked-forked
npm error 404  The requested resource 'keytar-forked-forked@^7.10.2' could not be found.
npm error A complete log of this run can be found in: /root/.npm/_logs/x.log
"""


@dataclass
class ScriptedInstall(Environment):
    """Runs a real child that prints what an installer printed, then fails."""

    kind: ClassVar[str] = "scripted"
    output: str = ""

    def _install(self) -> None:
        import sys

        from matrix.ecosystems.npm_env import NPM_GONE

        code = f"import sys; sys.stderr.write({self.output!r}); sys.exit(1)"
        self._run_installer([sys.executable, "-c", code], NPM_GONE)


def scripted(tmp_path: Path, output: str) -> ScriptedInstall:
    return ScriptedInstall(package="@github/copilot", version="0.0.340",
                           location=tmp_path / "s" / "x", output=output, log_dir=tmp_path / "logs")


def test_unpublished_dependency_is_uninstallable_and_names_it(tmp_path: Path) -> None:
    with pytest.raises(UninstallableError) as exc:
        scripted(tmp_path, NPM_GONE_OUTPUT).create()
    assert "keytar-forked-forked@^7.10.2" in exc.value.detail
    assert "example.invalid" not in str(exc.value)  # no registry address in our reports


@pytest.mark.parametrize("output", ["npm error code ECONNREFUSED\nnpm error connect ECONNREFUSED 127.0.0.1:9\n",
                                    "npm error code ENOSPC\nnpm error nospc No space left on device\n"])
def test_network_and_disk_failures_are_infra_errors_with_a_log(tmp_path: Path, output: str) -> None:
    with pytest.raises(InfraError) as exc:
        scripted(tmp_path, output).create()
    assert exc.value.log and Path(exc.value.log).exists()


def test_reuse_does_not_wait_for_other_users(tmp_path: Path) -> None:
    """Probes hold an environment shared; a second cell reusing it must not queue behind
    them (that would serialise every cell of one CLI version)."""
    import threading

    env = fake(tmp_path)
    env.create()
    entered = threading.Event()
    release = threading.Event()

    def user() -> None:
        with env.in_use():
            entered.set()
            release.wait(10)

    t = threading.Thread(target=user)
    t.start()
    entered.wait(5)
    t0 = time.monotonic()
    try:
        assert env.create() is False
        assert time.monotonic() - t0 < 1.0
    finally:
        release.set()
        t.join()


def test_a_build_step_that_timed_out_or_met_a_full_disk_is_the_machines_failure(tmp_path: Path) -> None:
    from matrix.execute import proc

    env = fake(tmp_path, "github.com/github/copilot-sdk/go", "0.2.0")
    failed = proc.Result(("go", "build"), 1, "", "main.go:3: undefined: copilot.Client", 0.0, 1.0, False)
    env._machine_failed("building the agent", failed)  # the release's failure: the caller's to judge
    for res, said in ((proc.Result(("go", "build"), None, "", "", 0.0, 900.0, True), "timed out after 900s"),
                      (proc.Result(("go", "build"), 1, "", "write /tmp/x: no space left on device", 0.0, 1.0, False),
                       "disk full")):
        with pytest.raises(InfraError) as exc:
            env._machine_failed("building the agent", res, 900)
        assert "building the agent for github.com/github/copilot-sdk/go 0.2.0" in str(exc.value)
        assert said in str(exc.value)


def test_a_tool_asked_by_many_threads_at_once_is_run_once(tmp_path: Path) -> None:
    """Every environment's fingerprint asks its tool's version, and a run's first cells ask at
    once: each asking started the tool (four ``npm --version`` at every run's start)."""
    log = tmp_path / "runs"
    script = f"import time, pathlib; p = pathlib.Path({str(log)!r}); p.write_text(p.read_text() + 'x' " \
             "if p.exists() else 'x'); time.sleep(0.3); print('tool 1.2.3')"
    argv = (sys.executable, "-c", script)
    answers: list[str] = []
    threads = [threading.Thread(target=lambda: answers.append(tool_version(argv))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert answers == ["tool 1.2.3"] * 4
    assert log.read_text() == "x"
