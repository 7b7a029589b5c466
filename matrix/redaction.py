"""Third-party output may echo a credential: keep its shape, drop its value. Paths into our
environment cache say nothing about the SDK and differ per machine: shortened."""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["redact", "redact_file"]

_TOKENISH = re.compile(r"\b(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|"
                       r"(?:sk|xox[abp])-[A-Za-z0-9-]{20,})\b")


# Where our cache put an environment says nothing about the SDK and differs per machine.
_ENV_PATH = re.compile(r"/[^\s'\"]*?/envs/(sdk|cli|runtime)/[^/\s'\"]+/([^/\s'\"]+)")


def redact(text: str) -> str:
    return _ENV_PATH.sub(r"<\1 env \2>", _TOKENISH.sub("[redacted-token]", text))




def redact_file(path: Path) -> None:
    """Rewrite a transcript or log in place with every token-shaped value redacted."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return
    clean = redact(text)
    if clean != text:
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(clean, encoding="utf-8")
        tmp.replace(path)
