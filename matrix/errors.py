"""Typed exceptions, and the exit code each becomes. Each carries the offending value and says
what to do about it.

The CLI turns every ``UserError`` into one line on stderr and exit code 2; ``InfraError``
(``StorageError`` among them: a file we keep could not be written) is our side failing
(registry, network, disk), exit 3, and never becomes a verdict about an SDK.
"""

from __future__ import annotations

import errno as _errno
from pathlib import Path

__all__ = [
    "EXIT_INFRA",
    "EXIT_INTERRUPTED",
    "EXIT_USER",
    "ConfigError",
    "CorruptResultsError",
    "InfraError",
    "MatrixError",
    "StorageError",
    "UninstallableError",
    "UnknownVersionError",
    "UserError",
    "exit_code",
]

EXIT_USER = 2  # bad input: a config, an argument, a file, a damaged dataset
EXIT_INFRA = 3  # our side failed (or some cells of a run were infrastructure errors)
EXIT_INTERRUPTED = 130  # Ctrl-C or SIGTERM


class MatrixError(Exception):
    """Base of every error compat-matrix raises on purpose."""


class UserError(MatrixError):
    """Bad input from the user: config, arguments, files. Exit code 2."""


class ConfigError(UserError):
    def __init__(self, where: str, problem: str, fix: str) -> None:
        self.where = where
        self.problem = problem
        self.fix = fix
        super().__init__(f"{where}: {problem}. {fix}")


class UnknownVersionError(UserError):
    def __init__(self, package: str, version: str, known: list[str]) -> None:
        self.package = package
        self.version = version
        tail = ", ".join(known[-8:])
        super().__init__(
            f"{package} has no released version {version!r}. "
            f"Run `compat-matrix discover` to list them; the newest are: {tail}"
        )


class CorruptResultsError(UserError):
    def __init__(self, path: str, line: int, problem: str) -> None:
        self.path = path
        self.line = line
        super().__init__(
            f"{path}:{line}: {problem}. The valid rows are kept; move the file aside "
            "or delete that line to continue."
        )


class InfraError(MatrixError):
    """Our side failed (registry, network, disk, a tool). Retried; never a verdict."""

    def __init__(self, what: str, detail: str, log: str | None = None) -> None:
        self.what = what
        self.detail = detail
        self.log = log
        where = f" (full log: {log})" if log else ""
        super().__init__(f"{what}: {detail}{where}")


_FIX = {
    _errno.ENOSPC: "free space on that filesystem (or write to another one) and run again",
    _errno.EDQUOT: "free space within your quota (or write to another filesystem) and run again",
    _errno.EROFS: "the filesystem is read-only: remount it writable or write elsewhere",
    _errno.ENOENT: "the directory vanished while the run wrote to it: restore it or write elsewhere",
    _errno.EACCES: "this user may not write there: fix its permissions or write elsewhere",
    _errno.EPERM: "this user may not write there: fix its permissions or write elsewhere",
}


class StorageError(InfraError):
    """A file we keep could not be written: our infrastructure, never a verdict (exit 3)."""

    def __init__(self, path: Path | str, err: OSError, kept: str = "") -> None:
        self.path = str(path)
        self.errno = err.errno
        reason = err.strerror or str(err)
        fix = _FIX.get(err.errno or 0, "check that filesystem and run again")
        MatrixError.__init__(self, f"cannot write {self.path}: {reason}; {fix}{'; ' + kept if kept else ''}")
        self.what, self.detail, self.log = f"cannot write {self.path}", reason, None


class UninstallableError(MatrixError):
    """The registry no longer lets this exact version be installed (e.g. a dependency was
    unpublished). Recorded as the ``uninstallable`` outcome and not retried on every run."""

    def __init__(self, package: str, version: str, detail: str) -> None:
        self.package = package
        self.version = version
        self.detail = detail
        super().__init__(f"{package}=={version} cannot be installed: {detail}")


def exit_code(err: MatrixError) -> int:
    """The exit code of an error compat-matrix raised on purpose."""
    return EXIT_INFRA if isinstance(err, InfraError) else EXIT_USER
