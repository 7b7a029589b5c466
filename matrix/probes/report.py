"""The versioned JSON document every agent prints, validated into frozen (pydantic) dataclasses.

Agents run inside the SDK's own environment and may be any language; they print exactly
one line starting with ``AGENT_REPORT_PREFIX`` followed by the JSON document. A missing or
corrupt document is its own status (never a pass).
"""

from __future__ import annotations

import json
from dataclasses import field
from typing import Any

from pydantic import TypeAdapter, ValidationError
from pydantic.dataclasses import dataclass

__all__ = ["AGENT_REPORT_PREFIX", "AgentReport", "ErrorInfo", "Step", "parse_report"]

AGENT_REPORT_PREFIX = "@@compat-matrix-report@@ "
AGENT_SCHEMA = 1


@dataclass(frozen=True)
class ErrorInfo:
    type: str
    message: str
    module: str = ""
    traceback: str = ""
    timeout: bool = False  # the SDK itself gave up waiting (its own timeout)


@dataclass(frozen=True)
class Step:
    name: str
    ok: bool
    seconds: float = 0.0
    error: ErrorInfo | None = None
    result: Any = None
    skipped: str | None = None  # why a step was not applicable to this version


@dataclass(frozen=True)
class AgentReport:
    steps: tuple[Step, ...]
    sdk_name: str = ""
    sdk_version: str = ""
    declared: dict[str, Any] = field(default_factory=dict)
    api: dict[str, Any] = field(default_factory=dict)
    negotiated_protocol: int | None = None
    observed_cli_version: str | None = None
    launched: list[str] = field(default_factory=list)
    warnings: tuple[str, ...] = ()
    harness_error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # probe-specific observations

    def step(self, name: str) -> Step | None:
        return next((s for s in self.steps if s.name == name), None)


_KNOWN = {"schema", "steps", "sdk_name", "sdk_version", "declared", "api", "negotiated_protocol",
          "observed_cli_version", "launched", "warnings", "harness_error"}
_REPORT = TypeAdapter(AgentReport)


def _present(step: dict[str, Any]) -> dict[str, Any]:
    """A step as reported, without what an agent left empty (a null, an empty error)."""
    out = {k: v for k, v in step.items() if v is not None}
    if not out.get("error"):
        out.pop("error", None)
    else:
        out["error"] = {k: v for k, v in out["error"].items() if v is not None}
    return out


def parse_report(stdout: str) -> AgentReport | None:
    """The last report line in ``stdout``, or None when there is none, it is corrupt, or it
    does not fit the protocol (pydantic validates it; what an agent adds beyond the shared
    keys is kept in ``extra``)."""
    lines = [ln for ln in stdout.splitlines() if ln.startswith(AGENT_REPORT_PREFIX)]
    if not lines:
        return None
    try:
        data = json.loads(lines[-1][len(AGENT_REPORT_PREFIX):])
        if not isinstance(data, dict) or data.get("schema") != AGENT_SCHEMA:
            return None
        shared = {k: v for k, v in data.items() if k in _KNOWN and k != "schema" and v is not None}
        shared["steps"] = [_present(s) for s in data["steps"]]
        return _REPORT.validate_python({**shared, "extra": {k: v for k, v in data.items() if k not in _KNOWN}})
    except (ValueError, ValidationError, AttributeError, TypeError):
        return None
