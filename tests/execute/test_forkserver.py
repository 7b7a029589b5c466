"""The warm fork server, driven with our own interpreter and stdlib modules as the "SDK"."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from matrix.errors import InfraError
from matrix.execute import proc
from matrix.execute.forkserver import ForkServer, ForkServers
from matrix.execute.sandbox import sandbox

PY = Path(sys.executable)


def _script(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "agent.py"
    path.write_text(body)
    return path


def _run(server: ForkServer, script: Path, box_parent: Path, timeout: float = 20,
         reaper: proc.Reaper | None = None) -> proc.Result:
    with sandbox(box_parent) as box:
        req = proc.Request((str(PY), "-I", str(script), "arg1"), box.env, box.root, timeout=timeout, grace=0.5)
        return proc.run(req, reaper, spawn=server.spawner(skip=2))


@pytest.fixture
def server(tmp_path: Path):  # type: ignore[no-untyped-def]
    s = ForkServer(PY, ("json", "email.parser"), tmp_path / "srv", "test")
    assert s.ready, s.why_not
    yield s
    s.close()


def test_child_gets_the_cells_env_cwd_argv_and_output(server: ForkServer, tmp_path: Path) -> None:
    script = _script(tmp_path, "import os, sys\nprint(os.environ['HOME'], os.getcwd(), sys.argv[1:])\n"
                               "print('to stderr', file=sys.stderr)\nsys.exit(3)\n")
    res = _run(server, script, tmp_path / "cells")
    home, cwd, argv = res.stdout.split(" ", 2)
    assert home.startswith(str(tmp_path / "cells")) and home.endswith("/home")
    assert cwd == str(Path(home).parent)
    assert argv.strip() == "['arg1']"
    assert res.stderr.strip() == "to stderr"
    assert res.returncode == 3 and not res.timed_out


def test_uncaught_exception_is_exit_1_with_traceback(server: ForkServer, tmp_path: Path) -> None:
    res = _run(server, _script(tmp_path, "raise ValueError('boom')\n"), tmp_path / "cells")
    assert res.returncode == 1
    assert "ValueError: boom" in res.stderr


def test_a_child_changes_nothing_the_next_child_sees(server: ForkServer, tmp_path: Path) -> None:
    script = _script(tmp_path, "import json\nprint(getattr(json, 'touched', 'clean'))\njson.touched = 'dirty'\n")
    first = _run(server, script, tmp_path / "cells")
    second = _run(server, script, tmp_path / "cells")
    assert first.stdout.strip() == second.stdout.strip() == "clean"


def test_no_secret_of_ours_reaches_the_child(server: ForkServer, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret")
    res = _run(server, _script(tmp_path, "import os\nprint(sorted(os.environ))\n"), tmp_path / "cells")
    assert "GITHUB_TOKEN" not in res.stdout and "HOME" in res.stdout


def test_deadline_kills_the_childs_group_and_grandchildren(server: ForkServer, tmp_path: Path) -> None:
    script = _script(tmp_path, "import subprocess, time\n"
                               "subprocess.Popen(['sleep', '300'])\ntime.sleep(300)\n")
    t0 = time.monotonic()
    res = _run(server, script, tmp_path / "cells", timeout=1.5)
    assert res.timed_out and res.returncode is None
    assert time.monotonic() - t0 < 10
    assert not [c for _, _, c in proc.marked_processes() if "sleep 300" in c]


def test_import_that_fails_or_warns_gets_no_server(tmp_path: Path) -> None:
    failing = ForkServer(PY, ("no_such_module_here",), tmp_path, "x")
    assert not failing.ready and "ModuleNotFoundError" in (failing.why_not or "")
    if sys.version_info < (3, 12):  # imp warns on import in 3.11 and is gone after
        warns = ForkServer(PY, ("imp",), tmp_path, "y")
        assert not warns.ready and "warned: DeprecationWarning" in (warns.why_not or "")
    pool = ForkServers(tmp_path / "pool", None, capacity=4)
    with pool.use(PY, ("no_such_module_here",), "x") as server:
        assert server is None
    assert "no_such_module_here" in next(iter(pool.refused().values()))
    pool.close()


def test_server_gone_mid_cell_is_an_infra_error(server: ForkServer, tmp_path: Path) -> None:
    script = _script(tmp_path, "import time\ntime.sleep(30)\n")
    with sandbox(tmp_path / "cells") as box:
        req = proc.Request((str(PY), "-I", str(script)), box.env, box.root, timeout=20, grace=0.5)

        def spawn_then_kill(r: proc.Request, out, err):  # type: ignore[no-untyped-def]
            child = server.spawner(skip=2)(r, out, err)
            proc.kill_group(server._proc.pid)  # the server dies; its child is still running
            return child

        with pytest.raises(InfraError, match="fork server ended"):
            proc.run(req, None, spawn=spawn_then_kill)


def test_pool_keeps_capacity_and_never_closes_a_server_in_use(tmp_path: Path) -> None:
    pool = ForkServers(tmp_path / "pool", None, capacity=1)
    pythons = []
    for name in ("b", "c"):
        link = tmp_path / name / "bin" / "python"
        link.parent.mkdir(parents=True)
        link.symlink_to(PY)
        pythons.append(link)
    with pool.use(PY, ("json",), "a") as a:
        assert a is not None
        with pool.use(pythons[0], ("json",), "b") as b:
            assert b is not None and b is not a
            assert a._proc.poll() is None  # over capacity, but a is in use
        with pool.use(PY, ("json",), "a") as again:
            assert again is a  # started once, used twice
    with pool.use(pythons[1], ("json",), "c") as c:
        assert c is not None
    assert a._proc.wait(5) is not None and b._proc.wait(5) is not None  # idle: closed for c
    assert c._proc.poll() is None
    pool.close()
    assert c._proc.wait(5) is not None


def test_capacity_zero_means_cold_starts(tmp_path: Path) -> None:
    pool = ForkServers(tmp_path, None, capacity=0)
    with pool.use(PY, ("json",), "a") as server:
        assert server is None
