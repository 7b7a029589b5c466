"""The dataset's own history of changes (``data/changelog.jsonl``): one entry per fold that
changed it, saying which releases it added and which verdicts moved. Committed with the rows,
so "what changed" is the same on every clone and every rebuild, newest first."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from matrix.errors import UserError
from matrix.execute.storage import write_atomic
from matrix.model import Row
from matrix.versions import sort_key

__all__ = ["CHANGELOG", "Entry", "Move", "append", "entries", "entry_of"]

CHANGELOG = "changelog.jsonl"


class Move(BaseModel):
    """A cell measured again whose outcome is not the one the dataset had."""

    model_config = ConfigDict(frozen=True)
    family: str
    probe: str
    mutation: str = ""
    sdk_version: str
    cli_version: str
    old: str
    new: str
    new_error: str | None = None


class Entry(BaseModel):
    model_config = ConfigDict(frozen=True)
    schema_version: int = 1
    at: str  # when it was folded (UTC)
    added: dict[str, dict[str, list[str]]]  # family -> "sdk"/"cli" -> releases new to the dataset
    cells_added: int
    cells_measured_again: int
    moved: list[Move]

    @property
    def empty(self) -> bool:
        return not self.cells_added and not self.cells_measured_again


def entry_of(before: list[Row], added: list[Row], replaced: list[tuple[Row, Row]], at: str) -> Entry:
    """The entry for a fold: ``before`` is what the dataset held, ``added`` and ``replaced``
    what the fold did to it."""
    seen = {(r.family, side, v) for r in before for side, v in (("sdk", r.sdk_version), ("cli", r.cli_version))}
    new: dict[str, dict[str, set[str]]] = {}
    for r in added:
        for side, v in (("sdk", r.sdk_version), ("cli", r.cli_version)):
            if (r.family, side, v) not in seen:
                new.setdefault(r.family, {}).setdefault(side, set()).add(v)
    moved = [Move(family=b.family, probe=b.probe, mutation=b.mutation, sdk_version=b.sdk_version,
                  cli_version=b.cli_version, old=a.outcome, new=b.outcome, new_error=b.error_message)
             for a, b in replaced if a.outcome != b.outcome]
    return Entry(at=at, added={f: {s: sorted(vs, key=sort_key) for s, vs in sorted(sides.items())}
                               for f, sides in sorted(new.items())},
                 cells_added=len(added), cells_measured_again=len(replaced), moved=moved)


def entries(root: Path) -> list[Entry]:
    """Every entry, oldest first; a line that is not an entry is an error naming it."""
    path = root / CHANGELOG
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    out = []
    for number, line in enumerate(lines, 1):
        try:
            out.append(Entry.model_validate_json(line))
        except ValidationError as err:
            raise UserError(f"{path}:{number} is not a changelog entry ({err.errors()[0]['msg']}); restore it from "
                            "git (`git checkout -- data/changelog.jsonl`)") from None
    return out


def append(root: Path, entry: Entry) -> None:
    path = root / CHANGELOG
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    write_atomic(path, old + entry.model_dump_json() + "\n")
