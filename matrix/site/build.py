"""Results -> static site: generated pages, heatmaps, the data twin, executed notebooks,
then ``mkdocs build --strict``."""

from __future__ import annotations

import asyncio
import hashlib
import json
import multiprocessing
import os
import re
import sys
import time
from collections.abc import Callable
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from importlib import metadata
from pathlib import Path

import pandas as pd

from matrix import HARNESS_VERSION, __version__
from matrix.answers.analysis import rows_of
from matrix.answers.changes import notes_of
from matrix.answers.report import records, report_columns
from matrix.errors import InfraError, StorageError, UserError
from matrix.execute import proc
from matrix.execute.storage import writing
from matrix.families.base import Picture, SiteView
from matrix.families.registry import FAMILIES, cells_frame, open_sources
from matrix.site.api import Documents, index_of, write_api
from matrix.site.api_v2 import write_api_v2
from matrix.site.changes_page import changes_page
from matrix.site.feed import feed_xml
from matrix.site.heatmap import labelled, marks_of, save_compare, save_heatmap
from matrix.site.notebooks import render_notebooks
from matrix.site.sitedata import write
from matrix.site.tree import pair_page_set, write_pages
from matrix.store.dataset import Sources
from matrix.store.results import ROWS_FILE, Releases

__all__ = ["BuildResult", "build_site"]

# How Python words an OSError: "[Errno 28] No space left on device: '/path'".
_OS_ERROR = re.compile(r"\[Errno (\d+)\] ([^:\n']+)")


@dataclass(frozen=True)
class BuildResult:
    site: Path
    pages: int
    notebooks_executed: dict[str, bool]
    seconds: float
    warnings: list[str]


def _digest(frame: pd.DataFrame) -> str:
    return hashlib.sha256(frame.to_json(orient="records", date_format="iso").encode()).hexdigest()[:16]


def _draw_once(png: Path, key: str, draw: Callable[[Path], None]) -> None:
    """Make ``png`` (a picture, or any generated file) unless the one there was made from the
    same input (``key``)."""
    stamp = png.with_suffix(".sha")
    if png.exists() and stamp.exists() and stamp.read_text() == key:
        return
    draw(png)
    stamp.write_text(key)


# What a picture is drawn from: sending only these to the drawing processes is quicker.
_PICTURE_COLUMNS = ["family", "sdk_version", "cli_version", "mutation", "outcome", "label"]


def _pictures(view: SiteView, assets: Path) -> list[tuple[Path, str, Callable[[Path], None]]]:
    """Every picture of the site (what each measured family's pages show, each once): its file,
    the key of what it is drawn from, how to draw it. A cell's text and the marks' meaning are
    read here, as its family says, so the drawing processes need no family."""
    measured = set(view.frame["family"].unique())
    chosen: dict[str, Picture] = {}
    for fam in view.families.values():
        if fam.name in measured:
            for picture in fam.pictures(view):
                chosen.setdefault(picture.name, picture)
    out: list[tuple[Path, str, Callable[[Path], None]]] = []
    for name, p in chosen.items():
        cells = labelled(p.cells)[_PICTURE_COLUMNS]
        marks = marks_of(p.cells)
        key = _digest(cells) + hashlib.sha256(json.dumps([p.title, p.columns, p.order, p.bands, marks]).encode()
                                              ).hexdigest()[:8]
        if p.bands:
            draw: Callable[[Path], None] = partial(save_compare, cells, p.bands, p.title, marks=marks)
        else:
            draw = partial(save_heatmap, cells, p.title, columns=p.columns, xlabel=p.xlabel, order=p.order,
                           marks=marks)
        out.append((assets / name, key, draw))
    return out


def _start_pictures(view: SiteView, assets: Path, pool: Executor) -> list[Future[None]]:
    """Draw the pictures not drawn yet from the same rows, in ``pool``: a whole history's take
    as long as its pages, which the build writes meanwhile."""
    assets.mkdir(parents=True, exist_ok=True)
    return [pool.submit(_draw_once, png, key, draw) for png, key, draw in _pictures(view, assets)]


def _plain_strings(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its text columns as Python strings: the pages read cells one at a time
    (``to_dict``, ``itertuples``), and pandas' Arrow-backed strings convert every value on the
    way out (the pages are the same; their generation takes 36 s instead of 41). The data twin
    keeps the frame's own types."""
    text = [c for c in frame.columns if frame[c].dtype == "str"]
    return frame.astype(dict.fromkeys(text, object)) if text else frame


def _data_twin(frame: pd.DataFrame, out: Path, generated_at: str,
               inputs: list[Path]) -> tuple[Path, str, Callable[[Path], None]]:
    """matrix.json (documented keys, with a header), rows.csv and rows.parquet, as a picture is
    made (its file, its key, how to make it): written again only when the stored rows (or our
    version) changed."""
    out.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    for path in inputs:
        if path.exists():
            digest.update(path.read_bytes())
    stored = digest.hexdigest()[:16]
    key = f"{stored}:{HARNESS_VERSION}:{__version__}:{generated_at}"
    return out / "matrix.json", key, partial(_write_twin, frame, out, generated_at)


def _write_twin(frame: pd.DataFrame, out: Path, generated_at: str, _made: Path) -> None:
    cols = report_columns()
    doc = {"schema": 1, "generated_at": generated_at, "harness_version": HARNESS_VERSION,
           "compat_matrix_version": __version__, "columns": cols.names, "rows": records(frame, cols)}
    (out / "matrix.json").write_text(json.dumps(doc, indent=1, default=str))
    flat = frame.copy()
    for col in cols.nested & set(flat.columns):
        flat[col] = flat[col].map(lambda v: json.dumps(v, default=str, sort_keys=True))
    for col in cols.integers & set(flat.columns):
        flat[col] = flat[col].astype("Int64")
    flat.to_csv(out / "rows.csv", index=False)
    flat.to_parquet(out / "rows.parquet", index=False)


def build_site(root: Path, sources: Sources | Path, site: Path, cache: Path, strict: bool = True) -> BuildResult:
    """Every file the build writes (pages, pictures, data, notebooks, the site): a disk that
    refuses one ends the build with a ``StorageError`` naming it. ``sources``: the dataset and
    local results (a bare path: local results only)."""
    with writing(site):
        given = sources if isinstance(sources, Sources) else open_sources(sources)
        return _build(root, given, site, cache, strict)


def _build(root: Path, sources: Sources, site: Path, cache: Path, strict: bool) -> BuildResult:
    t0 = time.monotonic()
    docs = root / "docs"
    # The notebooks' kernels read (and verify) the stored rows themselves, not the pages: they
    # run in their own processes from the start, while this one verifies and writes the pages.
    with ThreadPoolExecutor(max_workers=1) as side:
        notebooks = side.submit(_notebooks_on_a_thread, root / "notebooks", sources, docs / "notebooks",
                                cache / "notebooks")
        dataset = sources.dataset()
        if dataset is not None:
            dataset.snapshot()  # checked on every build, also one that finds its pages already written
        # The generated pages are a function of the stored rows, our code and the site's address:
        # when none changed since they were written, they are already the answer.
        generated, key = docs / ".compat-matrix-generated", _generation_digest(sources)
        try:
            done = json.loads(generated.read_text())
        except (OSError, ValueError):
            done = {}
        if done.get("key") == key and (docs / "index.md").exists():
            count, warnings = int(done["pages"]), list(done["warnings"])
        else:
            generated.unlink(missing_ok=True)
            count, warnings = _generate(sources, docs)
            generated.write_text(json.dumps({"key": key, "pages": count, "warnings": warnings}))
        executed = notebooks.result()
    # MkDocs's output is a function of its config, the docs tree and its own version: when
    # none changed since the last build into this site, that site is already the answer.
    stamp, key = site / ".compat-matrix-build", _inputs_digest(root, strict)
    if not (stamp.exists() and stamp.read_text() == key and (site / "index.html").exists()):
        argv = [sys.executable, "-m", "mkdocs", "build", "--quiet", "--config-file", str(root / "mkdocs.yml"),
                "--site-dir", str(site.resolve())]
        if strict:
            argv.append("--strict")
        stamp.unlink(missing_ok=True)
        # mkdocs is our own tool, not third-party code under test: it gets our environment.
        res = proc.run(proc.Request(tuple(argv), dict(os.environ), root, timeout=600))
        if not res.ok:
            said = (res.stderr or res.stdout).strip()
            refused = _OS_ERROR.search(said)
            if refused:  # MkDocs met the disk, not a page; it writes only into the site directory
                raise StorageError(site, OSError(int(refused.group(1)), refused.group(2)))
            raise InfraError("mkdocs build", said[-3000:])
        stamp.write_text(key)
    return BuildResult(site, count, executed, time.monotonic() - t0, warnings)


def _notebooks_on_a_thread(notebooks: Path, sources: Sources, out: Path, cache: Path) -> dict[str, bool]:
    """``render_notebooks`` on a thread of its own: nbclient talks to its kernels on an event loop
    it makes for the thread, which is closed here with the thread's work (left open, its sockets
    were garbage at exit)."""
    try:
        return render_notebooks(notebooks, sources, out, cache)
    finally:
        try:
            loop = asyncio.get_event_loop_policy().get_event_loop()
        except RuntimeError:  # every notebook came from the cache: no loop was made
            pass
        else:
            asyncio.set_event_loop(None)
            loop.close()


def _generate(sources: Sources, docs: Path) -> tuple[int, list[str]]:
    """Every generated page, picture, feed, API document and the data twin; returns how many
    pages, and what reading the rows warned about."""
    rows, warnings = sources.rows()
    if not rows:
        where = f"{sources.data} or {sources.results}" if sources.data else str(sources.results)
        raise UserError(f"no results in {where}; run `compat-matrix run` first or pass --results DIR")
    frame = cells_frame(rows)
    # The stamp is the newest measurement, not the wall clock, so an unchanged rebuild is identical.
    generated_at = str(frame["measured_at"].max()) or datetime.now(UTC).isoformat(timespec="seconds")
    # One view of every row for the whole build: every page, answer and picture asks it.
    plain = _plain_strings(frame)
    view = SiteView(rows_of(plain), sources.releases(), sources, FAMILIES, generated_at)
    # Other processes make the release pages and draw the pictures while this one makes the rest.
    with ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("spawn")) as pool:
        paired = pool.submit(_pair_pages_apart, plain, view.releases, sources.results, sources.data, generated_at)
        drawing = _start_pictures(view, docs / "assets", pool)
        # The data twin is a function of the frame alone: written by a drawing process too.
        twin = _data_twin(frame, docs / "data", generated_at, sources.inputs())
        drawing.append(pool.submit(_draw_once, *twin))
        # The API first: it reads only the view, and leaves the release pages time to be made.
        index = index_of(view)
        v1_docs = Documents()
        write_api(view, docs, index, v1_docs)
        write_api_v2(view, docs, index, v1_docs)
        pages = write_pages(view, docs, partial(_pair_pages_made, paired, view))
        published = {p.relative_to(docs).as_posix() for p in pages}
        entries = [(e, notes_of(view.rows, e)) for e in sources.changes()]
        # Only local rows can differ from the dataset: without them, no second frame of it.
        dataset = sources.kept_frame() if (sources.results / ROWS_FILE).exists() else None
        for rel, text in (("changes.md", changes_page(frame, entries, dataset, published)),
                          ("feed.xml", feed_xml(entries, generated_at, published))):
            write(docs / rel, text)
            pages.append(docs / rel)
        _finish_pictures(drawing, view, docs / "assets", twin)
        return len(pages), warnings


def _pair_pages_apart(frame: pd.DataFrame, releases: Releases, results: Path, data: Path | None,
                      generated_at: str) -> dict[str, str]:
    """``pair_page_set`` in a drawing process, of a view of the same rows (the release pages are
    half of the pages' time; they read no evidence, so the dataset is not read again here)."""
    view = SiteView(rows_of(frame), releases, open_sources(results, data), FAMILIES, generated_at)
    return pair_page_set(view)


def _pair_pages_made(made: Future[dict[str, str]], view: SiteView) -> dict[str, str]:
    """The release pages another process made, or made here where no process could start
    (as ``_finish_pictures`` does)."""
    try:
        return made.result()
    except BrokenProcessPool:
        return pair_page_set(view)


def _finish_pictures(drawing: list[Future[None]], view: SiteView, assets: Path,
                     twin: tuple[Path, str, Callable[[Path], None]]) -> None:
    """Wait for the pictures and the data twin; a picture that could not be drawn ends the
    build, as a page would. Where no drawing process could start (a ``python -`` session, whose
    main module a new process cannot import), they are made here instead."""
    try:
        for picture in drawing:
            picture.result()
    except BrokenProcessPool:
        for png, key, draw in [*_pictures(view, assets), twin]:
            _draw_once(png, key, draw)


def code_files() -> list[Path]:
    """What the generated pages are made by: our code, and the templates (a changed template
    must regenerate its pages as a changed module does)."""
    package = Path(__file__).resolve().parent.parent
    return sorted(p for p in package.rglob("*") if p.suffix in (".py", ".json", ".html", ".md") and p.is_file())


def _generation_digest(sources: Sources) -> str:
    families = ",".join(sorted(FAMILIES))
    digest = hashlib.sha256(f"{HARNESS_VERSION}:{__version__}:{families}:"
                            f"{os.environ.get('COMPAT_MATRIX_SITE_URL', '')}".encode())
    for path in [*sources.inputs(), *code_files()]:
        if path.exists():
            digest.update(str(path).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _inputs_digest(root: Path, strict: bool) -> str:
    digest = hashlib.sha256(f"{strict}:{metadata.version('mkdocs')}:{metadata.version('mkdocs-material')}".encode())
    for path in sorted([root / "mkdocs.yml", *(p for p in (root / "docs").rglob("*") if p.is_file())]):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    # The plugin MkDocs runs on every page (mkdocs.yml) makes the site as much as the docs do.
    for hook in (Path(__file__).with_name("raw_tables.py"), Path(__file__).parent.parent / "markup.py"):
        digest.update(hook.read_bytes() + b"\0")
    return digest.hexdigest()
