"""PyPI: releases from the Simple API in its JSON form (PEP 691/700, which carries upload
times) at the index pip or uv is configured with, PEP 440 order (``packaging``), pip
requirement specifiers. No index host is written here: the clients' configuration decides."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from packaging.utils import InvalidSdistFilename, InvalidWheelFilename, parse_sdist_filename, parse_wheel_filename

from matrix.ecosystems.base import Listing, Run
from matrix.errors import InfraError, UserError
from matrix.execute import proc
from matrix.execute.sandbox import install_env
from matrix.versions import Release, is_prerelease, pep440_key

__all__ = ["ECOSYSTEM", "PyPI", "fetch_pypi", "pypi_index_url"]

_PEP691 = "application/vnd.pypi.simple.v1+json"


def pypi_index_url() -> str:
    """The index uv/pip would use: their environment variables, then pip's config, then
    pip's built-in default (read from pip itself, so no host is hard-coded here)."""
    for var in ("UV_DEFAULT_INDEX", "UV_INDEX_URL", "PIP_INDEX_URL"):
        if os.environ.get(var):
            return os.environ[var]
    out = proc.run(proc.Request((sys.executable, "-m", "pip", "config", "get", "global.index-url"),
                                install_env(), Path.cwd(), timeout=60))
    if out.ok and out.stdout.strip():
        return out.stdout.strip()
    try:
        from pip._internal.models.index import PyPI  # pip's own default index
    except ImportError as err:
        raise UserError(f"cannot tell which Python package index to use ({err}); set PIP_INDEX_URL") from None
    return str(PyPI.simple_url)


def _version_of(filename: str) -> str | None:
    try:
        if filename.endswith(".whl"):
            return str(parse_wheel_filename(filename)[1])
        return str(parse_sdist_filename(filename)[1])
    except (InvalidWheelFilename, InvalidSdistFilename):
        return None


def fetch_pypi(package: str) -> list[Release]:
    url = pypi_index_url().rstrip("/") + f"/{package}/"
    import httpx  # only when listing

    try:
        resp = httpx.get(url, headers={"Accept": _PEP691}, follow_redirects=True, timeout=60)
    except httpx.HTTPError as err:
        raise InfraError(f"listing {package} on the Python index", str(err)) from None
    if resp.status_code == 404:
        raise UserError(f"the Python index has no package {package!r}; check the family's package name")
    if resp.status_code != 200:
        raise InfraError(f"listing {package} on the Python index", f"HTTP {resp.status_code}")
    try:
        data = resp.json()
    except ValueError:
        raise InfraError(f"listing {package} on the Python index",
                         "the index did not answer in the JSON simple API (PEP 691); point PIP_INDEX_URL "
                         "or UV_INDEX_URL at an index that does") from None
    dates: dict[str, str] = {}
    yanked: dict[str, bool] = {}
    for f in data.get("files", []):
        v = _version_of(f["filename"])
        if v is None:
            continue
        t = f.get("upload-time")
        if t and (v not in dates or t < dates[v]):
            dates[v] = t
        yanked[v] = yanked.get(v, True) and bool(f.get("yanked"))
    versions = data.get("versions") or list(yanked)
    return [Release(v, dates.get(v), is_prerelease(v), yanked.get(v, False)) for v in versions]


class PyPI:
    name = "pypi"
    tool = "pip"

    def key(self, version: str) -> Any:
        return pep440_key(version)

    def is_prerelease(self, version: str) -> bool:
        return is_prerelease(version)

    def releases(self, package: str, siblings: Callable[[], list[str]]) -> Listing:
        return fetch_pypi(package), None

    def install(self, package: str, version: str) -> str:
        return f'pip install "{package}=={version}"'

    def spec(self, package: str, run: Run, bad_inside: Sequence[str] = ()) -> str:
        excluded = "".join(f",!={v}" for v in bad_inside)
        if run.first == run.last:
            return f"{package}=={run.first}"
        return f'"{package}>={run.first},<={run.last}{excluded}"'

    def pin(self, package: str, runs: Sequence[Run], bad_inside: Sequence[str]) -> list[str]:
        return [self.spec(package, r) for r in runs]


ECOSYSTEM = PyPI()  # registered in pyproject.toml (compat_matrix.ecosystems)
