"""List released versions through each client's configured index, cached for offline reruns.

PyPI: the Simple API in its JSON form (PEP 691/700, which carries upload times) at the index
pip or uv is configured with. npm: ``npm view`` (npm's own registry configuration).
No registry host is written here: each client's configuration or default decides.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
from packaging.utils import InvalidSdistFilename, InvalidWheelFilename, parse_sdist_filename, parse_wheel_filename
from pydantic import TypeAdapter, ValidationError
from pydantic.dataclasses import dataclass

from matrix.ecosystems import get
from matrix.ecosystems.gotool import go_command
from matrix.errors import InfraError, UserError
from matrix.execute import proc
from matrix.execute.sandbox import install_env
from matrix.execute.storage import write_atomic
from matrix.versions import Release

__all__ = ["Discovery", "pypi_index_url"]

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
    return [Release(v, dates.get(v), get("pypi").is_prerelease(v), yanked.get(v, False)) for v in versions]


def fetch_npm(package: str) -> list[Release]:
    res = proc.run(proc.Request(("npm", "view", package, "versions", "time", "--json"),
                                install_env(), Path.cwd(), timeout=120))
    if not res.ok:
        if "E404" in res.stdout + res.stderr:
            raise UserError(f"the npm registry has no package {package!r}; check the family's package name")
        raise InfraError(f"listing {package} on npm", (res.stderr or res.stdout).strip()[-300:])
    data = json.loads(res.stdout)
    times = data.get("time", {})
    return [Release(v, times.get(v), get("npm").is_prerelease(v)) for v in data.get("versions", [])]


_GO_REFUSED = re.compile(r"(403|404|410|not available|not found|unknown revision|invalid version)", re.I)


def _go_info(module: str, version: str) -> Release | None:
    """One exact version through the go command's configured proxy; None when not served."""
    argv, env = go_command("list", "-m", "-json", f"{module}@v{version}")
    res = proc.run(proc.Request(argv, env, Path.cwd(), timeout=120))
    if res.ok:
        data = json.loads(res.stdout)
        return Release(str(data["Version"]).removeprefix("v"), data.get("Time"), get("go").is_prerelease(version))
    if _GO_REFUSED.search(res.stderr):
        return None
    raise InfraError(f"asking the Go module proxy for {module}@v{version}", res.stderr.strip()[-300:])


def fetch_go(module: str, candidates: Sequence[str] = ()) -> tuple[list[Release], str | None]:
    """The module's versions as `go list -m -versions` reports them. When the proxy refuses
    the list (some mirrors serve exact versions only), each candidate version (the numbers
    the sibling SDKs of the same repository released) is asked for by name; the second
    value says so."""
    argv, env = go_command("list", "-m", "-versions", "-json", module)
    res = proc.run(proc.Request(argv, env, Path.cwd(), timeout=120))
    note = None
    if res.ok:
        asked = [v.removeprefix("v") for v in json.loads(res.stdout).get("Versions") or []]
    elif _GO_REFUSED.search(res.stderr) and candidates:
        asked = sorted(set(candidates))
    else:
        raise InfraError(f"listing {module} through the go command", res.stderr.strip()[-300:])
    # Each version's release time comes from its own entry, listed or not.
    with ThreadPoolExecutor(max_workers=8) as pool:
        found = [r for r in pool.map(lambda v: _go_info(module, v), asked) if r is not None]
    if not res.ok:
        note = (f"the Go module proxy refused the version list of {module}; {len(found)} of {len(asked)} "
                "version numbers released by its sibling SDKs were found by asking for each")
    return found, note


FETCHERS = {"pypi": fetch_pypi, "npm": fetch_npm}


@dataclass(frozen=True)
class CachedList:
    """A registry's release list as cached, with when it was asked."""

    fetched_at: float
    releases: list[Release]


_CACHED = TypeAdapter(CachedList)


class Discovery:
    """Cached release lists: fresh within ``ttl`` seconds; a stale list is used (and said)
    when the registry cannot be reached, so an offline rerun works."""

    def __init__(self, cache_dir: Path, ttl: float, refresh: bool = False) -> None:
        self.cache_dir = cache_dir
        self.ttl = ttl
        self.refresh = refresh
        self.warnings: list[str] = []

    def _file(self, ecosystem: str, package: str) -> Path:
        return self.cache_dir / f"{ecosystem}-{package.replace('/', '__')}.json"

    def releases(self, ecosystem: str, package: str, hints: Sequence[tuple[str, str]] = ()) -> list[Release]:
        """``hints``: (ecosystem, package) of sibling SDKs whose version numbers are asked
        for by name when a Go proxy refuses to list a module's versions."""
        path = self._file(ecosystem, package)
        cached = self._load(path)
        if cached and not self.refresh and time.time() - cached[0] < self.ttl:
            return cached[1]
        try:
            if ecosystem == "go":
                candidates = [r.version for eco, pkg in hints for r in self.releases(eco, pkg) if not r.prerelease]
                fresh, note = fetch_go(package, candidates)
                if note:
                    self.warnings.append(note)
            else:
                fresh = FETCHERS[ecosystem](package)
        except InfraError as err:
            if cached:
                age = (time.time() - cached[0]) / 3600
                self.warnings.append(f"{err}; using the list cached {age:.1f} h ago")
                return cached[1]
            raise InfraError(f"listing {package}", f"{err.detail}; no cached list to fall back on") from None
        self._store(path, fresh)
        return fresh

    def _load(self, path: Path) -> tuple[float, list[Release]] | None:
        """A cached list, validated; anything that does not fit is no cache (asked again)."""
        try:
            cached = _CACHED.validate_json(path.read_bytes())
        except (OSError, ValidationError):
            return None
        return cached.fetched_at, cached.releases

    def _store(self, path: Path, releases: list[Release]) -> None:
        write_atomic(path, _CACHED.dump_json(CachedList(time.time(), releases)))
