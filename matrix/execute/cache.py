"""The cache root (outside the repo), its CACHEDIR.TAG, file locks and size accounting."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

__all__ = ["cache_root", "dir_size", "locked"]

_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by compat-matrix.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)


def cache_root() -> Path:
    """``$COMPAT_MATRIX_CACHE``, else ``$XDG_CACHE_HOME/compat-matrix``, else ~/.cache/..."""
    explicit = os.environ.get("COMPAT_MATRIX_CACHE")
    if explicit:
        root = Path(explicit)
    else:
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        root = Path(base) / "compat-matrix"
    root.mkdir(parents=True, exist_ok=True)
    tag = root / "CACHEDIR.TAG"
    if not tag.exists():
        tag.write_text(_TAG)
    return root


@contextlib.contextmanager
def locked(path: Path, shared: bool = False, blocking: bool = True) -> Iterator[bool]:
    """flock on ``path`` (works across threads and processes: each call opens its own
    descriptor). Yields False when ``blocking`` is off and the lock is taken."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        flags = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
        if not blocking:
            flags |= fcntl.LOCK_NB
        try:
            fcntl.flock(fd, flags)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def dir_size(path: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(dirpath, name)).st_size
    return total
