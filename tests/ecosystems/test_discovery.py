from __future__ import annotations

from pathlib import Path

import pytest


def test_registry_unreachable_is_an_infra_error_and_cached_list_is_used(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An index at a closed local port: the fetch fails as infra, and a stored list is used."""
    import json
    import time

    from matrix.ecosystems.discovery import Discovery
    from matrix.ecosystems.pypi import fetch_pypi
    from matrix.errors import InfraError

    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")
    with pytest.raises(InfraError):
        fetch_pypi("github-copilot-sdk")
    cache = tmp_path / "discovery"
    cache.mkdir()
    (cache / "pypi-github-copilot-sdk.json").write_text(json.dumps({
        "fetched_at": time.time() - 10 * 86400,
        "releases": [{"version": "1.0.0", "released_at": None, "prerelease": False, "yanked": False}]}))
    disc = Discovery(cache, ttl=3600)
    assert [r.version for r in disc.releases("pypi", "github-copilot-sdk")] == ["1.0.0"]
    assert disc.warnings and "cached" in disc.warnings[0]
