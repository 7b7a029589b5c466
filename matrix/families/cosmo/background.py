"""Serve the stand-in from a thread of the harness for the length of one probe.

In-process rather than a child process: nothing to reap, no port file to wait for, and the
server is gone when the block ends even if the probe raised. Each probe gets its own
server (its own scenario, its own log, its own port)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from matrix.families.cosmo.standin import Scenario, StandIn, running
from matrix.probes.serving import in_thread

__all__ = ["serving"]


@contextmanager
def serving(scenario: Scenario, log: Path) -> Iterator[StandIn]:
    with in_thread(lambda: running(scenario, log), "the Cosmo stand-in") as server:
        yield server
