"""A copilot-java release's environment: the release's jar and its dependencies resolved by
Maven into the cache's own local repository, and the Java agent compiled against exactly them.
A release the agent does not compile against is still a finished environment: the compiler's
words are its verdict."""

from __future__ import annotations

import hashlib
import re
import shutil
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from matrix.errors import UserError
from matrix.execute import proc
from matrix.execute.environment import Environment, tool_version
from matrix.families.copilot.java.mvntool import mvn_command

__all__ = ["JAVA_BUILD_ERRORS", "JavaAgent", "agent_digest", "agent_sources"]

AGENT_DIR = Path(__file__).parent / "agent"
JAVA_BUILD_ERRORS = "build-errors.txt"
CLASSPATH = "classpath.txt"
_GONE = re.compile(r"(Could not find artifact|was not found in|Could not resolve dependencies)")


def agent_sources() -> list[Path]:
    """The agent's sources (Agent.java and the probes it runs), in a stable order."""
    return sorted(AGENT_DIR.glob("*.java"))


def agent_digest() -> str:
    """What the fingerprint keeps of the agent: every source, by name and content."""
    h = hashlib.sha256()
    for source in agent_sources():
        h.update(source.name.encode() + b"\0" + source.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise UserError(f"{name} is not on PATH; install a JDK 17 to measure the Java SDK family")
    return str(Path(found).resolve())


@dataclass
class JavaAgent(Environment):
    kind: ClassVar[str] = "java-agent"

    def fingerprint(self) -> dict[str, str]:
        return {**super().fingerprint(), "javac": tool_version((_tool("javac"), "-version")),
                "agent": agent_digest()}

    @property
    def local_repo(self) -> Path:
        """Every release shares one; a candidate has its own, where its jar is installed under
        the version it says it is without touching the published release of that version."""
        return self.location / "_m2" if self.artifact is not None else self.location.parent / "_m2"

    @property
    def classes(self) -> Path:
        return self.location / "classes"

    @property
    def build_errors(self) -> str | None:
        path = self.location / JAVA_BUILD_ERRORS
        return path.read_text() if path.exists() else None

    def command(self) -> tuple[str, ...]:
        """How the agent runs: the release's class path, its own version for the report."""
        cp = (self.location / CLASSPATH).read_text().strip()
        return (_tool("java"), f"-Dcompatmatrix.sdk.version={self.version}", "-cp", f"{self.classes}:{cp}", "Agent")

    def healthy(self) -> bool:
        return (self.classes / "Agent.class").exists() or (self.location / JAVA_BUILD_ERRORS).exists()

    def _install(self) -> None:
        group, _, artifact = self.package.partition(":")
        version = self._install_candidate() if self.artifact is not None else self.version
        (self.location / "pom.xml").write_text(
            '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
            '<groupId>compatmatrix</groupId><artifactId>agent</artifactId><version>0</version>'
            f'<dependencies><dependency><groupId>{group}</groupId><artifactId>{artifact}</artifactId>'
            f'<version>{version}</version></dependency></dependencies></project>\n')
        argv, env = mvn_command(self.local_repo, "dependency:build-classpath", f"-Dmdep.outputFile={CLASSPATH}")
        self._run_installer(list(argv), _GONE, env)
        names = [source.name for source in agent_sources()]
        for name in names:
            shutil.copy(AGENT_DIR / name, self.location / name)
        cp = (self.location / CLASSPATH).read_text().strip()
        res = proc.run(proc.Request((_tool("javac"), "-d", str(self.classes), "-cp", cp, *names), env,
                                    self.location, timeout=self.install_timeout))
        if res.ok:
            return
        self._machine_failed("compiling the agent", res)
        (self.location / JAVA_BUILD_ERRORS).write_text(
            f"$ javac {' '.join(names)}\n{(res.stdout + res.stderr).strip()[-3000:]}\n"
            "the agent does not compile against this release (its client API differs)")

    def _install_candidate(self) -> str:
        """The candidate jar installed into this environment's own local repository with the
        POM Maven packed into it (its dependencies, resolved as a user's build would); the
        version it says it is."""
        assert self.artifact is not None
        group, _, artifact = self.package.partition(":")
        try:
            with zipfile.ZipFile(self.artifact) as z:
                pom = z.read(f"META-INF/maven/{group}/{artifact}/pom.xml")
                props = z.read(f"META-INF/maven/{group}/{artifact}/pom.properties").decode()
        except KeyError as err:
            raise UserError(f"{self.artifact}: {err.args[0]}; a jar built by `mvn package` carries its POM there, "
                            "pass that jar") from None
        version = next(line.split("=", 1)[1].strip() for line in props.splitlines() if line.startswith("version="))
        (self.location / "candidate-pom.xml").write_bytes(pom)
        argv, env = mvn_command(self.local_repo, "install:install-file", f"-Dfile={self.artifact.resolve()}",
                                f"-DpomFile={self.location / 'candidate-pom.xml'}")
        self._run_installer(list(argv), _GONE, env)
        return version
