"""Where an SDK release's checks are judged: the CLI releases it works with, and, per kind of
rule, the first of them (newest first, the one measured before kept) whose control passed."""

from __future__ import annotations

from typing import Any

from matrix.model import Outcome, Row
from matrix.probes.verdict import LEFT_RUNNING

__all__ = ["RETRIED", "control_target", "works"]

RETRIED = (Outcome.INFRA_ERROR.value, Outcome.HARNESS_ERROR.value)  # not verdicts: run where they were


def control_target(order: list[str], tried: dict[str, Row]) -> tuple[str | None, str | None]:
    """Where a kind of rule is measured, from its controls so far (by CLI): (CLI, None) for the
    first CLI in ``order`` whose control passed (or cannot apply to this SDK: the rules then
    record why themselves); (CLI, "next") to run the control there next; (None, reason) when
    there is nothing to judge against."""
    if not order:
        return None, "no CLI version in the matrix is compatible with this SDK version"
    done = (Outcome.PASSED.value, Outcome.NOT_APPLICABLE.value)
    for cli in order:
        if cli in tried and tried[cli].outcome in done:
            return cli, None
    for cli in order:
        if cli not in tried or tried[cli].outcome in RETRIED:
            return cli, "next"
    failures = "; ".join(f"{c}: {(tried[c].error_message or tried[c].outcome).splitlines()[0][:160]}"
                         for c in order[:5])
    more = f"; and {len(order) - 5} more" if len(order) > 5 else ""
    return None, (f"the control (the same steps with nothing mutated) fails against every CLI release this SDK "
                  f"release works with ({len(order)}, newest first: {failures}{more})")[:1500]


def works(row: Any) -> bool:
    """Connected and answered: compatible, or degraded only by what stop() left running (the
    session works all the same). ``row``: a Row, or a results frame's row (``outcome``,
    ``error_type``)."""
    return bool(row.outcome == Outcome.COMPATIBLE
                or (row.outcome == Outcome.DEGRADED and row.error_type == LEFT_RUNNING))
