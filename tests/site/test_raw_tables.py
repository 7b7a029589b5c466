"""The MkDocs hook that sets the generated pages' tables aside from Markdown: the page
Markdown makes is the one it made with the tables in, but for whitespace between blocks."""

from __future__ import annotations

import re

import markdown

from matrix.markup import TABLE_END, sortable
from matrix.site.raw_tables import put_back, set_aside

PAGE = "\n".join([
    "# sdk 1.0.0",
    "",
    "Some *text* with `code`.",
    "",
    sortable(["CLI", "outcome"]) + "<tr><td>1.0.1</td><td>a &lt;b&gt; &amp; *not emphasis*</td></tr>" + TABLE_END,
    "",
    "## next",
    "",
    "- an item",
    "- another",
    "",
    '<div class="cm-table-wrap"><table class="cm-table"><thead><tr><th>x</th></tr></thead><tbody>',
    "<tr><td>_y_</td></tr>",
    TABLE_END,
    "",
    "!!! note",
    "    after the tables",
    "",
])


def render(text: str) -> str:
    return markdown.markdown(text, extensions=["tables", "attr_list", "admonition", "toc"])


def test_a_page_with_its_tables_set_aside_renders_as_markdown_renders_it_with_them() -> None:
    held = set_aside(PAGE, "versions/a.md")
    assert "<table" not in held and held.count("cm0raw0table0") == 2
    made = put_back(render(held), "versions/a.md")
    assert re.sub(r"\s+", "", made) == re.sub(r"\s+", "", render(PAGE))
    assert "*not emphasis*" in made and "<em>" not in made.split("<table")[1]  # the tables were not Markdown's


def test_a_page_without_tables_is_left_alone_and_nothing_is_kept_for_it() -> None:
    text = "# plain\n\ntext with cm0raw0table0 in it\n"
    assert set_aside(text, "about/x.md") == text
    assert put_back(render(text), "about/x.md") == render(text)

