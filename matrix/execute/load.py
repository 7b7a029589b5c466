"""How starved of CPU the machine is: the basis for not believing a timeout."""

from __future__ import annotations

import threading
import time

import psutil

__all__ = ["IdleShare", "load_per_core"]


def load_per_core() -> float:
    """The 1-minute load average (runnable and waiting processes) per logical core."""
    return psutil.getloadavg()[0] / (psutil.cpu_count() or 1)


class IdleShare:
    """The share of the machine's CPU time spent idle since the reading before, read at most
    once per ``every`` seconds (readers in between get the last figure): whether a core is
    free now, where the load average lags by a minute."""

    def __init__(self, every: float = 1.0) -> None:
        self._every = every
        self._lock = threading.Lock()
        self._at = time.monotonic()
        self._last = psutil.cpu_times()
        self._share = 1.0

    def __call__(self) -> float:
        with self._lock:
            now = time.monotonic()
            if now - self._at >= self._every:
                times = psutil.cpu_times()
                total = sum(times) - sum(self._last)
                idle = _idle(times) - _idle(self._last)
                self._share = idle / total if total > 0 else self._share
                self._at, self._last = now, times
            return self._share


def _idle(times: object) -> float:
    """Idle time, and time spent waiting on the disk (a core free to compute)."""
    return float(getattr(times, "idle", 0.0)) + float(getattr(times, "iowait", 0.0))
