"""The CLI's first-launch unpack, made once and shared read-only (a fake CLI plays the
release: on --version it unpacks into its HOME, as real releases do)."""

from __future__ import annotations

from pathlib import Path

from matrix.families.copilot.cli_seed import load_seed, make_seed, plant

FAKE = """#!/bin/sh
mkdir -p "$XDG_CACHE_HOME/copilot/pkg/linux-x64/9.9.9"
echo payload > "$XDG_CACHE_HOME/copilot/pkg/linux-x64/9.9.9/index.js"
echo "GitHub Copilot CLI 9.9.9"
"""


def executable(path: Path, script: str) -> str:
    path.write_text(script)
    path.chmod(0o755)
    return str(path)


def fake_cli(tmp_path: Path) -> tuple[str, ...]:
    return (executable(tmp_path / "copilot", FAKE), "--version")


def test_seed_is_made_once_planted_as_symlinks_and_retired_when_written(tmp_path: Path) -> None:
    prefix = tmp_path / "prefix"
    prefix.mkdir()
    seed = make_seed(prefix, fake_cli(tmp_path), [], tmp_path / "scratch", timeout=30)
    assert seed is not None and seed.paths == (".cache/copilot/pkg",) and seed.intact()
    assert load_seed(prefix) == seed  # made once: the next preparation reads it back
    home = tmp_path / "home"
    assert plant(seed, home)
    copy = home / ".cache/copilot/pkg/linux-x64/9.9.9"
    assert (copy / "index.js").read_text() == "payload\n" and not copy.is_symlink()
    (copy / "lock").write_text("created and removed by a start")  # the sandbox's own directory
    (copy / "lock").unlink()
    assert seed.intact() and not (seed.root / ".cache/copilot/pkg/linux-x64/9.9.9/lock").exists()
    with (copy / "index.js").open("a") as f:  # a write into a shared file reaches the seed
        f.write("changed")
    assert not seed.intact()
    seed.retire("test")
    assert not plant(seed, tmp_path / "other-home")  # later cells unpack for themselves


def test_a_cli_that_unpacks_nothing_gets_no_seed_and_is_started_for_it_once(tmp_path: Path) -> None:
    """Most releases unpack nothing on --version: that is kept with the install, or every run
    started every release once more to find it out again. A start that failed is tried again."""
    starts = tmp_path / "starts"
    quiet = executable(tmp_path / "quiet", f"#!/bin/sh\necho start >> {starts}\necho 1.0.0\n")
    prefix = tmp_path / "prefix"
    prefix.mkdir()
    for _ in range(2):
        assert make_seed(prefix, (quiet,), [], tmp_path / "scratch", timeout=30) is None
    assert starts.read_text() == "start\n" and load_seed(prefix) is None
    assert not plant(None, tmp_path / "home")
    failing = executable(tmp_path / "failing", f"#!/bin/sh\necho start >> {starts}\nexit 1\n")
    other = tmp_path / "other-prefix"
    other.mkdir()
    for _ in range(2):
        assert make_seed(other, (failing,), [], tmp_path / "scratch", timeout=30) is None
    assert starts.read_text() == "start\n" * 3
