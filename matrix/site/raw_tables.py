"""A MkDocs plugin (mkdocs.yml ``plugins``: ``compat-matrix-tables``, registered by this
package's entry point so that a site root anywhere finds it): the generated pages' raw HTML
blocks skip Markdown.

A table of a generated page is raw HTML, escaped when it was written (``matrix/markup.py``),
and so is a folded ``<details>`` block (a transcript) and an error's ``<pre>`` on a line of its
own. Markdown passes them through unchanged, but only after its HTML parser has read every tag
and character reference to find where the block ends: on the whole history that was most of
MkDocs' time. Each block is set aside before Markdown and put back where Markdown left its
placeholder; the site is the same but for whitespace between blocks."""

from __future__ import annotations

import re
from typing import Any

from mkdocs.plugins import BasePlugin

from matrix.markup import TABLE_END, TABLE_START

__all__ = ["RawTables", "put_back", "set_aside"]

# A block starts a line and holds no end of its own kind: what it holds was escaped.
_RAW = re.compile("|".join([
    re.escape(TABLE_START) + ".*?" + re.escape(TABLE_END),
    r"^<details\b(?:(?!</details>).)*</details>$",
    r'^<pre class="cm-err">(?:(?!</pre>).)*</pre>$',
]), re.S | re.M)
# A word no page has: Markdown makes it a paragraph of its own, and nothing else.
_HELD = re.compile(r"<p>cm0raw0table0(\d+)</p>")
_kept: dict[str, list[str]] = {}


def set_aside(markdown: str, page: str) -> str:
    tables: list[str] = []

    def hold(m: re.Match[str]) -> str:
        tables.append(m.group(0))
        return f"\n\ncm0raw0table0{len(tables) - 1}\n\n"
    _kept[page] = tables
    return _RAW.sub(hold, markdown)


def put_back(html: str, page: str) -> str:
    tables = _kept.pop(page, [])
    return _HELD.sub(lambda m: tables[int(m.group(1))], html) if tables else html


class RawTables(BasePlugin):  # type: ignore[type-arg, no-untyped-call]
    def on_page_markdown(self, markdown: str, /, *, page: Any, **_: Any) -> str:
        return set_aside(markdown, page.file.src_uri)

    def on_page_content(self, html: str, /, *, page: Any, **_: Any) -> str:
        return put_back(html, page.file.src_uri)
