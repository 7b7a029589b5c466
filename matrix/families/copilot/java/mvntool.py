"""Maven as installed on this machine, with its own configuration (the repositories its
settings name, or its built-in default), into a local repository of the cache's own."""

from __future__ import annotations

import shutil
from pathlib import Path

from matrix.errors import UserError
from matrix.execute.sandbox import install_env

__all__ = ["mvn_command"]

# Maven's and the JVM's own settings pass; a credential never.
_PASS = ("MAVEN_", "JAVA_HOME")


def mvn_command(local_repo: Path, *args: str) -> tuple[tuple[str, ...], dict[str, str]]:
    found = shutil.which("mvn")
    if found is None:
        raise UserError("mvn is not on PATH; install Maven (and a JDK 17) to measure the Java SDK family")
    env = install_env(path_dirs=[Path(found).resolve().parent], passing=_PASS)
    return (found, "--batch-mode", "--no-transfer-progress", f"-Dmaven.repo.local={local_repo}", *args), env
