"""A copilot-go release's environment: the Go agent built against exactly that version of the
module (the module downloaded through the go command's configured proxy)."""

from __future__ import annotations

import hashlib
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from matrix.ecosystems.gotool import go_command
from matrix.execute import proc
from matrix.execute.environment import Environment, tool_version

__all__ = ["GO_BUILD_ERRORS", "GoAgent"]

_GO_GONE = re.compile(r"(403 Forbidden|404 Not Found|410 Gone|not available|unknown revision|invalid version)")
GO_AGENT_SOURCE = Path(__file__).parent / "agent"
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
        return {**super().fingerprint(), "go": tool_version(argv), "agent": source[:16]}

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
        if self.artifact is not None:  # a candidate's directory, in place of a tagged version
            require = f"require {self.package} v0.0.0\n\nreplace {self.package} => {self.artifact.resolve()}\n"
        else:
            require = f"require {self.package} v{self.version}\n"
        (self.location / "go.mod").write_text(f"module compatmatrix/agent\n\ngo 1.24\n\n{require}")
        for src in GO_AGENT_SOURCE.glob("*.go"):
            shutil.copy(src, self.location / src.name)
        argv, env = go_command("mod", "download", f"{self.package}@v{self.version}")
        env = {**env, "GOFLAGS": "-mod=mod"}
        if self.artifact is None:
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
            self._machine_failed("building the agent", res)
            failures.append(f"$ go build -tags '{tags}'\n{res.stderr.strip()[-3000:]}")
        (self.location / GO_BUILD_ERRORS).write_text("\n\n".join(failures))
