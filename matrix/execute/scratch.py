"""Each run's own directory for its sandboxes, and the sweep of those a dead run left.

A run killed hard (SIGKILL, power loss) cannot remove the sandboxes of its cells in flight,
and a CLI with no unpacked copy to share writes up to 245 MB into each. Runs sharing one
cache each hold a lock on their own directory while they live; the next run removes every
directory whose lock nobody holds."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
import time
from pathlib import Path

__all__ = ["Scratch"]

_LOCK = ".lock"
# Sandboxes made directly under the parent by harnesses before this layout: no lock tells
# whether their run still lives, so only old ones go.
_LEGACY_AGE = 24 * 3600


def _owner_gone(run_dir: Path) -> bool:
    try:
        fd = os.open(run_dir / _LOCK, os.O_RDWR)
    except FileNotFoundError:
        # Between mkdtemp and the lock of a starting run, or a run dir half removed: judge by age.
        return time.time() - run_dir.stat().st_mtime > 60
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)  # also releases the lock we may have taken
    return True


class Scratch:
    """``path``: where this run makes its sandboxes; ``release()`` removes it."""

    def __init__(self, parent: Path) -> None:
        parent.mkdir(parents=True, exist_ok=True)
        self.swept = self._sweep(parent)
        self.path = Path(tempfile.mkdtemp(prefix=f"run-{os.getpid()}-", dir=parent))
        self._fd: int | None = os.open(self.path / _LOCK, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self._fd, fcntl.LOCK_EX)

    @staticmethod
    def _sweep(parent: Path) -> list[str]:
        swept = []
        for entry in parent.iterdir():
            with contextlib.suppress(OSError):  # another run swept it first, or it is not ours
                if entry.name.startswith("run-") and entry.is_dir():
                    gone = _owner_gone(entry)
                else:
                    gone = entry.is_dir() and time.time() - entry.stat().st_mtime > _LEGACY_AGE
                if gone:
                    shutil.rmtree(entry)
                    swept.append(entry.name)
        return swept

    def release(self) -> None:
        if self._fd is None:
            return
        shutil.rmtree(self.path, ignore_errors=True)
        os.close(self._fd)
        self._fd = None
