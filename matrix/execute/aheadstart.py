"""Ahead starts for agents whose interpreter cannot fork (Node): per SDK environment, one agent
process started before the cell that will use it, that has already loaded what every cell of
that environment loads, and waits on its input for the cell (``agents/node_ahead.mjs``).

A cell handed such a process gets what ``proc.run`` would have spawned: its own session (the
process leads its group), the cell's environment (set before the agent's script runs, so every
process the SDK starts inherits it, marker included), directory and arguments, its output in
the cell's files, the same deadline and group kill. What the cell's agent would do first, the
runtime's start and the SDK's import, was done while the cell before it ran. An environment
whose preload fails or warns gets none (the agent would not see what a fresh start shows):
its cells start the agent the usual way.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import tempfile
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import IO

from matrix.execute import proc
from matrix.execute.sandbox import sandbox

__all__ = ["LOADER", "AheadStarts"]

LOADER = Path(__file__).parent / "agents" / "node_ahead.mjs"
# How long a cell waits for its process's preload before it starts its agent the usual way.
_READY_WAIT = 30.0

Key = tuple[tuple[str, ...], tuple[str, ...]]  # (the interpreter and its flags, the preload)


class _Ahead:
    """One process waiting for its cell, in a sandbox of its own until it gets one."""

    def __init__(self, prefix: tuple[str, ...], preload: tuple[str, ...], scratch: Path) -> None:
        self._stack = contextlib.ExitStack()
        box = self._stack.enter_context(sandbox(scratch, path_dirs=[Path(prefix[0]).parent]))
        self.status = box.root / "ahead-status.json"
        self.out: IO[bytes] = self._stack.enter_context(tempfile.TemporaryFile())  # noqa: SIM115 (the stack closes it)
        self.err: IO[bytes] = self._stack.enter_context(tempfile.TemporaryFile())  # noqa: SIM115 (the stack closes it)
        self.proc = proc.start((*prefix, str(LOADER), str(self.status), *preload), stdin=subprocess.PIPE,
                               stdout=self.out, stderr=self.err, env=dict(box.env), cwd=box.root,
                               start_new_session=True)

    def why_not(self, wait: float) -> str | None:
        """None once the preload is done and clean; else why this process cannot take a cell."""
        deadline = time.monotonic() + wait
        while True:
            with contextlib.suppress(OSError, ValueError):
                said = json.loads(self.status.read_text())
                return None if said.get("ready") else str(said.get("why") or "the preload failed")
            if self.proc.poll() is not None:
                return f"the process ended before its preload was done (exit {self.proc.returncode})"
            if time.monotonic() > deadline:
                return f"its preload was not done within {wait:.0f}s"
            time.sleep(0.005)

    def hand(self, req: proc.Request, skip: int, out: IO[bytes], err: IO[bytes]) -> _Handed:
        cell = {"argv": list(req.argv[skip:]), "env": dict(req.env), "cwd": str(req.cwd)}
        assert self.proc.stdin is not None
        with contextlib.suppress(OSError):  # ended meanwhile: the cell sees how, as it would
            self.proc.stdin.write(json.dumps(cell).encode())
            self.proc.stdin.close()
        return _Handed(self, out, err)

    def close(self) -> None:
        proc.kill_group(self.proc.pid)
        self.proc.wait()
        self.finish()

    def finish(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            if self.proc.stdin:
                self.proc.stdin.close()
        self._stack.close()


class _Handed:
    """A cell's process that was started ahead: its output goes to the cell's files at the end."""

    def __init__(self, ahead: _Ahead, out: IO[bytes], err: IO[bytes]) -> None:
        self._ahead = ahead
        self._out, self._err = out, err
        self._done = False
        self.pid = ahead.proc.pid
        self.returncode: int | None = None

    def _ended(self, code: int) -> int:
        if not self._done:
            self._done = True
            for src, dst in ((self._ahead.out, self._out), (self._ahead.err, self._err)):
                src.seek(0)
                shutil.copyfileobj(src, dst)
                dst.flush()
            self._ahead.finish()
        self.returncode = code
        return code

    def poll(self) -> int | None:
        code = self._ahead.proc.poll()
        return None if code is None else self._ended(code)

    def wait(self, timeout: float | None = None) -> int:
        return self._ended(self._ahead.proc.wait(timeout))


class AheadStarts:
    """At most ``capacity`` waiting processes (the least recently used ended first), one per
    environment; a cell that takes one starts the next for its environment."""

    def __init__(self, scratch: Path, capacity: int) -> None:
        self._scratch = scratch
        self._capacity = capacity
        self._lock = threading.Lock()
        self._waiting: OrderedDict[Key, _Ahead] = OrderedDict()
        self._refused: dict[Key, tuple[str, str]] = {}  # key -> (its label, why)
        self._closed = False
        self.started = 0
        self.used = 0

    def spawner(self, prefix: tuple[str, ...], preload: tuple[str, ...], label: str) -> proc.Spawn | None:
        """A ``proc.run`` spawn for agents run by ``prefix`` (the interpreter) whose cells all
        load what the module ``preload[0]`` loads when its ``preload(*preload[1:])`` is awaited;
        None: start them the usual way. ``label``: the environment, as the run's summary names it."""
        key = (prefix, preload)
        if self._capacity <= 0 or not preload or key in self._refused:
            return None

        def spawn(req: proc.Request, out: IO[bytes], err: IO[bytes]) -> proc.Child:
            with self._lock:
                ahead = self._waiting.pop(key, None)
            child: proc.Child | None = None
            if ahead is not None:
                why = ahead.why_not(_READY_WAIT)
                if why is None:
                    child = ahead.hand(req, len(prefix), out, err)
                    with self._lock:
                        self.used += 1
                else:
                    ahead.close()
                    with self._lock:
                        self._refused[key] = (label, why)
            if child is None:
                child = proc.popen(req, out, err)
            self.ready(prefix, preload)
            return child

        return spawn

    def ready(self, prefix: tuple[str, ...], preload: tuple[str, ...]) -> None:
        """Start the process the next cell of this environment will take, unless one waits."""
        key = (prefix, preload)
        with self._lock:
            if self._closed or self._capacity <= 0 or key in self._refused or key in self._waiting:
                return
            ahead = _Ahead(prefix, preload, self._scratch)
            self._waiting[key] = ahead
            self.started += 1
            retired = [self._waiting.popitem(last=False)[1] for _ in range(len(self._waiting) - self._capacity)]
        for old in retired:
            old.close()

    def refused(self) -> dict[str, str]:
        """Each environment (its label) that gets no ahead starts, and why."""
        with self._lock:
            return dict(self._refused.values())

    def close(self) -> None:
        with self._lock:
            self._closed = True
            waiting, self._waiting = list(self._waiting.values()), OrderedDict()
        for ahead in waiting:
            ahead.close()
