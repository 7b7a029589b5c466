"""The matrix as a picture: rows SDK versions, columns releases of the other side, colour by
outcome, the family's reading of each cell in it. Sized per cell so 50 x 110 stays readable."""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.collections import PathCollection
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.textpath import TextPath
from matplotlib.transforms import Affine2D

from matrix.families.registry import FAMILIES
from matrix.model import OUTCOME_INFO, Outcome
from matrix.versions import sort_key

__all__ = ["cell_label", "cell_labels", "compare_figure", "heatmap_figure", "labelled", "marks_of", "png_bytes",
           "save_compare", "save_heatmap"]

_ORDER = list(OUTCOME_INFO)
_LABEL = "cell-label:"
_CODE = {o.value: i for i, o in enumerate(_ORDER)}
_DARK = {Outcome.COMPATIBLE, Outcome.HANG, Outcome.CRASHED, Outcome.UNINSTALLABLE, Outcome.SURFACED, Outcome.FATAL,
         Outcome.KEPT}


def labelled(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with a ``label`` column: what each cell says, as its family reads it
    (``Family.cell_label``; a family this installation lacks: nothing)."""
    if "label" in frame:
        return frame
    labels = [FAMILIES[str(rec["family"])].cell_label(rec) if str(rec["family"]) in FAMILIES else ""
              for rec in frame.to_dict("records")]
    return frame.assign(label=labels)


def cell_label(rec: Mapping[Any, Any]) -> str:
    """What a cell says in a heatmap: its ``label``, as its family read it."""
    label = rec.get("label")
    return str(label) if isinstance(label, str) else ""


def draw_grid(ax: Axes, frame: pd.DataFrame, rows: list[str], cols: list[str], columns: str = "cli_version") -> None:
    """Colour one cell per row of ``frame`` (SDK version down, ``columns`` across) and write
    what the family's reading of it says (``labelled``), or the outcome's letter, in it."""
    grid = np.full((len(rows), len(cols)), np.nan)
    labels: dict[tuple[int, int], str] = {}
    for rec in frame.to_dict("records"):
        if str(rec[columns]) not in cols or str(rec["sdk_version"]) not in rows:
            continue
        i, j = rows.index(str(rec["sdk_version"])), cols.index(str(rec[columns]))
        grid[i, j] = _CODE[str(rec["outcome"])]
        labels[(i, j)] = cell_label(rec)
    cmap = ListedColormap([OUTCOME_INFO[o][0] for o in _ORDER])
    ax.imshow(grid, cmap=cmap, vmin=0, vmax=len(_ORDER) - 1, aspect="equal", interpolation="nearest")
    ax.set_yticks(range(len(rows)), rows, fontsize=7)
    _write_labels(ax, grid, labels)
    ax.set_xticks([x - 0.5 for x in range(1, len(cols))], minor=True)
    ax.set_yticks([y - 0.5 for y in range(1, len(rows))], minor=True)
    ax.grid(which="minor", color="white", linewidth=0.5)
    ax.tick_params(which="minor", length=0)


def _write_labels(ax: Axes, grid: np.ndarray, labels: dict[tuple[int, int], str]) -> None:
    """Each cell's label, centred: one collection of glyph outlines per distinct label and ink,
    not a text artist per cell (a whole history has thousands of cells; drawing each as
    text took most of a build)."""
    where: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for (i, j), text in labels.items():
        if text:
            ink = "white" if _ORDER[int(grid[i, j])] in _DARK else "black"
            where.setdefault((text, ink), []).append((j, i))
    scale = Affine2D().scale(ax.figure.dpi / 72)  # a TextPath is in points
    for (text, ink), cells in where.items():
        path = TextPath((0, 0), text, size=6)
        box = path.get_extents()
        glyphs = path.transformed(Affine2D().translate(-(box.x0 + box.x1) / 2, -(box.y0 + box.y1) / 2))
        ax.add_collection(PathCollection([glyphs], offsets=cells, offset_transform=ax.transData, transform=scale,
                                         facecolors=ink, edgecolors="none", snap=False, in_layout=False,
                                         gid=_LABEL + text),
                          autolim=False)  # snapped to pixels, thin strokes of a glyph would vanish


def cell_labels(ax: Axes) -> list[str]:
    """The label of every labelled cell of ``ax`` (in no particular order)."""
    out: list[str] = []
    for c in ax.collections:
        gid = c.get_gid() or ""
        if gid.startswith(_LABEL):
            out += [gid.removeprefix(_LABEL)] * len(np.asarray(c.get_offsets()))
    return out


def legend(ax: Axes, outcomes: set[str], marks: list[str] | tuple[str, ...] = ()) -> None:
    """The outcomes drawn, then what the marks after a cell's text mean (its family says)."""
    present = [o for o in _ORDER if o.value in outcomes]
    handles = [Patch(color=OUTCOME_INFO[o][0], label=o.value) for o in present]
    handles += [Patch(color="none", label=text) for text in marks]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)


def marks_of(frame: pd.DataFrame) -> list[str]:
    """What the marks in ``frame``'s cells mean, as their families say (each once)."""
    found: list[str] = []
    for family, part in frame.groupby("family", sort=True):
        if str(family) in FAMILIES:
            found += [m for m in FAMILIES[str(family)].marks(part) if m not in found]
    return found


def heatmap_figure(frame: pd.DataFrame, title: str, columns: str = "cli_version", xlabel: str = "CLI version",
                   order: list[str] | None = None, marks: list[str] | None = None) -> Figure:
    """``columns``: the field across; ``order``: its values left to right (default: by version);
    ``marks``: what the marks after a cell's text mean (default: as its family says)."""
    frame = labelled(frame)
    sdks = sorted(frame["sdk_version"].unique(), key=sort_key)
    cols = order or sorted(frame[columns].unique(), key=sort_key)
    cell = 0.28  # inches per cell: 110 columns -> ~31 in wide at 100 dpi, still legible
    # A bare Figure, not pyplot: no global backend state, works headless and in notebooks.
    fig = Figure(figsize=(max(6.0, 1.6 + cell * len(cols)), max(3.0, 1.8 + cell * len(sdks))), dpi=100)
    ax = fig.add_subplot()
    draw_grid(ax, frame, sdks, cols, columns)
    ax.set_xticks(range(len(cols)), cols, rotation=90, fontsize=7)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("SDK version")
    ax.set_title(title, fontsize=10)
    legend(ax, set(frame["outcome"]), marks_of(frame) if marks is None else marks)
    fig.tight_layout()
    return fig


def compare_figure(frame: pd.DataFrame, families: list[str], title: str, marks: list[str] | None = None) -> Figure:
    """One band per family, its SDK versions down, the union of CLI versions across: a
    column is the same CLI version in every band."""
    frame = labelled(frame)
    clis = sorted(frame[frame["family"].isin(families)]["cli_version"].unique(), key=sort_key)
    bands = [(f, sorted(frame[frame["family"] == f]["sdk_version"].unique(), key=sort_key)) for f in families]
    heights = [max(len(sdks), 1) for _, sdks in bands]
    cell = 0.28
    fig = Figure(figsize=(max(6.0, 2.4 + cell * len(clis)), 1.8 + cell * (sum(heights) + 2 * len(bands))), dpi=100)
    axes = fig.subplots(len(bands), 1, sharex=True, gridspec_kw={"height_ratios": heights}, squeeze=False)[:, 0]
    for ax, (family, sdks) in zip(axes, bands, strict=True):
        draw_grid(ax, frame[frame["family"] == family], sdks, clis)
        ax.set_title(family, loc="left", fontsize=9)
    axes[-1].set_xticks(range(len(clis)), clis, rotation=90, fontsize=7)
    axes[-1].set_xlabel("CLI version")
    shown = frame[frame["family"].isin(families)]
    legend(axes[0], set(shown["outcome"]), marks_of(shown) if marks is None else marks)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def save_heatmap(frame: pd.DataFrame, title: str, path: Path, **axes: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    heatmap_figure(frame, title, **axes).savefig(path)


def save_compare(frame: pd.DataFrame, families: list[str], title: str, path: Path, **kw: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    compare_figure(frame, families, title, **kw).savefig(path)


def png_bytes(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()
