"""What changed between two result sets: every cell whose outcome differs, regressions first.

Outcomes are ranked within their vocabulary (``OUTCOME_RANK``: pairs, checks, promises); a move
to a worse rank is a regression, to a better one an improvement. A move to or from a cell
that says nothing (infra or harness error, never measured) is listed as a change, neither."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd

from matrix.model import KEY_FIELDS, OUTCOME_RANK

__all__ = ["KINDS", "RANK", "Change", "change_kind", "diff_frames", "render_text"]

# Lower is better (``OUTCOME_RANK``); an outcome that is no verdict carries no rank.
RANK: dict[str, int] = {str(o): rank for o, rank in OUTCOME_RANK.items()}
KINDS = ("regression", "new failure", "improvement", "changed", "new", "gone")


@dataclass(frozen=True)
class Change:
    kind: str
    family: str
    sdk_version: str
    cli_version: str
    probe: str
    mutation: str
    old: str | None
    new: str | None
    new_error: str | None

    def cell(self) -> str:
        what = f" {self.mutation}" if self.mutation else ""
        return f"{self.family} {self.probe}{what}: sdk {self.sdk_version} × {self.cli_version}"


def change_kind(old: str | None, new: str | None) -> str:
    """What a cell's move from ``old`` to ``new`` (None: absent) is, one of ``KINDS``."""
    if old is None:
        return "new failure" if new in RANK and RANK[new] > 0 else "new"
    if new is None:
        return "gone"
    if old in RANK and new in RANK:
        if RANK[new] > RANK[old]:
            return "regression"
        if RANK[new] < RANK[old]:
            return "improvement"
    return "changed"


def diff_frames(old: pd.DataFrame, new: pd.DataFrame) -> list[Change]:
    def index(frame: pd.DataFrame) -> dict[tuple[str, ...], dict[Any, Any]]:
        return {tuple(str(r[k]) for k in KEY_FIELDS): r for r in frame.to_dict("records")}

    before, after = index(old), index(new)
    changes = []
    for key in sorted(set(before) | set(after)):
        a, b = before.get(key), after.get(key)
        o = str(a["outcome"]) if a else None
        n = str(b["outcome"]) if b else None
        if o == n:
            continue
        error = b.get("error_message") if b else None
        family, sdk, cli, probe, mutation = key
        changes.append(Change(change_kind(o, n), family, sdk, cli, probe, mutation, o, n,
                              error if isinstance(error, str) else None))
    return sorted(changes, key=lambda c: (KINDS.index(c.kind), c.family, c.probe, c.sdk_version, c.cli_version))


def render_text(changes: list[Change]) -> str:
    if not changes:
        return "no cell changed its outcome\n"
    lines = []
    for kind in KINDS:
        part = [c for c in changes if c.kind == kind]
        if part:
            lines.append(f"{kind} ({len(part)}):")
            for c in part:
                why = f"  ({(c.new_error or '').splitlines()[0][:120]})" if c.new_error else ""
                lines.append(f"  {c.cell()}: {c.old or '-'} -> {c.new or '-'}{why}")
    return "\n".join(lines) + "\n"


def to_json(changes: list[Change]) -> str:
    return json.dumps([asdict(c) for c in changes], indent=1)
