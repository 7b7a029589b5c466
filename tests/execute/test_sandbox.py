from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from matrix.execute.proc import Request, run
from matrix.execute.sandbox import install_env, is_secret_name, sandbox

SECRETS = {
    "GH_TOKEN": "ghp_" + "a" * 36,
    "GITHUB_TOKEN": "x1",
    "COPILOT_GITHUB_TOKEN": "x2",
    "MY_API_KEY": "x3",
    "DB_SECRET": "x4",
    "AWS_ACCESS_KEY_ID": "x5",
    "SOME_HARMLESS_VAR": "x6",
}


def test_probe_environment_is_an_allowlist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for k, v in SECRETS.items():
        monkeypatch.setenv(k, v)
    with sandbox(tmp_path) as box:
        res = run(Request((sys.executable, "-c", "import os; print('\\n'.join(sorted(os.environ)))"),
                          box.env, box.root, timeout=30))
        seen = set(res.stdout.split())
    for name in SECRETS:
        assert name not in seen, f"{name} leaked into the probe"
    assert {"HOME", "TMPDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "PATH"} <= seen


def test_home_xdg_and_tmp_are_private_and_removed(tmp_path: Path) -> None:
    with sandbox(tmp_path) as box:
        root = box.root
        for var in ("HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "TMPDIR"):
            p = Path(box.env[var])
            assert p.is_dir() and p.is_relative_to(root), var
        assert Path(box.env["HOME"]) != Path.home()
    assert not root.exists()


def test_installers_keep_client_config_but_not_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")
    monkeypatch.setenv("NPM_CONFIG_AUTHTOKEN", "secret")
    monkeypatch.setenv("GH_TOKEN", "secret")
    env = install_env()
    assert env["PIP_INDEX_URL"] == "http://127.0.0.1:9/simple"
    assert "NPM_CONFIG_AUTHTOKEN" not in env and "GH_TOKEN" not in env


@pytest.mark.parametrize("name", ["GH_TOKEN", "OPENAI_API_KEY", "AWS_REGION", "X_SECRET", "NPM_CONFIG__AUTH"])
def test_secret_names(name: str) -> None:
    assert is_secret_name(name)


def test_ordinary_names_are_not_secret() -> None:
    assert not is_secret_name("PATH") and not is_secret_name("LANG")



def test_a_run_removes_its_own_scratch_and_what_dead_runs_left(tmp_path: Path) -> None:
    from matrix.execute.scratch import Scratch

    dead = Scratch(tmp_path)
    (dead.path / "cell-x" / "home").mkdir(parents=True)
    dead_path = dead.path
    # A run killed hard never releases; its lock goes with its process (here: the descriptor).
    assert dead._fd is not None
    os.close(dead._fd)
    dead._fd = None
    live = Scratch(tmp_path)
    assert dead_path.name in live.swept and not dead_path.exists()
    other = Scratch(tmp_path)  # a second run alive at once keeps its directory
    assert live.path.exists() and live.path.name not in other.swept
    old = tmp_path / "cell-legacy"
    old.mkdir()
    os.utime(old, (time.time() - 2 * 86400,) * 2)
    recent = tmp_path / "cell-recent"
    recent.mkdir()
    third = Scratch(tmp_path)
    assert "cell-legacy" in third.swept and recent.exists()
    for s in (live, other, third):
        s.release()
        assert not s.path.exists()
