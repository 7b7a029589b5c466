"""A frame's rows as dicts of only the columns a reader asks for: pandas' ``to_dict`` converts
every value of every column, one by one, and a release's cells carry fifty columns where a
page reads five (the whole-history build spent about a tenth of its CPU converting values no
one read)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

import pandas as pd

__all__ = ["records"]


def records(frame: pd.DataFrame, columns: Iterable[str]) -> list[dict[str, Any]]:
    """``frame.to_dict("records")`` with only those of ``columns`` the frame has (a reader's
    ``get`` of one it lacks is None, as before)."""
    have = [c for c in dict.fromkeys(columns) if c in frame.columns]
    return cast(list[dict[str, Any]], frame[have].to_dict("records"))
