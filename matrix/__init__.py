"""compat-matrix: measure which released SDK versions work with which released CLI versions."""

from collections.abc import Callable, Mapping
from importlib.metadata import PackageNotFoundError, version
from typing import Any

try:
    __version__ = version("compat-matrix")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0+src"

# Bumped whenever a change could alter every verdict (sandbox, process handling, the agents'
# shared steps). Each row records the version of its probe's rules (``rules_version``).
HARNESS_VERSION = "4"
# A change that could alter the verdicts of one probe's cells only bumps that probe here: exactly
# its cells become stale (marked on the site, re-measured by `run --stale`).
RULES_VERSIONS: dict[str, str] = {
    # 5: a connected handshake's stop() measured several times, its verdict the worst seen.
    "handshake": "5",
    # 5: each rule judged only where the same steps unmutated (its control) pass; a history
    # call that raises is fatal.
    "tolerance": "5",
}


def _stop_or_dead_cli(row: Any) -> bool:
    """Handshake rules 5 measure again: cells that connected (their stop is now a rate), and
    cells of a CLI that no runtime we have could start (now one fact about that CLI, recorded
    without running the SDK)."""
    detail = getattr(row, "detail", None)
    failed = detail.get("runtime_failures") if isinstance(detail, Mapping) else None
    return getattr(row, "outcome", "") in ("compatible", "degraded") or (
        isinstance(failed, Mapping) and getattr(row, "node_runtime", None) in failed)


# A rules version that can alter only some cells says which (a test of the stored row): a cell
# it leaves alone, measured by the version before, is as the new rules would measure it.
RULES_TOUCH: dict[tuple[str, str], Callable[[Any], bool]] = {
    ("handshake", "5"): _stop_or_dead_cli,
}


def rules_version(probe: str) -> str:
    """The version of ``probe``'s verdict rules that a row measured now records."""
    return RULES_VERSIONS.get(probe, HARNESS_VERSION)


def rules_current(row: Any) -> bool:
    """Whether a stored row (``probe``, ``harness_version``, ``outcome``... as attributes) is
    what the current rules of its probe would measure: every change since leaves it alone."""
    probe, measured_by = str(getattr(row, "probe", "")), str(getattr(row, "harness_version", "") or "")
    now = rules_version(probe)
    if measured_by == now:
        return True
    if not (measured_by.isdigit() and now.isdigit()) or int(measured_by) > int(now):
        return False
    return not any(RULES_TOUCH.get((probe, str(v)), lambda _row: True)(row)
                   for v in range(int(measured_by) + 1, int(now) + 1))


__all__ = ["HARNESS_VERSION", "RULES_TOUCH", "RULES_VERSIONS", "__version__", "rules_current", "rules_version"]
