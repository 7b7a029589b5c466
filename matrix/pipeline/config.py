"""matrix.toml -> a typed, validated Plan. Unknown keys, bad selectors, unknown families
and probes are errors that name the key or value and the valid choices."""

from __future__ import annotations

import tomllib
from collections.abc import Collection
from pathlib import Path
from typing import Any, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from matrix.errors import ConfigError
from matrix.versions import check_selector

__all__ = ["FamilyConfig", "Plan", "RunSettings", "Selection", "Timeouts", "load_plan"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class Selection(_Strict):
    select: list[str] = Field(default_factory=lambda: ["latest:1"])
    exclude: list[str] = Field(default_factory=list)
    prereleases: bool = False


class FamilyConfig(_Strict):
    sdk: Selection = Field(default_factory=Selection)
    cli: Selection = Field(default_factory=Selection)
    # The probes to measure; not given: the family's own default (its pair probe, or every probe).
    probes: list[str] = Field(default_factory=list)


class Timeouts(_Strict):
    probe: float = Field(default=150.0, gt=0)
    # Our deadline for each SDK call inside the agent. Above the 30 s request timeout old
    # SDKs have, so an SDK that gives up by itself is seen doing so.
    call: float = Field(default=35.0, gt=0)
    install: float = Field(default=900.0, gt=0)
    # Stop an SDK call this many seconds after the other side it waits on has exited (a hang the
    # SDK would only end with its own timeout), where a family can tell. Unset: wait for that timeout.
    dead_cli: float | None = Field(default=None, gt=0)
    # Seconds the SDK gets to stop the CLI before the harness kills the group.
    stop_grace: float = Field(default=5.0, gt=0)
    # After the SDK is told to stop, the agent lives on as an application does and waits this
    # long for every process the SDK started to be gone; one still alive is a leak.
    leak: float = Field(default=5.0, gt=0)


class RunSettings(_Strict):
    jobs: int = Field(default=4, ge=1, le=64)
    # Up to this many cells at once while the CPU sits idle with every slot taken (cells
    # waiting on a timeout); none: ``jobs`` always (matrix/execute/schedule.py).
    jobs_when_idle: int | None = Field(default=None, ge=1, le=128)
    results: str = "results"
    cache_budget_gb: float = Field(default=12.0, gt=0)
    discovery_ttl_hours: float = Field(default=6.0, ge=0)
    install_retries: int = Field(default=2, ge=0, le=10)
    # SDK releases kept imported at once, in a warm fork server or in an agent started ahead of
    # its cell (execute/forkserver.py, execute/aheadstart.py; 0: start every agent cold).
    warm_sdks: int = Field(default=64, ge=0, le=512)
    # CLI releases installed ahead of the cells that need them (more: more disk in use).
    install_ahead: int = Field(default=2, ge=0, le=50)
    # A cell still running after this many seconds is waiting, not working: it gives its
    # CPU slot to the next cell (matrix/execute/schedule.py).
    park_after: float = Field(default=10.0, gt=0)
    # A cell whose stop a family measures as a rate (what it leaves behind can be a race, not one
    # toss) measures it this many times, and up to stops_max times where those stops disagree.
    stops: int = Field(default=5, ge=1, le=50)
    stops_max: int = Field(default=10, ge=1, le=100)

    @model_validator(mode="after")
    def _stops_in_order(self) -> RunSettings:
        if self.stops_max < self.stops:
            raise ValueError(f"stops_max ({self.stops_max}) must be at least stops ({self.stops})")
        return self


class Plan(_Strict):
    run: RunSettings = Field(default_factory=RunSettings)
    timeouts: Timeouts = Field(default_factory=Timeouts)
    families: dict[str, FamilyConfig]


def _check_keys(data: Any, model: type[BaseModel], where: str) -> None:
    """Walk the raw TOML against the models so an unknown key is named with the valid ones
    (pydantic's own message does not list them)."""
    if not isinstance(data, dict):
        return
    fields = model.model_fields
    for key, value in data.items():
        if key not in fields:
            raise ConfigError(
                f"{where}{key}",
                "unknown key",
                f"Valid keys here: {', '.join(sorted(fields))}",
            )
        ann = fields[key].annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            _check_keys(value, ann, f"{where}{key}.")
        elif get_origin(ann) is dict and isinstance(value, dict):
            sub = get_args(ann)[1]
            if isinstance(sub, type) and issubclass(sub, BaseModel):
                for name, item in value.items():
                    _check_keys(item, sub, f"{where}{key}.{name}.")


def _format_validation(err: ValidationError, source: str) -> ConfigError:
    first = err.errors()[0]
    loc = ".".join(str(p) for p in first["loc"])
    return ConfigError(
        f"{source}: {loc}",
        f"{first['msg']} (got {first.get('input')!r})",
        "Fix the value in the config; see the commented example in matrix.toml",
    )


def validate_plan(
    data: dict[str, Any], source: str, families: list[str], probes: dict[str, list[str]],
    standin: Collection[str] = (),
) -> Plan:
    """``families``: the family names we implement. ``probes``: family -> its probe kinds.
    ``standin``: families whose other side is our local stand-in (no ``cli`` selection)."""
    _check_keys(data, Plan, f"{source}: ")
    try:
        plan = Plan.model_validate(data)
    except ValidationError as err:
        raise _format_validation(err, source) from None
    if not plan.families:
        raise ConfigError(f"{source}: families", "no family is configured",
                          f"Add a [families.NAME] table; valid names: {', '.join(families)}")
    for name, fam in plan.families.items():
        where = f"{source}: families.{name}"
        if name not in families:
            raise ConfigError(where, f"unknown family {name!r}",
                              f"Valid families: {', '.join(families)}")
        if name in standin and "cli" in fam.model_fields_set:
            raise ConfigError(f"{where}.cli", "this family's other side is the local stand-in server, not a "
                              "released CLI", "Remove the cli selection; the stand-in is started by the harness")
        for side in ("sdk",) if name in standin else ("sdk", "cli"):
            sel: Selection = getattr(fam, side)
            if not sel.select:
                raise ConfigError(f"{where}.{side}.select", "empty selection",
                                  'Name at least one selector, e.g. ["latest:1"]')
            for s in [*sel.select, *sel.exclude]:
                check_selector(s, f"{where}.{side}")
        if not fam.probes and "probes" in fam.model_fields_set:
            raise ConfigError(f"{where}.probes", "no probe selected",
                              f"Valid probes: {', '.join(probes[name])}")
        for probe in fam.probes:
            if probe not in probes[name]:
                raise ConfigError(f"{where}.probes", f"unknown probe {probe!r}",
                                  f"Valid probes for {name}: {', '.join(probes[name])}")
    return plan


def load_plan(path: Path, families: list[str], probes: dict[str, list[str]],
              standin: Collection[str] = ()) -> Plan:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(str(path), "file not found",
                          "Pass --config PATH, or run from the repository root") from None
    except OSError as err:
        raise ConfigError(str(path), f"cannot be read ({err.strerror})",
                          "Check the path and its permissions") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(str(path), f"is not valid TOML ({err})",
                          "Fix the syntax at the position shown") from None
    return validate_plan(data, str(path), families, probes, standin)
