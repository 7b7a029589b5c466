"""The ecosystems this installation knows: every entry point of the group
``compat_matrix.ecosystems``, the built-in ones included (``pyproject.toml`` registers PyPI,
npm, the Go module proxy and the stand-in the way a third-party package would register, say,
crates.io). Read once, on first use."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from importlib.metadata import entry_points
from typing import Any

from matrix.ecosystems.base import Ecosystem
from matrix.errors import UserError
from matrix.versions import VersionKey

__all__ = ["ECOSYSTEMS", "GROUP", "get", "version_key"]

GROUP = "compat_matrix.ecosystems"
_MEMBERS = ("name", "tool", "key", "is_prerelease", "releases", "install", "pin")


def load() -> dict[str, Ecosystem]:
    """Every registered ecosystem by name; a plugin that does not load, or does not give an
    ``Ecosystem``, is an error naming its entry point."""
    found: dict[str, Ecosystem] = {}
    for ep in sorted(entry_points(group=GROUP), key=lambda e: e.name):
        try:
            ecosystem = ep.load()
        except Exception as err:  # a third party's import failing is reported, not a traceback
            raise UserError(f"ecosystem plugin {ep.name!r} ({ep.value}) does not load: {type(err).__name__}: {err}; "
                            "fix or uninstall the package that provides it") from None
        missing = [m for m in _MEMBERS if not hasattr(ecosystem, m)]
        if missing:
            raise UserError(f"ecosystem plugin {ep.name!r} ({ep.value}) lacks {', '.join(missing)} of "
                            "matrix.ecosystems.base.Ecosystem")
        if ecosystem.name != ep.name or ecosystem.name in found:
            raise UserError(f"ecosystem plugin {ep.name!r} ({ep.value}) is named {ecosystem.name!r}: an entry "
                            "point's name must be its ecosystem's, and unique")
        found[ecosystem.name] = ecosystem
    if not found:
        raise UserError(f"no ecosystems registered in the entry-point group {GROUP!r}; install compat-matrix "
                        "(`make setup`, or pip install -e .)")
    return found


class _Registry(Mapping[str, Ecosystem]):
    """``ECOSYSTEMS``: a mapping that reads the entry points the first time it is used."""

    def __init__(self) -> None:
        self._found: dict[str, Ecosystem] | None = None

    def _all(self) -> dict[str, Ecosystem]:
        if self._found is None:
            self._found = load()
        return self._found

    def __getitem__(self, name: str) -> Ecosystem:
        return self._all()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


ECOSYSTEMS: Mapping[str, Ecosystem] = _Registry()


def get(name: str) -> Ecosystem:
    try:
        return ECOSYSTEMS[name]
    except KeyError:
        raise UserError(f"unknown ecosystem {name!r}; valid: {', '.join(ECOSYSTEMS)}") from None


def version_key(version: str, ecosystem: str | None = None) -> Any:
    """Sort key of ``version`` in ``ecosystem``'s own order (None: ``matrix.versions.VersionKey``)."""
    return VersionKey(version) if ecosystem is None else get(ecosystem).key(version)
