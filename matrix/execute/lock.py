"""One writer per results directory or dataset at a time.

A second ``run`` (or ``fold``, ``merge``) on the same directory waits for the first or
stops at once with one line naming the run that holds it; nothing is written twice or lost.
The lock is the kernel's (``flock``): it goes with the process that held it, even one killed
outright, so a stale lock never blocks anybody."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from matrix.errors import UserError
from matrix.execute.storage import writing

__all__ = ["Locked", "holding", "sharing"]

LOCK_FILE = ".compat-matrix.execute.lock"


class Locked(UserError):
    def __init__(self, directory: Path, holder: dict[str, object]) -> None:
        self.directory = directory
        self.holder = holder
        if holder:
            who = f"`{holder.get('command')}` (pid {holder.get('pid', '?')}, since {holder.get('since') or '?'})"
        else:  # readers leave no record: a run or a build reading the directory holds it shared
            who = "another compat-matrix command reading it (a run, a build or a check holds it shared)"
        super().__init__(f"{directory} is in use by {who}; wait for it to finish, run again with --wait, or pass "
                         "another directory")


def _alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _holder(path: Path) -> dict[str, object]:
    """The writer that holds ``path``, as it recorded itself; {} when none does (a writer that
    was killed outright leaves its record behind: a process that is gone holds nothing)."""
    try:
        data = json.loads(path.read_text() or "{}")
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and _alive(data.get("pid")) else {}


@contextlib.contextmanager
def holding(directory: Path, wait: bool = False, poll: float = 0.5) -> Iterator[None]:
    """Hold ``directory``'s lock for the block; ``wait``: until the holder lets go."""
    with writing(directory):
        directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(directory / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not wait:
                    raise Locked(directory, _holder(directory / LOCK_FILE)) from None
                time.sleep(poll)
        me = {"pid": os.getpid(), "command": " ".join(["compat-matrix", *sys.argv[1:3]]),
              "since": datetime.now(UTC).isoformat(timespec="seconds")}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(me).encode(), 0)
        try:
            yield
        finally:
            os.ftruncate(fd, 0)  # no record of a writer that is done
    finally:
        os.close(fd)  # releases the lock


@contextlib.contextmanager
def sharing(directory: Path, timeout: float = 300.0, poll: float = 0.2) -> Iterator[None]:
    """Hold ``directory`` shared for the block (readers at once; no ``holding`` writer meanwhile),
    waiting up to ``timeout`` seconds for a writer to let go."""
    path = directory / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        # A directory we may read but not write (a checkout mounted read-only): nobody writes it either.
        yield
        return
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise Locked(directory, _holder(path)) from None
                time.sleep(poll)
        yield
    finally:
        os.close(fd)
