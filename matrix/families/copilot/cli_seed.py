"""The CLI's first-launch unpack, done once per CLI version and given to every sandbox.

On its first start in a HOME, a CLI release unpacks itself (about 1 s and up to 245 MB). That
work is identical in every cell, so it is done once, into the CLI's prefix, and each sandbox
gets a copy made of hard links at the same places in its HOME: its own directories (a CLI
may create, rename and delete files there, as some releases do on every start) sharing the
files' contents. Only a write into an existing file would reach the shared copy: a
fingerprint of the files taken when it was made is checked after every cell, and a tree
that changed is retired (later cells unpack for themselves again) and the cell is recorded
as a harness error, re-measured."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from matrix.execute import proc
from matrix.execute.sandbox import sandbox

__all__ = ["Seed", "make_seed", "plant"]

SEED_DIR = ".compat-matrix-seed"
# Where releases unpack themselves, relative to HOME (it moved between releases and follows
# XDG_CACHE_HOME / XDG_STATE_HOME in some).
PKG_PATHS = (".copilot/pkg", ".cache/copilot/pkg", ".local/state/.copilot/pkg", ".local/state/copilot/pkg")
_META = "seed.json"
_RETIRED = "RETIRED"


@dataclass(frozen=True)
class Seed:
    root: Path
    paths: tuple[str, ...]  # relative to HOME, present under root
    fingerprint: str

    @property
    def retired(self) -> bool:
        return (self.root / _RETIRED).exists()

    def intact(self) -> bool:
        return not self.retired and _fingerprint(self.root, self.paths) == self.fingerprint

    def retire(self, why: str) -> None:
        if self.root.is_dir():  # gone with its prefix: nothing left to retire
            (self.root / _RETIRED).write_text(why)


def _fingerprint(root: Path, paths: tuple[str, ...]) -> str:
    """The files' count, total size and newest mtime: what a write into one of them changes.
    Directories are each sandbox's own, so their entries are not part of it."""
    files = size = newest = 0
    for rel in paths:
        for dirpath, _dirs, names in os.walk(root / rel):
            for name in names:
                st = (Path(dirpath) / name).lstat()
                files, size, newest = files + 1, size + st.st_size, max(newest, st.st_mtime_ns)
    return f"{files}:{size}:{newest}"


def _made(prefix: Path) -> tuple[bool, Seed | None]:
    """Whether the seed of this install was made, and it (None: the CLI unpacked nothing)."""
    root = prefix / SEED_DIR
    try:
        meta = json.loads((root / _META).read_text())
        paths = tuple(meta["paths"])
        return True, Seed(root, paths, str(meta["fingerprint"])) if paths else None
    except (OSError, ValueError, KeyError, TypeError):
        return False, None


def load_seed(prefix: Path) -> Seed | None:
    return _made(prefix)[1]


def make_seed(prefix: Path, argv: tuple[str, ...], path_dirs: list[Path], scratch: Path, timeout: float) -> Seed | None:
    """Start the CLI once (``argv``: runtime, entry, --version) and keep what it unpacked.
    None when it unpacked nothing we know of: cells then run as before. Made once per install,
    also when there is nothing to keep (a CLI start of every release at every run's start,
    before: most releases unpack nothing on --version); a start that failed is tried again."""
    made, existing = _made(prefix)
    if made:
        return existing
    root = prefix / SEED_DIR
    shutil.rmtree(root, ignore_errors=True)
    with sandbox(scratch, path_dirs=path_dirs) as box:
        res = proc.run(proc.Request(argv, box.env, box.root, timeout=timeout))
        found = tuple(p for p in PKG_PATHS if (box.home / p).is_dir())
        if not res.ok:
            return None
        if not found:
            root.mkdir(parents=True, exist_ok=True)
            (root / _META).write_text(json.dumps({"paths": [], "fingerprint": ""}))
            return None
        for rel in found:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(box.home / rel), str(root / rel))
    seed = Seed(root, found, _fingerprint(root, found))
    (root / _META).write_text(json.dumps({"paths": list(found), "fingerprint": seed.fingerprint}))
    return seed


def _link_tree(src: Path, dst: Path) -> None:
    for dirpath, dirs, names in os.walk(src):
        target = dst / Path(dirpath).relative_to(src)
        target.mkdir(parents=True, exist_ok=True)
        for name in names:
            source = Path(dirpath) / name
            if source.is_symlink():
                (target / name).symlink_to(source.readlink())
            else:
                os.link(source, target / name)
        dirs.sort()


def plant(seed: Seed | None, home: Path) -> bool:
    """Give a sandbox HOME the unpacked tree (own directories, shared file contents);
    False when there is none to give."""
    if seed is None or seed.retired:
        return False
    for rel in seed.paths:
        _link_tree(seed.root / rel, home / rel)
    return True
