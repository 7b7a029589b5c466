"""Provisioned, cached environments behind one small interface.

``create()`` returns True when it built the environment, False when it reused it. Reuse
happens only when the fingerprint file (kind, package, version, tool versions) matches
exactly, and that file is written only after a successful install, so a half-built or
corrupt environment is rebuilt. Each environment has a lock: exclusive while building,
shared while in use, so eviction never removes one a probe is using.
"""

from __future__ import annotations

import functools
import json
import re
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, TypeVar

from matrix.errors import InfraError, StorageError, UninstallableError
from matrix.execute import proc
from matrix.execute.cache import dir_size, locked
from matrix.execute.sandbox import install_env
from matrix.execute.storage import write_atomic

__all__ = ["NO_SPACE", "Environment", "evict", "last_error_line", "make_env", "tool_version", "with_retries"]

E = TypeVar("E", bound="Environment")

FINGERPRINT = ".compat-matrix-env.json"
LAST_USED = ".compat-matrix-last-used"

# Registry answers meaning "this exact thing can no longer be had", as opposed to a network
# or disk failure on our side.
NO_SPACE = re.compile(r"(ENOSPC|no space left on device)", re.IGNORECASE)  # Go writes it in lower case


_ASKING: dict[tuple[str, ...], threading.Lock] = {}
_ASKING_LOCK = threading.Lock()


def tool_version(argv: tuple[str, ...]) -> str:
    """What ``argv`` prints last, asked once per process: every environment's fingerprint asks,
    and a run's first cells ask at once (four ``npm --version`` in parallel were a second of
    CPU at the start of every run, before a cell could start)."""
    with _ASKING_LOCK:
        lock = _ASKING.setdefault(argv, threading.Lock())
    with lock:
        return _tool_version(argv)


@functools.cache
def _tool_version(argv: tuple[str, ...]) -> str:
    res = proc.run(proc.Request(argv, install_env(), Path.cwd(), timeout=60))
    if not res.ok:
        raise InfraError(" ".join(argv), f"failed: {res.stderr.strip()[-300:]}")
    return res.stdout.strip().splitlines()[-1]


@dataclass
class Environment:
    """One cached environment of ``kind`` for ``package==version`` under ``location``."""

    kind: ClassVar[str] = ""
    package: str
    version: str
    location: Path
    install_timeout: float = 900.0
    log_dir: Path | None = None
    extra: dict[str, str] = field(default_factory=dict)
    # A local build installed instead of the registry's release (a candidate not published yet).
    artifact: Path | None = None

    def fingerprint(self) -> dict[str, str]:
        return {"kind": self.kind, "package": self.package, "version": self.version, **self.extra}

    @property
    def _fp_file(self) -> Path:
        return self.location / FINGERPRINT

    @property
    def _lock(self) -> Path:
        return self.location.with_name(self.location.name + ".lock")

    def stored(self) -> dict[str, object] | None:
        try:
            data = json.loads(self._fp_file.read_text())
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def is_ready(self) -> bool:
        data = self.stored()
        return data is not None and data.get("fingerprint") == self.fingerprint()

    def create(self) -> bool:
        # Fast path without the exclusive lock: taking it would wait for every probe that
        # holds the environment shared, serialising all cells that use it.
        if self.is_ready() and self.healthy():
            return False
        with locked(self._lock):
            if self.is_ready() and self.healthy():
                return False
            if self.location.exists():
                shutil.rmtree(self.location)  # stale, corrupt or from other tool versions
            self.location.mkdir(parents=True)
            t0 = time.monotonic()
            try:
                self._install()
            except BaseException:
                shutil.rmtree(self.location, ignore_errors=True)
                raise
            info = {
                "fingerprint": self.fingerprint(),
                "seconds": round(time.monotonic() - t0, 2),
                "bytes": dir_size(self.location),
                "created": time.time(),
            }
            self._write_info(info)
            return True

    def add_bytes(self, extra: int) -> None:
        """Count what was added to the environment after its install (eviction weighs it).
        Called with the environment in use (shared lock): the exclusive one would wait on us."""
        info = self.stored()
        if info is None or info.get("extra_bytes") == extra:
            return
        info["extra_bytes"] = extra
        self._write_info(info)

    def _write_info(self, info: dict[str, object]) -> None:
        # Readers without the lock see all of it or nothing; each writer's own temporary file
        # keeps two writers (an install and a cell adding bytes) apart.
        write_atomic(self._fp_file, json.dumps(info, indent=1))

    @contextmanager
    def in_use(self) -> Iterator[None]:
        """Hold a shared lock (blocks eviction) and mark it recently used."""
        with locked(self._lock, shared=True):
            (self.location / LAST_USED).touch()
            yield

    def healthy(self) -> bool:
        return True

    def _install(self) -> None:
        raise NotImplementedError

    def _run_installer(self, argv: list[str], gone: re.Pattern[str], env: dict[str, str] | None = None) -> proc.Result:
        res = proc.run(proc.Request(tuple(argv), env or install_env(), self.location,
                                    timeout=self.install_timeout))
        if res.ok:
            return res
        text = res.stdout + res.stderr
        log = self._write_log(argv, res)
        if res.timed_out:
            raise InfraError(f"installing {self.package}=={self.version}",
                             f"timed out after {self.install_timeout:.0f}s", log)
        if NO_SPACE.search(text):
            raise InfraError(f"installing {self.package}=={self.version}", "disk full", log)
        if gone.search(text):
            raise UninstallableError(self.package, self.version, last_error_line(text, gone))
        raise InfraError(f"installing {self.package}=={self.version}", last_error_line(text, gone), log)

    def _machine_failed(self, step: str, res: proc.Result, timeout: float | None = None) -> None:
        """Raise when a build step of the agent timed out or met a full disk: the machine's
        failure, never a verdict about the release."""
        full = NO_SPACE.search(res.stdout + res.stderr)
        if res.timed_out or full:
            raise InfraError(f"{step} for {self.package} {self.version}", "disk full" if full else
                             f"timed out after {timeout or self.install_timeout:.0f}s")

    def _write_log(self, argv: list[str], res: proc.Result) -> str | None:
        if self.log_dir is None:
            return None
        self.log_dir.mkdir(parents=True, exist_ok=True)
        name = f"install-{self.kind}-{self.package.replace('/', '_')}-{self.version}.log"
        path = self.log_dir / name
        path.write_text(f"$ {' '.join(argv)}\nexit {res.returncode}\n{res.stdout}\n{res.stderr}")
        return str(path)


_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s'\"]+", re.I)
_PREFIX = re.compile(r"^(npm (error|ERR!)\s*(404\s*)?|error:\s*)", re.I)
_NOISE = re.compile(r"(complete log of this run|^npm error\s*(404)?\s*$|tarball, folder, http url)", re.I)


def last_error_line(text: str, gone: re.Pattern[str] | None = None) -> str:
    """The line that says what went wrong, without the registry's address (which the
    client's configuration decides and our reports do not repeat)."""
    lines = [_PREFIX.sub("", ln.strip()) for ln in text.splitlines()]
    lines = [ln for ln in lines if ln and not _NOISE.search(ln)]
    key = [ln for ln in lines if (gone is not None and gone.search(ln)) or NO_SPACE.search(ln)
           or "could not be found" in ln]
    if key:
        best = "; ".join(dict.fromkeys(key))
    else:
        errs = [ln for ln in lines if "error" in ln.lower() or "ERR" in ln]
        best = (errs or lines or ["no output"])[-1]
    return _URL.sub("<registry URL>", best)[:500]


def make_env(kind: type[E], package: str, version: str, root: Path, **kw: object) -> E:
    """An environment of backend ``kind`` for ``package==version`` under ``root`` (not installed)."""
    # '/' (npm scopes, Go modules) and ':' (Maven coordinates) cannot be in a directory on a path list.
    safe = f"{package.replace('/', '__').replace(':', '__').lstrip('@')}-{version}"
    return kind(package=package, version=version, location=root / kind.kind / safe, **kw)  # type: ignore[arg-type]


def with_retries(action: Callable[[], bool], retries: int, base_delay: float = 2.0) -> bool:
    """Retry infra failures with exponential backoff; uninstallable and our bugs pass through."""
    for attempt in range(retries + 1):
        try:
            return action()
        except StorageError:
            raise  # a file we keep could not be written: asking again writes no more
        except InfraError:
            if attempt == retries:
                raise
            time.sleep(base_delay * 4**attempt)
    raise AssertionError("unreachable")


def evict(root: Path, kind: str, budget_bytes: int, keep: set[Path], first: set[Path] | None = None) -> list[Path]:
    """Remove environments of ``kind`` until the total fits the budget: those in ``first``
    (no longer needed), then the least recently used. Environments in use (shared lock
    held) or in ``keep`` are never removed."""
    base = root / kind
    if not base.exists():
        return []
    entries = []
    for d in base.iterdir():
        if not d.is_dir():
            continue
        try:
            info = json.loads((d / FINGERPRINT).read_text())
            size = int(info["bytes"]) + int(info.get("extra_bytes", 0))
        except (OSError, ValueError, KeyError):
            continue
        used = (d / LAST_USED).stat().st_mtime if (d / LAST_USED).exists() else info.get("created", 0)
        entries.append((used, d, size))
    total = sum(s for _, _, s in entries)
    removed: list[Path] = []
    first = first or set()
    for _used, d, size in sorted(entries, key=lambda e: (e[1] not in first, e[0])):
        if total <= budget_bytes:
            break
        if d in keep:
            continue
        with locked(d.with_name(d.name + ".lock"), blocking=False) as got:
            if not got:
                continue
            shutil.rmtree(d, ignore_errors=True)
        total -= size
        removed.append(d)
    return removed
