"""Provisioned, cached environments behind one small interface.

``create()`` returns True when it built the environment, False when it reused it. Reuse
happens only when the fingerprint file (kind, package, version, tool versions) matches
exactly, and that file is written only after a successful install, so a half-built or
corrupt environment is rebuilt. Each environment has a lock: exclusive while building,
shared while in use, so eviction never removes one a probe is using.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from matrix.ecosystems.gotool import go_command
from matrix.ecosystems.npm_optional import not_served
from matrix.errors import InfraError, UninstallableError, UserError
from matrix.execute import proc
from matrix.execute.cache import dir_size, locked
from matrix.execute.sandbox import install_env

__all__ = ["BACKENDS", "Environment", "NpmPrefix", "UvVenv", "evict", "make_env", "with_retries"]

FINGERPRINT = ".compat-matrix-env.json"
LAST_USED = ".compat-matrix-last-used"
OPTIONAL_NOT_SERVED = ".compat-matrix-optional-not-served.json"

# Registry answers meaning "this exact thing can no longer be had", as opposed to a network
# or disk failure on our side.
_NPM_GONE = re.compile(r"\b(ETARGET|E404|notarget|No matching version found)\b")
_UV_GONE = re.compile(r"(No solution found|not found in the package registry|"
                      r"no version of|was yanked|Because .* (depends|requires))")
_NO_SPACE = re.compile(r"(ENOSPC|No space left on device)")


@functools.cache
def _tool_version(argv: tuple[str, ...]) -> str:
    res = proc.run(proc.Request(argv, install_env(), Path.cwd(), timeout=60))
    if not res.ok:
        raise InfraError(" ".join(argv), f"failed: {res.stderr.strip()[-300:]}")
    return res.stdout.strip().splitlines()[-1]


def uv_bin() -> str:
    from uv import find_uv_bin  # the uv wheel is one of our dependencies

    return find_uv_bin()


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
        # Readers without the lock see all of it or nothing; a writer's own temporary name
        # keeps two writers (an install and a cell adding bytes) apart.
        tmp = self._fp_file.with_name(f"{FINGERPRINT}.{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(json.dumps(info, indent=1))
        tmp.replace(self._fp_file)

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
        if _NO_SPACE.search(text):
            raise InfraError(f"installing {self.package}=={self.version}", "disk full", log)
        if gone.search(text):
            raise UninstallableError(self.package, self.version, _last_error_line(text))
        raise InfraError(f"installing {self.package}=={self.version}", _last_error_line(text), log)

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


def _last_error_line(text: str) -> str:
    """The line that says what went wrong, without the registry's address (which the
    client's configuration decides and our reports do not repeat)."""
    lines = [_PREFIX.sub("", ln.strip()) for ln in text.splitlines()]
    lines = [ln for ln in lines if ln and not _NOISE.search(ln)]
    key = [ln for ln in lines if _NPM_GONE.search(ln) or _UV_GONE.search(ln) or _NO_SPACE.search(ln)
           or "could not be found" in ln]
    if key:
        best = "; ".join(dict.fromkeys(key))
    else:
        errs = [ln for ln in lines if "error" in ln.lower() or "ERR" in ln]
        best = (errs or lines or ["no output"])[-1]
    return _URL.sub("<registry URL>", best)[:500]


@dataclass
class UvVenv(Environment):
    kind: ClassVar[str] = "uv-venv"
    python: str = sys.executable
    # Asked of every version; uv installs a release that lacks one without it (a warning).
    extras: tuple[str, ...] = ()

    def fingerprint(self) -> dict[str, str]:
        py = _tool_version((self.python, "-c", "import sys; print(sys.version.split()[0])"))
        extras = {"extras": ",".join(self.extras)} if self.extras else {}
        return {**super().fingerprint(), "python": py, "uv": _tool_version((uv_bin(), "--version")), **extras}

    @property
    def requirement(self) -> str:
        extras = f"[{','.join(self.extras)}]" if self.extras else ""
        return f"{self.package}{extras}=={self.version}"

    @property
    def interpreter(self) -> Path:
        return self.location / "bin" / "python"

    def healthy(self) -> bool:
        return self.interpreter.exists()

    def _install(self) -> None:
        uv = uv_bin()
        self._run_installer([uv, "venv", "--quiet", "--no-project", "--python", self.python,
                             str(self.location)], _UV_GONE)
        self._run_installer([uv, "pip", "install", "--quiet", "--python", str(self.interpreter),
                             self.requirement], _UV_GONE)


@dataclass
class NpmPrefix(Environment):
    kind: ClassVar[str] = "npm-prefix"

    def fingerprint(self) -> dict[str, str]:
        return {**super().fingerprint(), "npm": _tool_version(("npm", "--version"))}

    @property
    def package_dir(self) -> Path:
        return self.location / "node_modules" / self.package

    def healthy(self) -> bool:
        return (self.package_dir / "package.json").exists()

    def package_json(self) -> dict[str, object]:
        data = json.loads((self.package_dir / "package.json").read_text())
        assert isinstance(data, dict)
        return data

    def _install(self) -> None:
        # npm's own cache keeps every tarball forever (about 70 MB per CLI release, past any
        # budget over a whole history): each install gets a private one, removed afterwards.
        cache = self.location / ".npm-cache"
        try:
            self._run_installer(["npm", "install", "--prefix", str(self.location),
                                 f"{self.package}@{self.version}", "--no-audit", "--no-fund",
                                 "--no-save", "--loglevel=error", "--cache", str(cache)], _NPM_GONE)
        finally:
            shutil.rmtree(cache, ignore_errors=True)
        self._check_optional()

    def _check_optional(self) -> list[str]:
        raw = self.package_json().get("optionalDependencies")
        declared = {str(k): str(v) for k, v in raw.items()} if isinstance(raw, dict) else {}
        found = not_served(self.location / "node_modules", declared, f"installing {self.package}=={self.version}")
        (self.location / OPTIONAL_NOT_SERVED).write_text(json.dumps(found))
        return found

    def optional_not_served(self) -> list[str]:
        """The optional dependencies the registry does not serve, so npm installed the
        package without them (``matrix/ecosystems/npm_optional.py``)."""
        try:
            found = json.loads((self.location / OPTIONAL_NOT_SERVED).read_text())
            return [str(x) for x in found]
        except (OSError, ValueError, TypeError):
            pass
        try:  # installed before this was checked
            return self._check_optional()
        except InfraError:
            self._fp_file.unlink(missing_ok=True)  # not whole: the next use installs it again
            raise


_GO_GONE = re.compile(r"(403 Forbidden|404 Not Found|410 Gone|not available|unknown revision|invalid version)")
GO_AGENT_SOURCE = Path(__file__).parent.parent / "families" / "copilot" / "go" / "agent"
GO_MODULE_DIR = "module-dir.txt"
GO_BUILD_ERRORS = "build-errors.txt"
# Tried in order: the first build that compiles is the agent. A tag selects how the CLI path
# is given (ClientOptions.Connection from 1.0, ClientOptions.CLIPath before).
GO_VARIANTS = ("copilot_connection", "")


@dataclass
class GoAgent(Environment):
    """One Go agent program built against exactly one version of a Go module: a go.mod that
    requires that version, the agent's source, the binary. A version the agent does not
    compile against is still a finished environment: its compiler messages are the verdict."""

    kind: ClassVar[str] = "go-agent"

    def fingerprint(self) -> dict[str, str]:
        argv, _ = go_command("version")
        source = hashlib.sha256(b"".join(p.read_bytes() for p in sorted(GO_AGENT_SOURCE.glob("*.go")))).hexdigest()
        return {**super().fingerprint(), "go": _tool_version(argv), "agent": source[:16]}

    @property
    def binary(self) -> Path:
        return self.location / "agent"

    @property
    def build_errors(self) -> str | None:
        path = self.location / GO_BUILD_ERRORS
        return path.read_text() if path.exists() else None

    @property
    def module_dir(self) -> str:
        path = self.location / GO_MODULE_DIR
        return path.read_text().strip() if path.exists() else ""

    def healthy(self) -> bool:
        return self.binary.exists() or (self.location / GO_BUILD_ERRORS).exists()

    def _install(self) -> None:
        (self.location / "go.mod").write_text(f"module compatmatrix/agent\n\ngo 1.24\n\n"
                                             f"require {self.package} v{self.version}\n")
        for src in GO_AGENT_SOURCE.glob("*.go"):
            shutil.copy(src, self.location / src.name)
        argv, env = go_command("mod", "download", f"{self.package}@v{self.version}")
        env = {**env, "GOFLAGS": "-mod=mod"}
        self._run_installer(list(argv), _GO_GONE, env)
        argv, _ = go_command("list", "-m", "-f", "{{.Dir}}", self.package)
        (self.location / GO_MODULE_DIR).write_text(self._run_installer(list(argv), _GO_GONE, env).stdout.strip())
        failures = []
        for tags in GO_VARIANTS:
            argv, _ = go_command("build", "-tags", tags, "-o", str(self.binary), ".")
            res = proc.run(proc.Request(argv, env, self.location, timeout=self.install_timeout))
            if res.ok:
                (self.location / "variant.txt").write_text(tags or "default")
                return
            if res.timed_out or _NO_SPACE.search(res.stderr):
                raise InfraError(f"building the agent for {self.package}@v{self.version}",
                                 "disk full" if _NO_SPACE.search(res.stderr) else "timed out")
            failures.append(f"$ go build -tags '{tags}'\n{res.stderr.strip()[-3000:]}")
        (self.location / GO_BUILD_ERRORS).write_text("\n\n".join(failures))


BACKENDS: dict[str, type[Environment]] = {b.kind: b for b in (UvVenv, NpmPrefix, GoAgent)}


def make_env(kind: str, package: str, version: str, root: Path, **kw: object) -> Environment:
    try:
        backend = BACKENDS[kind]
    except KeyError:
        raise UserError(f"unknown environment kind {kind!r}; valid: {', '.join(BACKENDS)}") from None
    safe = f"{package.replace('/', '__').lstrip('@')}-{version}"
    return backend(package=package, version=version, location=root / kind / safe, **kw)  # type: ignore[arg-type]


def with_retries(action: Callable[[], bool], retries: int, base_delay: float = 2.0) -> bool:
    """Retry infra failures with exponential backoff; uninstallable and our bugs pass through."""
    for attempt in range(retries + 1):
        try:
            return action()
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
