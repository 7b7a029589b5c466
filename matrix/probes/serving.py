"""Serve a stand-in from a thread of the harness for the length of one cell: on 127.0.0.1
only, at a port the kernel picks.

In-process rather than a child process: nothing to reap, no port file to wait for, and the
server is gone when the block ends even if the cell raised. Each cell gets its own server
(its own script, its own log, its own port)."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from typing import TypeVar

from aiohttp import web

from matrix.errors import InfraError

__all__ = ["in_thread", "serving"]

_START_TIMEOUT = 20.0
T = TypeVar("T")


@contextmanager
def in_thread(opened: Callable[[], AbstractAsyncContextManager[T]], what: str) -> Iterator[T]:
    """Enter ``opened()`` on an event loop of its own thread for the block; yields what it gives.
    ``what``: how an error names it (an error starting it is the harness's: an InfraError)."""
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    holder: dict[str, object] = {}
    stop: asyncio.Event | None = None

    async def main() -> None:
        nonlocal stop
        stop = asyncio.Event()
        try:
            async with opened() as value:
                holder["value"] = value
                ready.set()
                await stop.wait()
        except BaseException as err:  # reported to the caller, not lost in the thread
            holder["error"] = err
            ready.set()

    thread = threading.Thread(target=loop.run_until_complete, args=(main(),), name=what, daemon=True)
    thread.start()
    try:
        if not ready.wait(_START_TIMEOUT) or "value" not in holder:
            err = holder.get("error")
            raise InfraError(f"starting {what}", f"{err!r}" if err else "it did not start in time")
        yield holder["value"]  # type: ignore[misc]  # what opened() gave: a T
    finally:
        if stop is not None:
            loop.call_soon_threadsafe(stop.set)
        thread.join(_START_TIMEOUT)
        if not thread.is_alive():
            loop.close()


@asynccontextmanager
async def _served(make_app: Callable[[], web.Application]) -> AsyncIterator[int]:
    runner = web.AppRunner(make_app(), access_log=None)
    await runner.setup()
    try:
        # Our own socket: loopback only, a free port the kernel picks, and we can read it back.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        await web.SockSite(runner, sock).start()
        yield sock.getsockname()[1]
    finally:
        await runner.cleanup()


@contextmanager
def serving(make_app: Callable[[], web.Application], what: str) -> Iterator[int]:
    """Serve ``make_app()`` for the block; yields its port. ``what``: how an error names it."""
    with in_thread(lambda: _served(make_app), what) as port:
        yield port
