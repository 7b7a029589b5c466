"""How starved of CPU the machine is: the basis for not believing a timeout."""

from __future__ import annotations

import psutil

__all__ = ["load_per_core"]


def load_per_core() -> float:
    """The 1-minute load average (runnable and waiting processes) per logical core."""
    return psutil.getloadavg()[0] / (psutil.cpu_count() or 1)
