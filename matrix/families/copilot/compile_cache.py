"""The CLI's compiled code, made once per CLI release and copied into every sandbox.

The CLI turns on Node's compile cache itself (`module.enableCompileCache()`), in its TMPDIR.
On a user's machine TMPDIR outlives the process, so from the second start on the CLI loads
its code already compiled; in a cell TMPDIR is the cell's own and every start compiled the
whole application again (1.0.102: 0.96 CPU-s per start cold, 0.73 warm). The cache is made
the way a cell starts the CLI (`--headless --stdio`, one request, stdin closed, the CLI
exits by itself and writes what it compiled), kept in the CLI's prefix, and each sandbox
gets its own copy (Node rewrites the cache at exit, so the files are never shared), and the
CLI alone (our launcher) is told to read it by paths relative to it (``PORTABLE``). Node
checks every entry against the source it compiles and ignores one that does not match:
what the CLI does is unchanged, only how soon it starts."""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from matrix.execute import proc
from matrix.execute.sandbox import Sandbox, sandbox
from matrix.families.copilot.cli_seed import Seed, plant

__all__ = ["CACHE_DIR", "PORTABLE", "asked_status", "make_compile_cache", "plant_compile_cache"]

CACHE_DIR = ".compat-matrix-compile-cache"
# Node's own name for the directory under TMPDIR (`module.enableCompileCache()` with no argument).
NODE_DIR = "node-compile-cache"
# Node keys each entry by the compiled file's path; the CLI compiles what it unpacked into
# HOME, a path of its own in every sandbox. Portable entries are keyed relative to the cache
# directory instead, and TMPDIR and HOME sit side by side in every sandbox.
PORTABLE = {"NODE_COMPILE_CACHE_PORTABLE": "1"}
_META = "made.json"
_STATUS = Path(__file__).parent / "cli_status.py"


@contextmanager
def asked_status(node: Path, entry: Path, seed: Seed | None, scratch: Path,
                 timeout: float) -> Iterator[tuple[proc.Result, Sandbox]]:
    """The CLI started as the SDKs start it and asked `status.get` with no SDK in between
    (``cli_status.py``), in a sandbox like a cell's, still there for a look inside."""
    with sandbox(scratch, path_dirs=[node.parent], extra=PORTABLE) as box:
        plant(seed, box.home)
        yield proc.run(proc.Request((proc.harness_python(), "-I", str(_STATUS), str(node), str(entry)),
                                    box.env, box.root, timeout=timeout)), box


def make_compile_cache(prefix: Path, node: Path, entry: Path, seed: Seed | None, scratch: Path,
                       timeout: float) -> Path | None:
    """Start the CLI once as the SDKs do and keep what it compiled; None when it compiled
    nothing (releases that do not turn the cache on, or that refuse the flags): their cells
    run as before. Made once per installed prefix, also when there is nothing to keep."""
    root = prefix / CACHE_DIR
    try:
        meta = json.loads((root / _META).read_text())
    except (OSError, ValueError):
        meta = None
    if isinstance(meta, dict):
        return root / NODE_DIR if meta.get("made") and (root / NODE_DIR).is_dir() else None
    # Made aside and renamed into place: a run preparing the same prefix at once keeps one.
    work = prefix / f"{CACHE_DIR}.{os.getpid()}.{threading.get_ident()}"
    shutil.rmtree(work, ignore_errors=True)
    with asked_status(node, entry, seed, scratch, timeout) as (res, box):
        made = Path(box.env["TMPDIR"]) / NODE_DIR
        keep = res.ok and made.is_dir() and any(p.is_file() for p in made.rglob("*"))
        work.mkdir(parents=True)
        if keep:
            shutil.move(str(made), str(work / NODE_DIR))
    (work / _META).write_text(json.dumps({"made": keep}))
    if not (root / _META).exists():  # a make cut short, never finished
        shutil.rmtree(root, ignore_errors=True)
    try:
        work.rename(root)
    except OSError:
        shutil.rmtree(work, ignore_errors=True)
    return root / NODE_DIR if keep and (root / NODE_DIR).is_dir() else None


def plant_compile_cache(cache: Path | None, tmpdir: Path) -> bool:
    """Give a sandbox's TMPDIR its own copy of the CLI's compiled code; False when there is none."""
    if cache is None or not cache.is_dir():
        return False
    shutil.copytree(cache, tmpdir / NODE_DIR)
    return True
