"""What a row carries beside its core: each family declares, per probe, the model of its rows'
payload (``Family.payload_model``); together they are the row's union, told apart by family and
probe. Rows are typed by it when measured, folded, checked, migrated and read for a site."""

from __future__ import annotations

import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

import pandas as pd
from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.fields import FieldInfo

from matrix.errors import UserError
from matrix.model import Row
from matrix.store.results import frame_of

__all__ = ["Declares", "Payload", "PayloadError", "cells_frame", "kind_of", "payload_columns", "payload_fields",
           "payload_problem", "typed"]


class Payload(BaseModel):
    """A probe's payload: the fields it observed besides the core. Empty: a probe that observes
    nothing more."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Declares(Protocol):
    """What a family says of its rows (``matrix.families.base.Family``)."""

    @property
    def probes(self) -> tuple[str, ...]: ...

    def payload_model(self, probe: str) -> type[Payload]: ...

    def per_sdk(self, probe: str, mutation: str) -> bool: ...


class PayloadError(UserError):
    """A row's payload is not its family's declared payload for its probe (``problem``: what is
    wrong, without the row)."""

    def __init__(self, row: Row, problem: str) -> None:
        self.problem = problem
        super().__init__(f"{row.family} {row.probe} {row.mutation + ' ' if row.mutation else ''}sdk {row.sdk_version} "
                         f"× {row.cli_version}: {problem}; the row was written by another version of the family's "
                         "code: upgrade compat-matrix, or measure the cell again")


def payload_problem(row: Row, families: Mapping[str, Declares]) -> str | None:
    """What is wrong with ``row``'s payload for its family and probe (None: nothing, or a family
    not installed here, whose payload is kept as it is)."""
    family = families.get(row.family)
    if family is None:
        return None
    try:
        family.payload_model(row.probe).model_validate(row.payload)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return f"payload.{where}: {first['msg']} (a {row.family} {row.probe} row's payload)"
    return None


def typed(row: Row, families: Mapping[str, Declares]) -> Row:
    """``row`` with its payload as its family declares it for its probe: every declared field,
    nothing else, and ``per_sdk`` as the family says. Refused (``PayloadError``) when it does
    not fit, naming the row and the field."""
    family = families.get(row.family)
    if family is None:
        return row
    problem = payload_problem(row, families)
    if problem is not None:
        raise PayloadError(row, problem)
    payload = family.payload_model(row.probe).model_validate(row.payload).model_dump(mode="json")
    per_sdk = family.per_sdk(row.probe, row.mutation)
    if payload == row.payload and per_sdk == row.per_sdk:
        return row
    return row.model_copy(update={"payload": payload, "per_sdk": per_sdk})


def payload_fields(families: Iterable[Declares]) -> dict[str, FieldInfo]:
    """Every payload field any family declares for any of its probes, in declaration order (a
    name two families declare: the first one's)."""
    seen: dict[str, FieldInfo] = {}
    for family in families:
        for probe in family.probes:
            for name, info in family.payload_model(probe).model_fields.items():
                seen.setdefault(name, info)
    return seen


def payload_columns(families: Iterable[Declares]) -> list[str]:
    return list(payload_fields(families))


def kind_of(info: FieldInfo) -> str:
    """How a payload field is exported: "integer", "list", "nested" (a mapping: kept whole in
    rows.csv and rows.parquet, not a column of the JSON report), or "scalar"."""
    annotation = info.annotation
    union = typing.get_origin(annotation) in (typing.Union, types.UnionType)
    args = set(typing.get_args(annotation)) - {type(None)} if union else {annotation}
    origins = {typing.get_origin(a) or a for a in args}
    if origins == {int}:
        return "integer"
    if origins == {list}:
        items = {typing.get_origin(i) or i for a in args for i in typing.get_args(a)}
        return "nested" if items & {dict} else "list"
    if origins == {dict}:
        return "nested"
    return "scalar"


def cells_frame(rows: Sequence[Row], families: Mapping[str, Declares]) -> pd.DataFrame:
    """``rows`` as one DataFrame: the core's columns and every payload column a family declares,
    present even when no row has it."""
    return frame_of(list(rows), payload_columns(families.values()))
