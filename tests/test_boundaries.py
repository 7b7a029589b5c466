"""The generic layers (and their templates) name no family and no probe's vocabulary: a word of
one family's there is a hook the family should have had. A new one fails here; those allowed
are listed with the reason."""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

from matrix.model import Outcome
from tests.conftest import ROOT

GENERIC = ["matrix/commands", "matrix/pipeline", "matrix/site", "matrix/answers", "matrix/present", "matrix/store",
           "matrix/templates", "matrix/markup.py", "matrix/render.py"]
# API v1's documents are a published contract (its JSON schema is committed under api_schema/):
# their Copilot-shaped keys stay until a v2.
_API_V1 = "the API v1 documents' keys and what they mean (byte-identical; a change is a v2)"
ALLOWED: dict[tuple[str, str], tuple[int, str]] = {
    ("matrix/site/api.py", "protocol"): (3, _API_V1),
    ("matrix/site/api.py", "stop()"): (1, _API_V1),
    ("matrix/site/api.py", "leaked"): (1, _API_V1),
}
# Case matters: ``typing.Protocol`` is no family's.
WORDS = re.compile(r"[Hh]andshake|\bprotocol\b|leaked|SDK_PROTOCOL_VERSION|stop\(\)|node_runtime|\bNode\b"
                   r"|[Cc]opilot|[Cc]osmo")


def _files() -> list[Path]:
    out: list[Path] = []
    for name in GENERIC:
        path = ROOT / name
        out += [path] if path.is_file() else [p for p in sorted(path.rglob("*")) if p.is_file()
                                              and p.suffix in (".py", ".md", ".html", ".j2")]
    return out


def found() -> Counter[tuple[str, str]]:
    counts: Counter[tuple[str, str]] = Counter()
    for path in _files():
        for line in path.read_text(encoding="utf-8").splitlines():
            for m in WORDS.finditer(line):
                word = m.group(0).lower()
                counts[(path.relative_to(ROOT).as_posix(), word)] += 1
    return counts


def test_the_generic_layers_name_no_family_and_no_probes_vocabulary() -> None:
    counts = found()
    new = {k: n for k, n in counts.items() if n > ALLOWED.get(k, (0, ""))[0]}
    assert not new, ("a family's word in a generic module (give the family a hook instead, or allow it here "
                     f"with the reason): {new}")


def test_the_check_can_fail() -> None:
    assert WORDS.search("the handshake matrix") and WORDS.search("left running after stop()")
    assert WORDS.search("Cosmo's promises") and not WORDS.search("a family's pair matrix")


# Strings spelled like an outcome that are not one: a cache folder, the names of a closed set's
# ways with an unknown value (an agent's and the page that explains them).
NOT_OUTCOMES = {("matrix/pipeline/runner.py", "uninstallable"),
                ("matrix/families/cosmo/agents/cosmo_python.py", "refused"),
                ("matrix/families/cosmo/pages.py", "refused")}


def outcome_literals() -> list[tuple[str, int, str]]:
    """Every string constant of the code (docstrings aside) that spells an outcome, outside the
    model that defines them."""
    spelled = {o.value for o in Outcome}
    out = []
    for path in sorted((ROOT / "matrix").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "matrix/model.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                      if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.body
                      and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        out += [(rel, n.lineno, n.value) for n in ast.walk(tree) if isinstance(n, ast.Constant)
                and isinstance(n.value, str) and n.value in spelled and id(n) not in docstrings
                and (rel, n.value) not in NOT_OUTCOMES]
    return out


def test_no_outcome_is_spelled_outside_the_model() -> None:
    assert outcome_literals() == [], "use matrix.model.Outcome (or a set of it there) instead of its spelling"


def test_the_integration_workers_split_by_module_and_every_module_named_exists() -> None:
    from tests.conftest import BESIDE_CELLS, ROOT, worker_group

    assert all((ROOT / m).is_file() for m in BESIDE_CELLS)  # a renamed module would join the cells unseen
    assert worker_group("tests/store/test_integration_faults.py::test_x[index.json garbage]") == "beside"
    assert worker_group("tests/store/test_integration_dataset.py::test_fold_then_verify") == "cells"
    assert worker_group("tests/families/copilot/test_integration_repro.py::test_the_script[a::b]") == "beside"
