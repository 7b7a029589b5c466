"""Run one subprocess to completion or deadline, and leave nothing of it alive.

Stdlib and psutil (processes, their groups and environments) only; everything that spawns
a process goes through ``run``. The child gets its own session (so its process group holds
the grandchildren: the CLI an SDK spawns), closed stdin,
output to files (a grandchild holding a pipe open cannot block us), a deadline, then
TERM -> grace -> KILL of the whole group. Processes that left the group (setsid daemons)
are found afterwards by a marker variable in their environment and killed too.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

import psutil

__all__ = ["MARKER_VAR", "Child", "Reaper", "Request", "Result", "Spawn", "end_all", "find_marked", "harness_python",
           "kill_group", "popen", "run", "start", "write_executable"]

MARKER_VAR = "COMPAT_MATRIX_CELL"
_OUTPUT_LIMIT = 4 * 1024 * 1024


@dataclass(frozen=True)
class Request:
    argv: tuple[str, ...]
    env: Mapping[str, str]
    cwd: Path
    timeout: float
    grace: float = 3.0
    # A file the child creates to say that from then on it only waits (on a timeout of its
    # own), and what to call, once, when it does: the caller lends its CPU share meanwhile.
    waiting: Path | None = None
    on_wait: Callable[[], None] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Result:
    argv: tuple[str, ...]
    returncode: int | None  # None: killed by us at the deadline
    stdout: str
    stderr: str
    started: float  # time.time() at spawn
    elapsed: float
    timed_out: bool
    # Commands of processes still alive after the main process ended, that we had to kill.
    leftovers: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out


@dataclass
class Reaper:
    """Knows every live process group and marker, so an interrupted run can kill them all."""

    _lock: threading.Lock = field(default_factory=threading.Lock)
    _groups: set[int] = field(default_factory=set)
    _markers: set[str] = field(default_factory=set)
    cancelled: bool = False

    def add(self, pgid: int, marker: str | None) -> None:
        with self._lock:
            self._groups.add(pgid)
            if marker:
                self._markers.add(marker)
            cancelled = self.cancelled
        if cancelled:  # spawned while kill_all ran: it saw neither this group nor its marker
            _signal_group(pgid, signal.SIGKILL)

    def discard(self, pgid: int, marker: str | None) -> None:
        with self._lock:
            self._groups.discard(pgid)
            if marker:
                self._markers.discard(marker)

    def kill_all(self) -> None:
        """End the run: its groups, then everything else this harness process started
        (``end_all``): an interrupt ends the whole process, and a helper started without the
        run's reaper (an install, a CLI's seed, in a thread of its own session) would outlive it."""
        with self._lock:  # with add(): every group is either seen here or killed there
            self.cancelled = True
            groups, markers = list(self._groups), list(self._markers)
        for pgid in groups:
            _signal_group(pgid, signal.SIGKILL)
        for marker in markers:
            for pid, _ in find_marked(marker):
                _signal_pid(pid, signal.SIGKILL)
        end_all()


# Every group ``run`` started and has not yet seen end, whoever started it (with a run's
# reaper or none): what ``end_all`` kills besides the processes marked with our pid.
_started_lock = threading.Lock()
_started: set[int] = set()


def _owner(marker: str) -> int | None:
    """The harness process a marker names (``new_marker``), or None for one it did not make."""
    owner = marker.split("-", 1)[0]
    return int(owner) if owner.isdigit() else None


def end_all(wait: float = 5.0) -> tuple[str, ...]:
    """Kill every process this harness process started that is still alive: each group
    ``run`` started, and each process whose marker names us (it left its group); then wait,
    up to ``wait`` seconds, until they are gone, so that none is alive when we exit.
    Returns the commands killed."""
    with _started_lock:
        groups = list(_started)
    killed = [(pid, cmd) for pgid in groups for pid, cmd in _group_members(pgid)]
    killed += marked_by(os.getpid())
    for pgid in groups:
        _signal_group(pgid, signal.SIGKILL)
    for pid, _ in killed:
        _signal_pid(pid, signal.SIGKILL)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and any(_alive(pid) for pid, _ in killed):
        time.sleep(0.05)
    return tuple(dict.fromkeys(cmd for _, cmd in killed))


def harness_python() -> str:
    """Our own interpreter, for stdlib-only helpers (the shim) that run inside a sandbox."""
    return sys.executable


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _signal_pid(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def _command(p: psutil.Process) -> str:
    cmd = " ".join(p.cmdline()).strip()
    # An exiting process has an empty command line; its name is still known.
    return cmd or f"[{p.name()}]"


def _live(p: psutil.Process) -> bool:
    return p.status() != psutil.STATUS_ZOMBIE


def _group_members(pgid: int) -> list[tuple[int, str]]:
    found = []
    for p in psutil.process_iter():
        with contextlib.suppress(psutil.Error, OSError):
            if os.getpgid(p.pid) == pgid and _live(p):
                found.append((p.pid, _command(p)))
    return found


def new_marker() -> str:
    """A cell's marker names the harness process that owns it, so a later run can tell the
    processes of a run that was killed outright (kill -9) from those of a live one."""
    return f"{os.getpid()}-{uuid.uuid4().hex}"


def marked_processes() -> list[tuple[int, str, str]]:
    """(pid, marker, command) of every live process but this one whose environment carries
    a cell marker."""
    me = os.getpid()
    found = []
    for p in psutil.process_iter():
        if p.pid == me:
            continue
        with contextlib.suppress(psutil.Error, OSError):
            marker = p.environ().get(MARKER_VAR)
            if marker and _live(p):
                found.append((p.pid, marker, _command(p)))
    return found


def sweep_orphans() -> list[str]:
    """Kill processes left by a harness that no longer exists; return what was killed."""
    killed = []
    for pid, marker, command in marked_processes():
        owner = _owner(marker)
        if owner is not None and owner != os.getpid() and not _alive(owner):
            killed.append(command)
            _signal_pid(pid, signal.SIGKILL)
    return killed


def marked_by(*owners: int) -> list[tuple[int, str]]:
    """(pid, command) of the live processes whose marker names one of the harness processes
    ``owners``: what those runs started, not what another harness beside them did."""
    return [(pid, command) for pid, marker, command in marked_processes() if _owner(marker) in owners]


def find_marked(marker: str) -> list[tuple[int, str]]:
    """Live processes whose environment carries ``MARKER_VAR=marker``."""
    return [(pid, command) for pid, m, command in marked_processes() if m == marker]


def _terminate(pgid: int, grace: float) -> None:
    _signal_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not _group_members(pgid):
            return
        time.sleep(0.05)
    _signal_group(pgid, signal.SIGKILL)


def _sweep(pgid: int, marker: str | None, grace: float) -> tuple[str, ...]:
    """Kill whatever the finished process left behind; return what it was."""
    left = _group_members(pgid)
    if marker:
        seen = {pid for pid, _ in left}
        left += [p for p in find_marked(marker) if p[0] not in seen]
    if not left:
        return ()
    _terminate(pgid, grace)
    for pid, _ in left:
        _signal_pid(pid, signal.SIGKILL)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and (
        _group_members(pgid) or any(_alive(pid) for pid, _ in left) or (marker and find_marked(marker))
    ):
        time.sleep(0.05)
    return tuple(cmd for _, cmd in left)


def _alive(pid: int) -> bool:
    try:
        return _live(psutil.Process(pid))
    except psutil.Error:
        return False


def _read(f: IO[bytes]) -> str:
    f.seek(0)
    data = f.read(_OUTPUT_LIMIT)
    return data.decode("utf-8", errors="replace")


class Child(Protocol):
    """What ``run`` needs of a started process: a Popen, or a cell forked by a warm server."""

    pid: int
    returncode: int | None

    def wait(self, timeout: float | None = None) -> int: ...

    def poll(self) -> int | None: ...


# Starts req in its own session with the given output files; ``run`` does the rest.
Spawn = Callable[[Request, IO[bytes], IO[bytes]], Child]


# A file written to be run (a CLI's launcher) cannot be executed, by anyone, while some
# process holds it open for writing ("Text file busy", ETXTBSY), and a child we fork while
# one thread writes it holds it until that child's own exec: an SDK that starts the launcher
# right after it is written then fails to start the CLI. Our starts and such writes take
# turns (``Popen`` returns once its child has exec'd).
_spawning = threading.Lock()


def start(argv: Sequence[str], **options: Any) -> subprocess.Popen[bytes]:
    """``subprocess.Popen(argv, **options)``, never while ``write_executable`` writes."""
    with _spawning:
        return subprocess.Popen(argv, **options)


def write_executable(path: Path, text: str) -> None:
    """Write a file to be run, closed before any process we start next is forked."""
    with _spawning:
        path.write_text(text)
    path.chmod(0o755)


def popen(req: Request, out: IO[bytes], err: IO[bytes]) -> Child:
    """The usual ``Spawn``: a new process."""
    return start(req.argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=dict(req.env), cwd=req.cwd,
                 start_new_session=True)


def kill_group(pgid: int) -> None:
    _signal_group(pgid, signal.SIGKILL)


# How often a child that may say it waits (``Request.waiting``) is looked at.
WAITING_POLL = 0.1


def _wait(child: Child, req: Request) -> None:
    """Wait for ``child`` up to the request's deadline (``TimeoutExpired`` after it), calling
    ``req.on_wait`` once when the child creates ``req.waiting``."""
    if req.waiting is None or req.on_wait is None:
        child.wait(timeout=req.timeout)
        return
    deadline = time.monotonic() + req.timeout
    told = False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise subprocess.TimeoutExpired(list(req.argv), req.timeout)
        try:
            child.wait(timeout=left if told else min(WAITING_POLL, left))
            return
        except subprocess.TimeoutExpired:
            if not told and req.waiting.exists():
                told = True
                req.on_wait()


def run(req: Request, reaper: Reaper | None = None, spawn: Spawn = popen) -> Result:
    marker = req.env.get(MARKER_VAR)
    # Named files: a forked child opens its output by path.
    with tempfile.NamedTemporaryFile() as out, tempfile.NamedTemporaryFile() as err:
        started = time.time()
        t0 = time.monotonic()
        proc = spawn(req, out, err)
        pgid = proc.pid  # start_new_session makes the child its group's leader
        with _started_lock:
            _started.add(pgid)
        if reaper:
            reaper.add(pgid, marker)
        timed_out = False
        try:
            try:
                _wait(proc, req)
            except subprocess.TimeoutExpired:
                timed_out = True
                _terminate(pgid, req.grace)
                proc.wait()
            elapsed = time.monotonic() - t0
            leftovers = _sweep(pgid, marker, req.grace)
        finally:
            # Also on KeyboardInterrupt or any error of ours: nothing may outlive the run.
            if proc.poll() is None:
                _signal_group(pgid, signal.SIGKILL)
                proc.wait()
            _signal_group(pgid, signal.SIGKILL)
            with _started_lock:
                _started.discard(pgid)
            if reaper:
                reaper.discard(pgid, marker)
        return Result(
            argv=req.argv,
            returncode=None if timed_out else proc.returncode,
            stdout=_read(out),
            stderr=_read(err),
            started=started,
            elapsed=elapsed,
            timed_out=timed_out,
            leftovers=leftovers,
        )
