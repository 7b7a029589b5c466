"""A PyPI release's environment: a uv venv with exactly that version (and the family's
extras) installed, reused while its fingerprint (Python, uv, the requirement) holds."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from matrix.execute.environment import Environment, tool_version

__all__ = ["UV_GONE", "UvVenv", "uv_bin"]

# uv's answers meaning "this exact release can no longer be had", not a failure on our side.
UV_GONE = re.compile(r"(No solution found|not found in the package registry|"
                     r"no version of|was yanked|Because .* (depends|requires))")


def uv_bin() -> str:
    from uv import find_uv_bin  # the uv wheel is one of our dependencies

    return find_uv_bin()



@dataclass
class UvVenv(Environment):
    kind: ClassVar[str] = "uv-venv"
    python: str = sys.executable
    # Asked of every version; uv installs a release that lacks one without it (a warning).
    extras: tuple[str, ...] = ()

    def fingerprint(self) -> dict[str, str]:
        py = tool_version((self.python, "-c", "import sys; print(sys.version.split()[0])"))
        extras = {"extras": ",".join(self.extras)} if self.extras else {}
        return {**super().fingerprint(), "python": py, "uv": tool_version((uv_bin(), "--version")), **extras}

    @property
    def requirement(self) -> str:
        extras = f"[{','.join(self.extras)}]" if self.extras else ""
        if self.artifact is not None:
            return f"{self.package}{extras} @ {self.artifact.resolve().as_uri()}"
        return f"{self.package}{extras}=={self.version}"

    @property
    def interpreter(self) -> Path:
        return self.location / "bin" / "python"

    def healthy(self) -> bool:
        return self.interpreter.exists()

    def _install(self) -> None:
        uv = uv_bin()
        self._run_installer([uv, "venv", "--quiet", "--no-project", "--python", self.python,
                             str(self.location)], UV_GONE)
        self._run_installer([uv, "pip", "install", "--quiet", "--python", str(self.interpreter),
                             self.requirement], UV_GONE)
