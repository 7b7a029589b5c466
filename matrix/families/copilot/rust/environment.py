"""A copilot-rust release's environment: the Rust agent built against exactly that version of
the crate (``=X.Y.Z``), through cargo's configured registry, into one target directory shared by
every release (the dependencies they have in common are compiled once).

The crate's default feature ``bundled-cli`` embeds a CLI its build script downloads (not from a
registry: it fails here); the agent is built without it and with the crate's switch
``COPILOT_SKIP_CLI_DOWNLOAD`` set, with ``runtime`` where the release has that feature (from 1.0.16 on
``Client::start`` needs it), and is given the CLI by explicit path, as a user who pins a CLI is.
Which features a release has is found by building: a release that does not know ``runtime`` is
built without it."""

from __future__ import annotations

import enum
import hashlib
import json
import re
import shutil
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from matrix.errors import InfraError, UninstallableError
from matrix.execute import proc
from matrix.execute.environment import Environment, last_error_line, tool_version
from matrix.families.copilot.rust.cargotool import cargo_command

__all__ = ["NO_LIBRARY", "NO_PROBES", "RUST_BUILD_ERRORS", "RustAgent"]

CRATE = "github-copilot-sdk"
RUST_AGENT_SOURCE = Path(__file__).parent / "agent"
RUST_BUILD_ERRORS = "build-errors.txt"
PROBES_BUILD_ERRORS = "probes-build-errors.txt"  # the agent was built for the handshake alone
SDK_DIR = "sdk-dir.txt"
# Tried in order: the first feature set the release declares (no default features either way).
FEATURES = (("runtime",), ())
# The agent's own build variants, tried in order for each feature set: ``prepared`` opens a
# session with Client::prepare_session (1.0.13 on), subscribing before its first event; without
# it, with create_session and a subscription right after (all an older release lets an
# application do). Where the agent does not compile with ``prepared``, it is built again
# without it; where its session code (``probes``) does not compile at all, it is built for the
# handshake alone, which needs neither: the release's client is still measured, and its session
# and tolerance cells say why they were not run (0.1.0: the session API differs).
AGENT_VARIANTS = (("probes", "prepared"), ("probes",), ())
# cargo's words for a requirement the registry has no version for.
_GONE = re.compile(r"(failed to select a version for the requirement|no matching package named|"
                   r"could not find .* in registry)")
_UNKNOWN_FEATURE = re.compile(r"does not have (that|these) features?|feature `?\w+`? .*not .*found", re.I)
# A compiler error in a crate other than ours: the release itself does not build here.
_CRATE_FAILED = re.compile(r"could not compile `([\w-]+)`")
# The release has no library by the crate's name at all (0.0.0 holds the name, nothing else).
_NO_LIBRARY = re.compile(r"unlinked crate `github_copilot_sdk`")
AGENT_FAILED = "the agent does not compile against this release (its client API differs)"
NO_PROBES = ("the agent's session code does not compile against this release (its session API differs from the "
             "one the agent drives): not measured; its handshake is")
NO_LIBRARY = "the release has no library github_copilot_sdk: nothing in it for an application to call"
# The first build of the shared dependencies takes minutes on two cores.
BUILD_TIMEOUT = 2400.0


class _Then(enum.Enum):
    """What follows one build of the agent."""

    BUILT = "built"
    VARIANT = "the agent's next variant"
    FEATURES = "the next feature set"
    VERDICT = "the compiler's words are the verdict"


def _slug(version: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", version.lower())


@dataclass
class RustAgent(Environment):
    """One Rust agent program built against exactly one version of the crate. A version the
    agent does not compile against, or that does not compile itself, is still a finished
    environment: the compiler's messages are the verdict (``build_errors``)."""

    kind: ClassVar[str] = "rust-agent"

    def fingerprint(self) -> dict[str, str]:
        argv, _ = cargo_command("--version")
        source = hashlib.sha256(b"".join(p.read_bytes() for p in sorted(RUST_AGENT_SOURCE.rglob("*.rs")))
                                + repr((FEATURES, AGENT_VARIANTS)).encode()).hexdigest()
        return {**super().fingerprint(), "cargo": tool_version(argv), "agent": source[:16]}

    @property
    def binary(self) -> Path:
        return self.location / "agent"

    @property
    def target_dir(self) -> Path:
        return self.location.parent / "_target"

    @property
    def build_errors(self) -> str | None:
        path = self.location / RUST_BUILD_ERRORS
        return path.read_text() if path.exists() else None

    @property
    def probes_build_errors(self) -> str | None:
        """Why the agent was built for the handshake alone (its session code did not compile
        against this release), or None: it runs every probe."""
        path = self.location / PROBES_BUILD_ERRORS
        return path.read_text() if path.exists() else None

    @property
    def sdk_dir(self) -> str:
        path = self.location / SDK_DIR
        return path.read_text().strip() if path.exists() else ""

    def healthy(self) -> bool:
        # A build from before the SDK's folder was always recorded is built again (cargo reuses
        # the shared target directory, so that costs seconds).
        built = self.binary.exists() and (self.location / SDK_DIR).exists()
        return built or (self.location / RUST_BUILD_ERRORS).exists()

    def _manifest(self, features: tuple[str, ...], agent: tuple[str, ...] = ()) -> str:
        if self.artifact is not None:  # a candidate's crate, unpacked, in place of a registry version
            source = f'path = "{self._unpacked()}"'
        else:
            source = f'version = "={self.version}"'
        return (f'[package]\nname = "{self._bin}"\nversion = "0.0.0"\nedition = "2021"\n'
                f'publish = false\n\n[[bin]]\nname = "{self._bin}"\npath = "src/main.rs"\n\n'
                f'[features]\ndefault = {json.dumps(list(agent))}\nprobes = []\nprepared = []\n\n'
                f'[dependencies]\n{CRATE} = {{ {source}, default-features = false, '
                f'features = {json.dumps(list(features))} }}\n'
                'tokio = { version = "1", features = ["rt-multi-thread", "macros", "time"] }\n'
                # The crate's own dependencies (the same versions and features): the probes'
                # handlers (async-trait), reading an event (serde), the SDK's log (tracing).
                'serde_json = "1"\nserde = "1"\nasync-trait = "0.1"\ntracing = "0.1"\n\n[workspace]\n')

    def _install(self) -> None:
        shutil.copytree(RUST_AGENT_SOURCE / "src", self.location / "src", dirs_exist_ok=True)
        argv, env = cargo_command("build", "--quiet", "--message-format", "short")
        env = {**env, "CARGO_TARGET_DIR": str(self.target_dir), "COMPAT_MATRIX_SDK_VERSION": self.version,
               # The crate's build script fetches a CLI to embed unless told not to (its own switch):
               # the cell's CLI is given by path, and the network is the registries only.
               "COPILOT_SKIP_CLI_DOWNLOAD": "1",
               # No debug info: a third of the build and link time, and nothing reads it.
               "CARGO_PROFILE_DEV_DEBUG": "0"}
        timeout = max(self.install_timeout, BUILD_TIMEOUT)
        failures: list[str] = []
        for features in FEATURES:
            for agent in AGENT_VARIANTS:
                then = self._build(argv, env, timeout, features, agent, failures)
                if then is not _Then.VARIANT:
                    break
            if then is _Then.BUILT:
                return
            if then is _Then.VERDICT:
                break
        (self.location / RUST_BUILD_ERRORS).write_text("\n\n".join(failures))

    def _build(self, argv: tuple[str, ...], env: dict[str, str], timeout: float, features: tuple[str, ...],
               agent: tuple[str, ...], failures: list[str]) -> _Then:
        """One build, and what follows it: the agent is built, the agent's next variant or the
        next feature set is tried, or the compiler's words (appended last to ``failures``) are
        the release's verdict."""
        (self.location / "Cargo.toml").write_text(self._manifest(features, agent))
        res = proc.run(proc.Request(argv, env, self.location, timeout=timeout))
        text = res.stdout + res.stderr
        what = f"$ cargo build (features {list(features)}, agent {list(agent)})"
        if res.ok:
            shutil.copy2(self.target_dir / "debug" / self._bin, self.binary)
            (self.location / "variant.txt").write_text(",".join(features) or "no features")
            if "probes" not in agent:  # what the session code's builds said: the other probes' reason
                (self.location / PROBES_BUILD_ERRORS).write_text("\n\n".join(failures))
            self._find_sdk_dir(env)
            return _Then.BUILT
        self._machine_failed("building the agent", res, timeout)
        if _UNKNOWN_FEATURE.search(text):
            failures.append(f"{what}\n{text.strip()[-1500:]}")
            return _Then.FEATURES
        if not _CRATE_FAILED.search(text):
            # Resolving or downloading failed: the registry's answer, or ours (never a verdict).
            log = self._write_log(list(argv), res)
            if _GONE.search(text):
                raise UninstallableError(self.package, self.version, last_error_line(text, _GONE))
            raise InfraError(f"building the agent for {self.package} {self.version}",
                             last_error_line(text, _GONE), log)
        who = self._who_failed(text)
        if who == AGENT_FAILED and agent != AGENT_VARIANTS[-1]:
            failures.append(f"{what}\n{text.strip()[-1500:]}")
            return _Then.VARIANT
        # Last: the verdict's message is the tail of these words.
        failures.append(f"{what}\n{text.strip()[-3000:]}\n{who}")
        return _Then.VERDICT

    def _unpacked(self) -> Path:
        """The candidate's sources: a ``.crate`` (what ``cargo package`` makes) unpacked into this
        environment once, or a crate's directory as it is."""
        assert self.artifact is not None
        if self.artifact.is_dir():
            return self.artifact.resolve()
        into = self.location / "crate"
        if not into.exists():
            with tarfile.open(self.artifact) as t:
                t.extractall(into, filter="data")
        return next(p.parent for p in sorted(into.glob("*/Cargo.toml")))

    @property
    def _bin(self) -> str:
        """Its name in the shared target directory: one per release, so a build of another
        release cannot replace it before it is copied out."""
        return f"agent-{_slug(self.version)}"

    @staticmethod
    def _who_failed(text: str) -> str:
        if _NO_LIBRARY.search(text):
            return NO_LIBRARY
        crates = set(_CRATE_FAILED.findall(text))
        if CRATE in crates:
            return (f"the crate {CRATE} itself does not compile here (a user building it with this toolchain "
                    "hits the same)")
        if crates and all(c.startswith("agent-") for c in crates):
            return AGENT_FAILED
        return f"a dependency does not compile: {', '.join(sorted(crates))}"

    def _find_sdk_dir(self, env: dict[str, str]) -> None:
        """Records where cargo put the SDK's source, or "" when cargo cannot say: asked once
        either way (``healthy`` builds again only what was never asked)."""
        found = ""
        # Offline first; a cold cargo home may lack index entries of crates the build never
        # needed (other platforms' dependencies), and then only cargo's registry can say.
        for extra in (("--offline",), ()):
            argv, _ = cargo_command("metadata", "--format-version", "1", *extra)
            res = proc.run(proc.Request(argv, env, self.location, timeout=300))
            if res.ok:
                found = next((str(Path(pkg["manifest_path"]).parent) for pkg in json.loads(res.stdout)
                              .get("packages", []) if pkg.get("name") == CRATE), "")
                break
        (self.location / SDK_DIR).write_text(found)
