"""Third-party output may echo a credential: keep its shape, drop its value. Paths into our
environment cache say nothing about the SDK and differ per machine: shortened."""

from __future__ import annotations

import functools
import os
import re
import tempfile
from pathlib import Path

from matrix.execute.storage import write_atomic

__all__ = ["process_label", "redact", "redact_file", "scrub_paths", "strip_paths"]

_TOKENISH = re.compile(r"\b(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|"
                       r"(?:sk|xox[abp])-[A-Za-z0-9-]{20,})\b")


# Where our cache put an environment says nothing about the SDK and differs per machine.
_ENV_PATH = re.compile(r"/[^\s'\"]*?/envs/(sdk|cli|runtime)/[^/\s'\"]+/([^/\s'\"]+)")


# The shortest text either pattern can match: a token of the shortest kind ("sk-" and 20).
_SHORTEST_TOKEN = 23


def redact(text: str) -> str:
    if len(text) < _SHORTEST_TOKEN and "/" not in text:  # most stored strings: nothing to look for
        return text
    return _ENV_PATH.sub(r"<\1 env \2>", _TOKENISH.sub("[redacted-token]", text))


def _machine_roots() -> tuple[str, ...]:
    """Directories whose names differ per machine or say who ran it."""
    return _roots(os.environ.get("HOME", ""), os.getcwd(), os.environ.get("COMPAT_MATRIX_CACHE", ""),  # noqa: PTH109
                  os.environ.get("TMPDIR", ""))


@functools.lru_cache(maxsize=8)
def _roots(_home: str, cwd: str, cache: str, _tmpdir: str) -> tuple[str, ...]:
    # Keyed by what they are made of: a fold scrubs a hundred thousand strings.
    found = {str(Path.home()), tempfile.gettempdir(), cwd, cache,
             "/root", "/tmp", "/var/tmp", "/home", "/Users"}  # noqa: S108 (names to cut, not to use)
    return tuple(sorted((r.rstrip("/") for r in found if r and r != "/"), key=len, reverse=True))


@functools.lru_cache(maxsize=8)
def _root_patterns(roots: tuple[str, ...]) -> tuple[re.Pattern[str], re.Pattern[str]]:
    alternatives = "|".join(re.escape(r) for r in roots)
    return (re.compile(rf"(?:{alternatives})(?:/{_SEGMENT})*?/(?P<last>{_SEGMENT})(?=$|[\s'\"(),:;\]\[])"),
            re.compile(rf"(?<![\w<>/])(?:{alternatives})(?=$|[\s'\"(),:;\]\[])"))


_SEGMENT = r"[^/\s'\"(),:;\]\[]+"


def scrub_paths(text: str) -> str:
    """``text`` as stored data may hold it: environment paths as ``redact`` writes them, and
    any other path under a home, a temporary or a working directory cut to ``<path>/`` and
    its last part (which names the file, not the machine)."""
    text = redact(text)
    if "/" not in text:
        return text
    return _scrubbed(text, _machine_roots())


@functools.lru_cache(maxsize=8192)
def _scrubbed(text: str, roots: tuple[str, ...]) -> str:
    # Keyed by the roots too: a fold meets the same path strings in thousands of rows (a fold's
    # rows come CLI by CLI, so a bounded cache holds the repeats; a traceback is up to 4,000 chars).
    under, bare = _root_patterns(roots)
    text = under.sub(lambda m: f"<path>/{m.group('last')}", text)
    text = bare.sub("<path>", text)
    # Any other absolute path of two or more parts outside the system's own directories (a
    # checkout such as /work/compat-matrix/matrix/..., a CI workspace): where it lives is the machine's.
    return _ELSEWHERE.sub(lambda m: f"<path>/{m.group('last')}", text)


_ELSEWHERE = re.compile(rf"(?:(?<=file://)|(?<![\w:/.~<>-]))/(?!(?:usr|lib|lib32|lib64|bin|sbin|etc|proc|sys|dev|run)/)"
                        rf"{_SEGMENT}(?:/{_SEGMENT})*/(?P<last>{_SEGMENT})(?=$|[\s'\"(),:;\]\[])")


def strip_paths(command: str) -> str:
    """A process's command line with every absolute path cut to its last part: where our
    cache, a sandbox or a runtime lives differs per machine and says nothing of the process."""
    words = _TOKENISH.sub("[redacted-token]", command).split()
    return " ".join(Path(w).name if w.startswith("/") else w for w in words)


_INTERPRETERS = re.compile(r"^(node|python[\d.]*|sh|bash)$")


def process_label(command: str) -> str:
    """What a reader calls a process: its program, and the script an interpreter runs
    (``node loader.js``, ``mycli``)."""
    words = strip_paths(command).split()
    if not words:
        return "a process"
    if _INTERPRETERS.match(words[0]):
        script = next((w for w in words[1:] if not w.startswith("-")), None)
        return f"{words[0]} {script}" if script else words[0]
    return words[0]


def redact_file(path: Path) -> None:
    """Rewrite a transcript or log in place with every token-shaped value redacted."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return
    clean = redact(text)
    if clean != text:
        write_atomic(path, clean)
