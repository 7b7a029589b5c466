"""What npm left out of an install: the optional dependencies a package declares and npm
did not install.

npm skips an optional dependency without a word when it is for another platform, when the
registry does not serve the version asked for, and when its download fails. The first is
normal, the second changes what runs (the CLI's `npm-loader.js` then runs its JavaScript
fallback instead of its native binary) and is recorded, the third would be a different
package than the one published: an infrastructure error, and the install is retried."""

from __future__ import annotations

import functools
import json
import os
import platform
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from matrix.errors import InfraError
from matrix.execute import proc
from matrix.execute.sandbox import install_env

__all__ = ["PlatformPackage", "applies_here", "not_served"]

_EXACT = re.compile(r"^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$")
_NODE_CPU = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}


@dataclass(frozen=True)
class PlatformPackage:
    """A package's versions on the registry and the platforms its newest one declares."""

    versions: frozenset[str]
    os: tuple[str, ...] = ()
    cpu: tuple[str, ...] = ()
    libc: tuple[str, ...] = ()


def _allowed(values: tuple[str, ...], current: str) -> bool:
    """npm's rule for `os`, `cpu` and `libc`: a `!name` excludes, any plain name restricts."""
    if current in {v[1:] for v in values if v.startswith("!")}:
        return False
    plain = [v for v in values if not v.startswith("!")]
    return not plain or current in plain


def this_platform() -> tuple[str, str, str]:
    libc = "glibc" if hasattr(os, "confstr") and _has_glibc() else "musl"
    return sys.platform, _NODE_CPU.get(platform.machine().lower(), platform.machine().lower()), libc


def _has_glibc() -> bool:
    try:
        return bool(os.confstr("CS_GNU_LIBC_VERSION"))
    except (ValueError, OSError):
        return False


def applies_here(pkg: PlatformPackage) -> bool:
    system, cpu, libc = this_platform()
    return (_allowed(pkg.os, system) and _allowed(pkg.cpu, cpu)
            and (system != "linux" or _allowed(pkg.libc, libc)))


def _strings(value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


@functools.lru_cache(maxsize=256)
def lookup(name: str, timeout: float = 120.0) -> PlatformPackage | None:
    """The registry's versions of ``name`` (through npm, its configured registry), or None
    when it serves no such package. Asked once per run and package: every CLI release
    declares the same platform packages."""
    res = proc.run(proc.Request(("npm", "view", name, "versions", "os", "cpu", "libc", "--json"),
                                install_env(), Path.cwd(), timeout=timeout))
    if not res.ok:
        if re.search(r"\bE404\b", res.stdout + res.stderr):
            return None
        raise InfraError(f"asking the registry about {name}", (res.stderr or res.stdout).strip()[-300:])
    try:
        data = json.loads(res.stdout)
    except ValueError as err:
        raise InfraError(f"asking the registry about {name}", f"npm view printed no JSON: {err}") from err
    if not isinstance(data, dict):
        data = {"versions": data}
    return PlatformPackage(frozenset(_strings(data.get("versions"))), _strings(data.get("os")),
                           _strings(data.get("cpu")), _strings(data.get("libc")))


def not_served(node_modules: Path, declared: dict[str, str], what: str) -> list[str]:
    """``name@version`` of each optional dependency for this platform (or of a package the
    registry does not know at all) missing from ``node_modules`` because the registry does
    not serve that version. Raises InfraError for one this platform needs and the registry
    serves: npm dropped it (a failed download), the install is not whole. A package's
    platform is what its newest version declares.
    Ranges are not judged (npm's range rules are its own); every release we measure pins
    its platform packages exactly."""
    missing = []
    for name, spec in sorted(declared.items()):
        if (node_modules / name / "package.json").exists() or not _EXACT.match(spec):
            continue
        pkg = lookup(name)
        if pkg is not None and not applies_here(pkg):
            continue  # another platform's build
        if pkg is None or spec not in pkg.versions:
            missing.append(f"{name}@{spec}")
        else:
            raise InfraError(what, f"npm left out the optional {name}@{spec}, which this platform needs and the "
                                   "registry serves (a failed download); the install is retried")
    return missing
