"""Writing what a run keeps (rows, transcripts, stand-in logs, release lists, exports, the
site) so that a full disk, a read-only filesystem or a directory that vanished ends the run
with one line naming the path and what to do, and never leaves half a file behind.

Stdlib only. ``write_atomic`` is the one way a whole file is (re)written: a temporary file of
its own in the same directory (two writers never share one), fsync, then ``os.replace``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from matrix.errors import StorageError

__all__ = ["StorageError", "ensure_room", "write_atomic", "writing"]

@contextlib.contextmanager
def writing(path: Path | str, kept: str = "") -> Iterator[None]:
    """Any OSError inside becomes a ``StorageError`` naming ``path`` (or the file the OS named)."""
    try:
        yield
    except OSError as err:
        raise StorageError(err.filename or path, err, kept) from None


def write_atomic(path: Path, data: str | bytes) -> None:
    """Replace ``path`` with ``data`` in one step: readers see the old file or the new one."""
    raw = data.encode() if isinstance(data, str) else data
    with writing(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(raw)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                Path(tmp).unlink()
            raise


def ensure_room(directory: Path, nbytes: int = 4096) -> None:
    """A real write of ``nbytes`` into ``directory``, removed again: a full disk, a read-only
    mount or a vanished directory shows here before anything is measured for it."""
    with writing(directory):
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".room-")
        try:
            written = os.write(fd, b"\0" * nbytes)
            os.fsync(fd)
            if written != nbytes:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(directory))
        finally:
            os.close(fd)
            Path(tmp).unlink()
