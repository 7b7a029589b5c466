"""Serve a stand-in (an aiohttp application) from a thread of the harness for the length of one
cell: on 127.0.0.1 only, at a port the kernel picks.

In-process rather than a child process: nothing to reap, no port file to wait for, and the
server is gone when the block ends even if the cell raised. Each cell gets its own server
(its own script, its own log, its own port)."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from aiohttp import web

from matrix.errors import InfraError

__all__ = ["serving"]

_START_TIMEOUT = 20.0


@contextmanager
def serving(make_app: Callable[[], web.Application], what: str) -> Iterator[int]:
    """Serve ``make_app()`` for the block; yields its port. ``what``: how an error names it."""
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    holder: dict[str, int | BaseException] = {}
    stop: asyncio.Event | None = None

    async def main() -> None:
        nonlocal stop
        stop = asyncio.Event()
        try:
            runner = web.AppRunner(make_app(), access_log=None)
            await runner.setup()
            # Our own socket: loopback only, a free port the kernel picks, and we can read it back.
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(("127.0.0.1", 0))
            holder["port"] = sock.getsockname()[1]
            await web.SockSite(runner, sock).start()
            ready.set()
            try:
                await stop.wait()
            finally:
                await runner.cleanup()
        except BaseException as err:  # reported to the caller, not lost in the thread
            holder["error"] = err
            ready.set()

    thread = threading.Thread(target=loop.run_until_complete, args=(main(),), name=what, daemon=True)
    thread.start()
    try:
        port = holder.get("port") if ready.wait(_START_TIMEOUT) else None
        if not isinstance(port, int) or "error" in holder:
            err = holder.get("error")
            raise InfraError(f"starting {what}", f"{err!r}" if err else "it did not start in time")
        yield port
    finally:
        if stop is not None:
            loop.call_soon_threadsafe(stop.set)
        thread.join(_START_TIMEOUT)
        if not thread.is_alive():
            loop.close()
