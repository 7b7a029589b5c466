"""The product families under test: what to install on each side, and which probes apply."""

from __future__ import annotations

from dataclasses import dataclass

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
        ),
    )
}
