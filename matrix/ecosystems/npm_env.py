"""An npm release's environment: a private prefix with exactly that version installed, and a
record of the optional packages the registry does not serve (npm leaves those out silently)."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from matrix.ecosystems.npm_optional import not_served
from matrix.errors import InfraError
from matrix.execute.environment import Environment, tool_version

__all__ = ["NPM_GONE", "NpmPrefix"]

# npm's answers meaning "this exact release can no longer be had", not a failure on our side.
NPM_GONE = re.compile(r"\b(ETARGET|E404|notarget|No matching version found)\b")
OPTIONAL_NOT_SERVED = ".compat-matrix-optional-not-served.json"


@dataclass
class NpmPrefix(Environment):
    kind: ClassVar[str] = "npm-prefix"

    def fingerprint(self) -> dict[str, str]:
        return {**super().fingerprint(), "npm": tool_version(("npm", "--version"))}

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
            spec = str(self.artifact.resolve()) if self.artifact is not None else f"{self.package}@{self.version}"
            self._run_installer(["npm", "install", "--prefix", str(self.location), spec, "--no-audit", "--no-fund",
                                 "--no-save", "--loglevel=error", "--cache", str(cache)], NPM_GONE)
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
