"""The families this installation measures: every entry point of the group
``compat_matrix.families``, the built-in ones included (``pyproject.toml`` registers them the
way a third-party package would). Read once, on first use."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from importlib.metadata import entry_points
from pathlib import Path

import pandas as pd

from matrix.errors import UserError
from matrix.families.base import Family
from matrix.families.payload import cells_frame as _cells_frame
from matrix.families.payload import payload_columns, typed
from matrix.model import Row
from matrix.store.dataset import Sources

__all__ = ["FAMILIES", "GROUP", "Family", "cells_frame", "load", "open_sources", "sources_from_env", "type_row"]

GROUP = "compat_matrix.families"


def load() -> dict[str, Family]:
    """Every registered family by name; a plugin that does not load, or does not give a
    ``Family``, is an error naming its entry point."""
    found: dict[str, Family] = {}
    for ep in sorted(entry_points(group=GROUP), key=lambda e: e.name):
        try:
            family = ep.load()
        except Exception as err:  # a third party's import failing is reported, not a traceback
            raise UserError(f"family plugin {ep.name!r} ({ep.value}) does not load: {type(err).__name__}: {err}; "
                            "fix or uninstall the package that provides it") from None
        if not isinstance(family, Family):
            raise UserError(f"family plugin {ep.name!r} ({ep.value}) is a {type(family).__name__}, not a "
                            "matrix.families.base.Family")
        if family.name != ep.name or family.name in found:
            raise UserError(f"family plugin {ep.name!r} ({ep.value}) is named {family.name!r}: an entry point's "
                            "name must be its family's, and unique")
        found[family.name] = family
    if not found:
        raise UserError(f"no families registered in the entry-point group {GROUP!r}; install compat-matrix "
                        "(`make setup`, or pip install -e .)")
    return found


class _Registry(Mapping[str, Family]):
    """``FAMILIES``: a mapping that reads the entry points the first time it is used."""

    def __init__(self) -> None:
        self._found: dict[str, Family] | None = None

    def _all(self) -> dict[str, Family]:
        if self._found is None:
            self._found = load()
        return self._found

    def __getitem__(self, name: str) -> Family:
        return self._all()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


FAMILIES: Mapping[str, Family] = _Registry()


def type_row(row: Row) -> Row:
    """``row`` as its family (installed here) declares its rows: the ``typing`` every reader of
    the dataset and of local results is given (``matrix.store.check.Typing``)."""
    return typed(row, FAMILIES)


def open_sources(results: Path, data: Path | None = None) -> Sources:
    """The rows of ``data`` and ``results`` as every family here declares them: each row typed
    when read, each frame with every payload column (``Sources``)."""
    return Sources(results, data, type_row, tuple(payload_columns(FAMILIES.values())))


def sources_from_env() -> Sources:
    """A notebook's sources (``Sources.from_env``), read as ``open_sources`` reads them."""
    given = Sources.from_env()
    return open_sources(given.results, given.data)


def cells_frame(rows: Sequence[Row]) -> pd.DataFrame:
    """``rows`` as one DataFrame with every payload column any family here declares."""
    return _cells_frame(rows, FAMILIES)
