"""Probe kinds. Each runs an agent inside the SDK's environment and turns its report
into a result row; the harness never imports an SDK."""

from __future__ import annotations

from pathlib import Path

AGENTS_DIR = Path(__file__).parent / "agents"

__all__ = ["AGENTS_DIR"]
