"""Execute the notebooks in notebooks/ against the stored results (they never run probes)
and render them to Markdown for the site.

Execution is cached on a hash of the notebook's source and the results data, so a rebuild
with nothing changed does not start a kernel. A failing cell fails the build and names the
notebook and the cell."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from nbconvert import MarkdownExporter

from matrix.errors import MatrixError
from matrix.execute.storage import write_atomic
from matrix.store.dataset import Sources

__all__ = ["NotebookError", "render_notebooks"]



class NotebookError(MatrixError):
    def __init__(self, notebook: Path, detail: str) -> None:
        self.notebook = notebook
        super().__init__(f"notebook {notebook} failed: {detail}. Fix the cell, then rerun `compat-matrix build`")


_LIBRARY = Path(__file__).parent


def _key(source: bytes, data: list[Path]) -> str:
    """Notebook source + results + our own library (the notebooks import it)."""
    h = hashlib.sha256(source)
    for path in [*sorted(_LIBRARY.rglob("*.py")), *data]:
        if path.exists():
            h.update(path.name.encode())
            h.update(path.read_bytes())
    return h.hexdigest()[:20]


def execute(path: Path, sources: Sources, cache: Path, timeout: float = 600) -> tuple[nbformat.NotebookNode, bool]:
    """The executed notebook and whether it had to run (False: served from the cache)."""
    source = path.read_bytes()
    key = _key(source, [*sources.inputs(), *sorted(sources.results.glob("*.json"))])
    cached = cache / f"{path.stem}-{key}.ipynb"
    if cached.exists():
        return nbformat.read(cached, as_version=4), False
    nb = nbformat.reads(source.decode(), as_version=4)
    # The notebook finds the data through this variable, set only for its kernel.
    env = dict(os.environ, **sources.env())
    client = NotebookClient(nb, timeout=int(timeout), kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    # The kernel talks to us over sockets in a private directory, not over local TCP (which
    # the kernel warned about on every build's terminal, and which any local user can reach).
    with tempfile.TemporaryDirectory(prefix="cm-kernel-") as sockets:
        client.km = client.create_kernel_manager()
        client.km.transport = "ipc"
        client.km.ip = os.path.join(sockets, "k")
        _run(client, path, env)
    _refuse_stderr(path, nb)
    cache.mkdir(parents=True, exist_ok=True)
    for old in cache.glob(f"{path.stem}-*.ipynb"):
        old.unlink()
    write_atomic(cached, nbformat.writes(nb))
    return nb, True


def _run(client: NotebookClient, path: Path, env: dict[str, str]) -> None:
    try:
        client.execute(env=env)
    except CellExecutionError as err:
        raise NotebookError(path, str(err).strip().splitlines()[-1]) from None
    except Exception as err:  # kernel could not start, timeout: still the notebook's build failing
        raise NotebookError(path, f"{type(err).__name__}: {err}") from None


def _refuse_stderr(path: Path, nb: nbformat.NotebookNode) -> None:
    """A warning a cell printed would be published as it is, with the kernel's own temporary
    paths in it: it fails the build like an exception does."""
    for number, cell in enumerate(nb.cells, 1):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream" and output.get("name") == "stderr":
                said = str(output.get("text", "")).strip().splitlines()
                raise NotebookError(path, f"cell {number} wrote to stderr ({said[0] if said else 'empty'}); "
                                          "the site would publish it: fix what it warns about")


def render_notebooks(notebooks: Path, sources: Sources, out: Path, cache: Path) -> dict[str, bool]:
    """Execute (or reuse) each notebook and write ``out/NAME.md`` plus its images.
    Returns notebook name -> whether it was executed this time."""
    executed: dict[str, bool] = {}
    exporter = MarkdownExporter()
    out.mkdir(parents=True, exist_ok=True)
    for path in sorted(notebooks.glob("*.ipynb")):
        nb, ran = execute(path, sources, cache)
        executed[path.stem] = ran
        files_dir = f"{path.stem}_files"
        body, resources = exporter.from_notebook_node(nb, resources={"output_files_dir": files_dir})
        for name, blob in (resources.get("outputs") or {}).items():
            target = out / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(blob)
        text = (f"<!-- executed from notebooks/{path.name} against the stored results -->\n\n" + body)
        target_md = out / f"{path.stem}.md"
        if not target_md.exists() or target_md.read_text() != text:
            target_md.write_text(text)
    return executed
