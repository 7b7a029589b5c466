"""cargo as installed on this machine, with its own configuration (the registry it is set up
with, its caches under CARGO_HOME), for discovery and for building agents."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from matrix.errors import UserError
from matrix.execute.sandbox import install_env

__all__ = ["cargo_command", "cargo_home"]

# cargo's and rustup's own settings pass (a registry mirror, offline, the toolchain); a token never.
_PASS = ("CARGO_", "RUSTUP_")


def cargo_home() -> Path:
    return Path(os.environ.get("CARGO_HOME") or Path.home() / ".cargo")


def cargo_command(*args: str) -> tuple[tuple[str, ...], dict[str, str]]:
    found = shutil.which("cargo") or (str(cargo_home() / "bin" / "cargo")
                                      if (cargo_home() / "bin" / "cargo").exists() else None)
    if found is None:
        raise UserError("cargo is not on PATH; install Rust (rustup) to measure the Rust SDK family")
    env = install_env(path_dirs=[Path(found).resolve().parent, Path(found).parent], passing=_PASS,
                      extra={"CARGO_HOME": str(cargo_home()), "CARGO_TERM_COLOR": "never"})
    return (found, *args), env
