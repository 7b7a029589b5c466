"""compat-matrix: measure which released SDK versions work with which released CLI versions."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("compat-matrix")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0+src"

# Bumped whenever a change could alter every verdict (sandbox, process handling, the agents'
# shared steps). Each row records the version of its probe's rules (``Family.rules``).
HARNESS_VERSION = "4"
# A change that can alter the verdicts of one probe's cells only bumps that probe's rules version,
# which its family declares (``Family.rules``): exactly its cells become stale.
