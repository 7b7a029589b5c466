"""Typed exceptions. Each carries the offending value and says what to do about it.

The CLI turns every ``UserError`` into one line on stderr and exit code 2; ``InfraError``
is our side failing (registry, network, disk) and never becomes a verdict about an SDK.
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "CorruptResultsError",
    "InfraError",
    "MatrixError",
    "UninstallableError",
    "UnknownVersionError",
    "UserError",
]


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


class UninstallableError(MatrixError):
    """The registry no longer lets this exact version be installed (e.g. a dependency was
    unpublished). Recorded as the ``uninstallable`` outcome and not retried on every run."""

    def __init__(self, package: str, version: str, detail: str) -> None:
        self.package = package
        self.version = version
        self.detail = detail
        super().__init__(f"{package}=={version} cannot be installed: {detail}")
