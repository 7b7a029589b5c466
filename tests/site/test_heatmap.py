from __future__ import annotations

import itertools

import pandas as pd

from matrix.families.copilot.stops import LEAK_MARK, LEAK_TEXT
from matrix.model import OUTCOME_INFO
from matrix.site.heatmap import cell_labels, heatmap_figure

FAMILY = {"family": "copilot-python"}  # whose reading of a cell the labels are


def test_50_by_110_cells_stay_readable() -> None:
    sdks = [f"0.{i // 10}.{i % 10}" for i in range(50)]
    clis = [f"1.0.{i}" for i in range(110)]
    outcomes = itertools.cycle([o.value for o in OUTCOME_INFO])
    frame = pd.DataFrame([{**FAMILY, "sdk_version": s, "cli_version": c, "outcome": next(outcomes), "protocol": 3}
                          for s in sdks for c in clis])
    fig = heatmap_figure(frame, "big")
    fig.canvas.draw()
    ax = fig.axes[0]
    box = ax.get_window_extent()
    # At least 20 pixels per cell each way: room for the protocol digit and the tick label.
    assert box.width / len(clis) >= 20
    assert box.height / len(sdks) >= 20
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == clis  # every CLI version is labelled, none skipped


def test_cell_text_is_protocol_for_connected_and_letter_for_failures() -> None:
    frame = pd.DataFrame([
        {**FAMILY, "sdk_version": "1.0.0", "cli_version": "1.0.1", "outcome": "compatible", "protocol": 3},
        {**FAMILY, "sdk_version": "1.0.0", "cli_version": "1.0.2", "outcome": "refused", "protocol": None},
    ])
    texts = sorted(cell_labels(heatmap_figure(frame, "t").axes[0]))
    assert texts == ["3", "R"]


def test_a_cell_whose_sdk_left_the_cli_running_is_marked_and_the_legend_says_so() -> None:
    frame = pd.DataFrame([
        {**FAMILY, "sdk_version": "1.0.0", "cli_version": "1.0.1", "outcome": "degraded", "protocol": 3,
         "leaked": ["copilot"]},
        {**FAMILY, "sdk_version": "1.0.0", "cli_version": "1.0.2", "outcome": "refused", "protocol": None,
         "leaked": ["copilot"]},
        {**FAMILY, "sdk_version": "1.0.0", "cli_version": "1.0.3", "outcome": "compatible", "protocol": 3,
         "leaked": []},
    ])
    ax = heatmap_figure(frame, "t").axes[0]
    assert sorted(cell_labels(ax)) == ["3", f"3{LEAK_MARK}", f"R{LEAK_MARK}"]
    assert LEAK_TEXT in [t.get_text() for t in ax.get_legend().get_texts()]
