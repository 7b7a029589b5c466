"""The product families under test: what to install on each side, and which probes apply."""

from __future__ import annotations

from dataclasses import dataclass

from matrix.families.cosmo.checks import STANDIN_VERSION

__all__ = ["FAMILIES", "Family"]


@dataclass(frozen=True)
class Family:
    name: str
    sdk_ecosystem: str  # "pypi" | "npm"
    sdk_package: str
    cli_ecosystem: str
    cli_package: str
    probes: tuple[str, ...]
    description: str
    sdk_extras: tuple[str, ...] = ()  # requested for every version; a release without them installs without
    # A family whose other side is our local stand-in has one fixed "CLI version" (the
    # stand-in's contract version) and no registry on that side.
    standin: str | None = None
    # Sibling SDKs of the same repository: their version numbers are asked for by name when a
    # Go proxy refuses to list a module's versions.
    version_hints: tuple[tuple[str, str], ...] = ()
    # Python SDKs: the modules a warm server imports once per release (matrix/execute/forkserver.py).
    preload: tuple[str, ...] = ()

    @property
    def other_side(self) -> str:
        return "server" if self.standin else "CLI"


FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family(
            name="copilot-python",
            sdk_ecosystem="pypi",
            sdk_package="github-copilot-sdk",
            cli_ecosystem="npm",
            cli_package="@github/copilot",
            probes=("handshake", "tolerance", "contract"),
            description="github-copilot-sdk (PyPI) against the @github/copilot CLI (npm)",
            preload=("copilot",),
        ),
        Family(
            name="copilot-node",
            sdk_ecosystem="npm",
            sdk_package="@github/copilot-sdk",
            cli_ecosystem="npm",
            cli_package="@github/copilot",
            probes=("handshake", "tolerance"),
            description="@github/copilot-sdk (npm) against the @github/copilot CLI (npm)",
        ),
        Family(
            name="copilot-go",
            sdk_ecosystem="go",
            sdk_package="github.com/github/copilot-sdk/go",
            cli_ecosystem="npm",
            cli_package="@github/copilot",
            probes=("handshake", "tolerance"),
            description="the Go module github.com/github/copilot-sdk/go against the @github/copilot CLI (npm)",
            version_hints=(("pypi", "github-copilot-sdk"), ("npm", "@github/copilot-sdk")),
        ),
        Family(
            name="cosmo-python",
            sdk_ecosystem="pypi",
            sdk_package="cosmo-ai-sdk",
            cli_ecosystem="stand-in",
            cli_package="cosmo stand-in",
            probes=("tolerance", "identity", "strictness"),
            description="cosmo-ai-sdk (PyPI) against a local stand-in of the Cosmo backend",
            sdk_extras=("websocket",),
            standin=STANDIN_VERSION,
        ),
    )
}
