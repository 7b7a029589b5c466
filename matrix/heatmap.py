"""The matrix as a picture: rows SDK versions, columns CLI versions, colour by outcome,
negotiated protocol in the cell. Sized per cell so 50 x 110 stays readable."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from .outcomes import OUTCOME_INFO, Outcome
from .versions import sort_key

__all__ = ["heatmap_figure", "png_bytes", "save_heatmap"]

_ORDER = list(OUTCOME_INFO)
_CODE = {o.value: i for i, o in enumerate(_ORDER)}
_MARK = {Outcome.REFUSED: "R", Outcome.LAUNCH_FAILED: "L", Outcome.HANG: "H", Outcome.CRASHED: "C",
         Outcome.UNINSTALLABLE: "U", Outcome.INFRA_ERROR: "?", Outcome.HARNESS_ERROR: "!",
         Outcome.SURFACED: "S", Outcome.IGNORED: "I", Outcome.DOWNGRADED: "D", Outcome.LOST: "X",
         Outcome.FATAL: "F", Outcome.NOT_APPLICABLE: "-", Outcome.KEPT: "K", Outcome.BROKEN: "B"}


def heatmap_figure(frame: pd.DataFrame, title: str, columns: str = "cli_version", xlabel: str = "CLI version",
                   order: list[str] | None = None) -> Figure:
    """``columns``: the field across; ``order``: its values left to right (default: by version)."""
    sdks = sorted(frame["sdk_version"].unique(), key=sort_key)
    clis = order or sorted(frame[columns].unique(), key=sort_key)
    grid = np.full((len(sdks), len(clis)), np.nan)
    labels: dict[tuple[int, int], str] = {}
    for rec in frame.to_dict("records"):
        if str(rec[columns]) not in clis:
            continue
        i, j = sdks.index(str(rec["sdk_version"])), clis.index(str(rec[columns]))
        o = Outcome(str(rec["outcome"]))
        grid[i, j] = _CODE[o.value]
        proto: Any = rec.get("protocol")
        connected = o in (Outcome.COMPATIBLE, Outcome.DEGRADED)
        labels[(i, j)] = str(int(proto)) if connected and proto is not None and proto == proto else _MARK.get(o, "")
    cell = 0.28  # inches per cell: 110 columns -> ~31 in wide at 100 dpi, still legible
    width = max(6.0, 1.6 + cell * len(clis))
    height = max(3.0, 1.8 + cell * len(sdks))
    # A bare Figure, not pyplot: no global backend state, works headless and in notebooks.
    fig = Figure(figsize=(width, height), dpi=100)
    ax = fig.add_subplot()
    cmap = ListedColormap([OUTCOME_INFO[o][0] for o in _ORDER])
    ax.imshow(grid, cmap=cmap, vmin=0, vmax=len(_ORDER) - 1, aspect="equal",
              interpolation="nearest")
    ax.set_xticks(range(len(clis)), clis, rotation=90, fontsize=7)
    ax.set_yticks(range(len(sdks)), sdks, fontsize=7)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("SDK version")
    ax.set_title(title, fontsize=10)
    dark = {Outcome.COMPATIBLE, Outcome.HANG, Outcome.CRASHED, Outcome.UNINSTALLABLE, Outcome.SURFACED,
            Outcome.FATAL, Outcome.KEPT}
    for (i, j), text in labels.items():
        o = _ORDER[int(grid[i, j])]
        ax.text(j, i, text, ha="center", va="center", fontsize=6,
                color="white" if o in dark else "black")
    ax.set_xticks([x - 0.5 for x in range(1, len(clis))], minor=True)
    ax.set_yticks([y - 0.5 for y in range(1, len(sdks))], minor=True)
    ax.grid(which="minor", color="white", linewidth=0.5)
    ax.tick_params(which="minor", length=0)
    present = [o for o in _ORDER if o.value in set(frame["outcome"])]
    ax.legend(handles=[Patch(color=OUTCOME_INFO[o][0], label=o.value) for o in present],
              loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)
    fig.tight_layout()
    return fig


def save_heatmap(frame: pd.DataFrame, title: str, path: Path, **axes: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    heatmap_figure(frame, title, **axes).savefig(path)


def png_bytes(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()
