"""The CLI's compiled code: made once per CLI release by starting it as the SDKs do, copied
into every sandbox's TMPDIR, and read by the CLI alone through paths relative to the cache
(a fake runtime plays the CLI: it writes what Node's compile cache would, where it would)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from matrix.families.copilot.cli import CliInstall, Runtime, write_launcher
from matrix.families.copilot.compile_cache import make_compile_cache, plant_compile_cache


def fake_node(tmp_path: Path, compiles: bool) -> tuple[Path, Path]:
    """A "runtime" that records each start (with NODE_COMPILE_CACHE_PORTABLE) and, like the
    CLI, leaves its compiled code under $TMPDIR/node-compile-cache when it exits."""
    log = tmp_path / "starts.log"
    node = tmp_path / "node"
    write = ('mkdir -p "$TMPDIR/node-compile-cache/v24-x64"\n'
             'echo compiled > "$TMPDIR/node-compile-cache/v24-x64/0a1b2c3d"\n') if compiles else ""
    node.write_text("#!/bin/sh\n"
                    "head -c 10 > /dev/null\n"  # the request cli_status.py sends, then the CLI goes
                    f'echo "$* portable=$NODE_COMPILE_CACHE_PORTABLE" >> {log}\n' + write)
    node.chmod(0o755)
    return node, log


def test_the_compiled_code_is_made_once_as_the_sdks_start_the_cli_and_each_sandbox_gets_its_own_copy(
        tmp_path: Path) -> None:
    node, log = fake_node(tmp_path, compiles=True)
    prefix = tmp_path / "prefix"
    prefix.mkdir()
    cache = make_compile_cache(prefix, node, tmp_path / "index.js", None, tmp_path / "scratch", timeout=30)
    assert cache is not None and (cache / "v24-x64" / "0a1b2c3d").read_text() == "compiled\n"
    starts = log.read_text().splitlines()
    assert len(starts) == 1 and "--headless" in starts[0] and "--stdio" in starts[0]
    assert starts[0].endswith("portable=1")
    assert make_compile_cache(prefix, node, tmp_path / "index.js", None, tmp_path / "scratch", timeout=30) == cache
    assert len(log.read_text().splitlines()) == 1  # made once: the next preparation reads it back
    tmp = tmp_path / "cell-tmp"
    tmp.mkdir()
    assert plant_compile_cache(cache, tmp)
    copy = tmp / "node-compile-cache" / "v24-x64" / "0a1b2c3d"
    assert copy.read_text() == "compiled\n"
    assert copy.stat().st_ino != (cache / "v24-x64" / "0a1b2c3d").stat().st_ino  # Node rewrites it at exit
    copy.write_text("rewritten by a cell")
    assert (cache / "v24-x64" / "0a1b2c3d").read_text() == "compiled\n"


def test_a_cli_that_compiles_nothing_gets_no_cache_and_is_not_started_again(tmp_path: Path) -> None:
    node, log = fake_node(tmp_path, compiles=False)
    prefix = tmp_path / "prefix"
    prefix.mkdir()
    for _ in range(2):
        assert make_compile_cache(prefix, node, tmp_path / "index.js", None, tmp_path / "scratch", timeout=30) is None
    assert len(log.read_text().splitlines()) == 1
    assert not plant_compile_cache(None, tmp_path)


def test_only_a_cli_with_compiled_code_is_told_to_read_it_by_relative_paths(tmp_path: Path) -> None:
    node = tmp_path / "node"
    node.write_text('#!/bin/sh\necho "portable=$NODE_COMPILE_CACHE_PORTABLE"\n')
    node.chmod(0o755)
    runtime = Runtime("node20", node)
    plain = CliInstall("1.0.0", tmp_path / "index.js", runtime, "1.0.0", {})
    cached = CliInstall("1.0.0", tmp_path / "index.js", runtime, "1.0.0", {}, compile_cache=tmp_path / "cache")
    said = {}
    for name, cli in (("plain", plain), ("cached", cached)):
        (tmp_path / name).mkdir()
        script, _ = write_launcher(tmp_path / name, cli, runtime)
        env = {"PATH": os.environ["PATH"]}  # the SDK's environment has no such variable
        said[name] = subprocess.run([str(script), "--stdio"], capture_output=True, text=True, env=env,
                                    check=True).stdout.strip()
    assert said == {"plain": "portable=", "cached": "portable=1"}
