"""The versioned JSON document every agent prints, parsed into frozen dataclasses.

Agents run inside the SDK's own environment and may be any language; they print exactly
one line starting with ``AGENT_REPORT_PREFIX`` followed by the JSON document. A missing or
corrupt document is its own status (never a pass).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

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


def _error(raw: Any) -> ErrorInfo | None:
    if not raw:
        return None
    return ErrorInfo(type=str(raw.get("type", "")), message=str(raw.get("message", "")),
                     module=str(raw.get("module", "")), traceback=str(raw.get("traceback", "")),
                     timeout=bool(raw.get("timeout", False)))


_KNOWN = {"schema", "steps", "sdk_name", "sdk_version", "declared", "api", "negotiated_protocol",
          "observed_cli_version", "launched", "warnings", "harness_error"}


def parse_report(stdout: str) -> AgentReport | None:
    """The last report line in ``stdout``, or None when there is none or it is corrupt."""
    lines = [ln for ln in stdout.splitlines() if ln.startswith(AGENT_REPORT_PREFIX)]
    if not lines:
        return None
    try:
        data = json.loads(lines[-1][len(AGENT_REPORT_PREFIX):])
        if data.get("schema") != AGENT_SCHEMA:
            return None
        steps = tuple(
            Step(name=str(s["name"]), ok=bool(s["ok"]), seconds=float(s.get("seconds", 0.0)),
                 error=_error(s.get("error")), result=s.get("result"), skipped=s.get("skipped"))
            for s in data["steps"]
        )
        proto = data.get("negotiated_protocol")
        return AgentReport(
            steps=steps,
            sdk_name=str(data.get("sdk_name", "")),
            sdk_version=str(data.get("sdk_version", "")),
            declared=dict(data.get("declared") or {}),
            api=dict(data.get("api") or {}),
            negotiated_protocol=int(proto) if proto is not None else None,
            observed_cli_version=data.get("observed_cli_version"),
            launched=list(data.get("launched") or []),
            warnings=tuple(str(w) for w in data.get("warnings") or ()),
            harness_error=data.get("harness_error"),
            extra={k: v for k, v in data.items() if k not in _KNOWN},
        )
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
