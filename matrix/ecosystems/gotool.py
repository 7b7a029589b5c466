"""The go command as installed on this machine, with its own configuration (GOPROXY,
GOFLAGS, the module and build caches under HOME), for discovery and for building agents."""

from __future__ import annotations

import shutil
from pathlib import Path

from matrix.errors import UserError
from matrix.execute.sandbox import install_env

__all__ = ["go_command"]


def go_command(*args: str) -> tuple[tuple[str, ...], dict[str, str]]:
    """argv and environment for the go command as installed (its own configuration: GOPROXY,
    GOFLAGS, the module and build caches under HOME)."""
    found = shutil.which("go")
    if found is None:
        raise UserError("the go command is not on PATH; install Go to measure the Go SDK family")
    return (found, *args), install_env(path_dirs=[Path(found).resolve().parent])
