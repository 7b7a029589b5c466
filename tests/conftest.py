from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _no_env_leak() -> Iterator[None]:
    """A test may not leave os.environ changed (monkeypatch restores its own changes)."""
    def snapshot() -> dict[str, str]:
        return {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}

    before = snapshot()
    yield
    assert snapshot() == before, "test leaked environment changes"
