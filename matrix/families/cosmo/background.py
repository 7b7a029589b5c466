"""Serve the stand-in from a thread of the harness for the length of one probe.

In-process rather than a child process: nothing to reap, no port file to wait for, and the
server is gone when the block ends even if the probe raised. Each probe gets its own
server (its own scenario, its own log, its own port)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from matrix.errors import InfraError
from matrix.families.cosmo.standin import Scenario, StandIn, running

__all__ = ["serving"]

_START_TIMEOUT = 20.0


@contextmanager
def serving(scenario: Scenario, log: Path) -> Iterator[StandIn]:
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    holder: dict[str, StandIn | BaseException] = {}
    stop: asyncio.Event | None = None

    async def main() -> None:
        nonlocal stop
        stop = asyncio.Event()
        try:
            async with running(scenario, log) as server:
                holder["server"] = server
                ready.set()
                await stop.wait()
        except BaseException as err:  # reported to the caller, not lost in the thread
            holder["error"] = err
            ready.set()

    thread = threading.Thread(target=loop.run_until_complete, args=(main(),), name="cosmo-stand-in", daemon=True)
    thread.start()
    try:
        if not ready.wait(_START_TIMEOUT) or "server" not in holder:
            err = holder.get("error")
            raise InfraError("starting the Cosmo stand-in", f"{err!r}" if err else "it did not start in time")
        server = holder["server"]
        assert isinstance(server, StandIn)
        yield server
    finally:
        if stop is not None:
            loop.call_soon_threadsafe(stop.set)
        thread.join(_START_TIMEOUT)
        if not thread.is_alive():
            loop.close()
