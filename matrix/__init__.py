"""compat-matrix: measure which released SDK versions work with which released CLI versions."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("compat-matrix")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0+src"

# Bumped whenever a change could alter a verdict (agent, classification, sandbox).
# Rows measured by another harness version are re-measured by an incremental run.
HARNESS_VERSION = "4"

__all__ = ["HARNESS_VERSION", "__version__"]
