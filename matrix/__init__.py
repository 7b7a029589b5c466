"""compat-matrix: measure which released SDK versions work with which released CLI versions."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("compat-matrix")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0+src"

# Bumped whenever a change could alter every verdict (sandbox, process handling, the agents'
# shared steps). Each row records the version of its probe's rules (``rules_version``).
HARNESS_VERSION = "4"
# A change that could alter the verdicts of one probe's cells only bumps that probe here: exactly
# its cells become stale (marked on the site, re-measured by `run --stale`).
RULES_VERSIONS: dict[str, str] = {}


def rules_version(probe: str) -> str:
    """The version of ``probe``'s verdict rules that a row measured now records."""
    return RULES_VERSIONS.get(probe, HARNESS_VERSION)


__all__ = ["HARNESS_VERSION", "RULES_VERSIONS", "__version__", "rules_version"]
