"""Warm starts for Python agents: one server per SDK environment imports the SDK once and
forks a fresh child per cell (``agents/python_forkserver.py`` beside this module).

A child is what ``proc.run`` would have spawned: its own session, the cell's sandbox
environment and directory, output to files, the same deadline and group kill. Only the
import is shared, as an immutable starting image. An SDK whose import fails, warns or
starts a thread gets no server: its cells start the agent the usual way.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import IO, Any

from matrix.errors import InfraError
from matrix.execute import proc
from matrix.execute.sandbox import sandbox

__all__ = ["ForkServer", "ForkServers"]

SERVER = Path(__file__).parent / "agents" / "python_forkserver.py"
_READY_TIMEOUT = 60.0


class _Forked:
    """A cell's process, forked by the server: waited on through the server's messages."""

    def __init__(self, server: ForkServer, request_id: int) -> None:
        self._server = server
        self.id = request_id
        self.pid = 0
        self.returncode: int | None = None
        self.started = threading.Event()
        self.ended = threading.Event()

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if not self.ended.wait(timeout):
            raise subprocess.TimeoutExpired(str(SERVER), timeout or 0.0)
        if self.returncode is None:
            raise InfraError(f"warm start for {self._server.label}",
                             "the fork server ended while a cell was running; the cell is measured again next run")
        return self.returncode


class ForkServer:
    def __init__(self, interpreter: Path, preload: tuple[str, ...], scratch: Path, label: str,
                 reaper: proc.Reaper | None = None) -> None:
        self.label = label
        self.why_not: str | None = None
        self._reaper = reaper
        self._lock = threading.Lock()
        self._pending: dict[int, _Forked] = {}
        self._next = 0
        self.leases = 0  # cells holding this server (ForkServers.use): never closed under them
        self._stack = contextlib.ExitStack()
        box = self._stack.enter_context(sandbox(scratch))
        self._marker = box.marker
        self._proc = proc.start(
            (str(interpreter), "-I", str(SERVER), json.dumps(list(preload))),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=dict(box.env), cwd=box.root, start_new_session=True)
        if reaper:
            reaper.add(self._proc.pid, self._marker)
        assert self._proc.stdout is not None
        ready = self._first_line(self._proc.stdout)
        if not ready.get("ready"):
            self.why_not = str(ready.get("why") or "the server did not start")
            self.close()
            return
        self._reader = threading.Thread(target=self._read, args=(self._proc.stdout,), daemon=True,
                                        name=f"forkserver {label}")
        self._reader.start()

    def _first_line(self, stream: IO[bytes]) -> dict[str, Any]:
        box: list[bytes] = []
        t = threading.Thread(target=lambda: box.append(stream.readline()), daemon=True)
        t.start()
        t.join(_READY_TIMEOUT)
        try:
            return dict(json.loads(box[0])) if box and box[0] else {"why": "the server exited before it was ready"}
        except ValueError:
            return {"why": f"the server said {box[0][:200]!r}"}

    @property
    def ready(self) -> bool:
        return self.why_not is None

    @property
    def busy(self) -> bool:
        with self._lock:
            return bool(self._pending) or self.leases > 0

    def _read(self, stream: IO[bytes]) -> None:
        for line in stream:
            msg = json.loads(line)
            with self._lock:
                child = self._pending.get(msg["id"])
            if child is None:
                continue
            if "pid" in msg:
                child.pid = int(msg["pid"])
                child.started.set()
            elif "code" in msg:
                child.returncode = int(msg["code"])
                with self._lock:
                    self._pending.pop(child.id, None)
                child.ended.set()
        with self._lock:  # the server is gone: nobody will say how these ended
            orphans, self._pending = list(self._pending.values()), {}
        for child in orphans:
            child.started.set()
            child.ended.set()

    def spawn(self, req: proc.Request, out: IO[bytes], err: IO[bytes]) -> _Forked:
        """Fork ``req.argv`` (script and arguments; the interpreter is the server's)."""
        with self._lock:
            self._next += 1
            child = _Forked(self, self._next)
            self._pending[child.id] = child
        message = {"id": child.id, "argv": list(req.argv), "env": dict(req.env), "cwd": str(req.cwd),
                   "stdout": out.name, "stderr": err.name}
        assert self._proc.stdin is not None
        try:
            self._proc.stdin.write((json.dumps(message) + "\n").encode())
            self._proc.stdin.flush()
        except (BrokenPipeError, ValueError) as exc:
            raise InfraError(f"warm start for {self.label}", f"the fork server is gone ({exc})") from exc
        if not child.started.wait(_READY_TIMEOUT) or not child.pid:
            raise InfraError(f"warm start for {self.label}", "the fork server did not fork the cell")
        return child

    def spawner(self, skip: int) -> proc.Spawn:
        """A ``proc.run`` spawn that forks the request's argv past its first ``skip`` items
        (the interpreter and its flags: the server is that interpreter)."""
        def spawn(req: proc.Request, out: IO[bytes], err: IO[bytes]) -> proc.Child:
            return self.spawn(replace(req, argv=req.argv[skip:]), out, err)
        return spawn

    def close(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            if self._proc.stdin:
                self._proc.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(timeout=5)
        proc.kill_group(self._proc.pid)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(timeout=5)
        if self._reaper:
            self._reaper.discard(self._proc.pid, self._marker)
        if self._proc.stdout:
            self._proc.stdout.close()
        self._stack.close()


class ForkServers:
    """At most ``capacity`` live servers, least recently used closed first (never one with a
    cell in flight). One per SDK environment, started on first use."""

    def __init__(self, scratch: Path, reaper: proc.Reaper | None, capacity: int) -> None:
        self._scratch = scratch
        self._reaper = reaper
        self._capacity = capacity
        self._lock = threading.Lock()
        self._servers: OrderedDict[Path, ForkServer] = OrderedDict()
        self._refused: dict[Path, str] = {}
        self._starting: dict[Path, threading.Lock] = {}
        self.started_seconds = 0.0
        self.started = 0

    @contextlib.contextmanager
    def use(self, interpreter: Path, preload: tuple[str, ...], label: str) -> Iterator[ForkServer | None]:
        """The server for ``interpreter``, held for one cell; None: start the agent as usual."""
        server = self._get(interpreter, preload, label)
        try:
            yield server
        finally:
            if server is not None:
                with self._lock:
                    server.leases -= 1

    def _get(self, interpreter: Path, preload: tuple[str, ...], label: str) -> ForkServer | None:
        if self._capacity <= 0 or not preload:
            return None
        with self._lock:
            gate = self._starting.setdefault(interpreter, threading.Lock())
        with gate:
            with self._lock:
                if interpreter in self._refused:
                    return None
                server = self._servers.get(interpreter)
                if server is not None:
                    self._servers.move_to_end(interpreter)
                    server.leases += 1
                    return server
            t0 = time.monotonic()
            server = ForkServer(interpreter, preload, self._scratch, label, self._reaper)
            with self._lock:
                self.started_seconds += time.monotonic() - t0
                if not server.ready:
                    self._refused[interpreter] = server.why_not or ""
                    return None
                self._servers[interpreter] = server
                self.started += 1
                server.leases += 1
                idle = [p for p, s in self._servers.items() if p != interpreter and not s.busy]
                retire = idle[: max(0, len(self._servers) - self._capacity)]
                closing = [self._servers.pop(p) for p in retire]
        for old in closing:
            old.close()
        return server

    def refused(self) -> dict[Path, str]:
        with self._lock:
            return dict(self._refused)

    def close(self) -> None:
        with self._lock:
            servers, self._servers = list(self._servers.values()), OrderedDict()
        for server in servers:
            server.close()

