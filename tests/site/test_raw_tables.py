"""The MkDocs plugin that sets the generated pages' raw HTML blocks (tables, folded
transcripts, errors) aside from Markdown: the page Markdown makes is the one it made with them
in, but for whitespace between blocks."""

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
    "### Error",
    "",
    '<pre class="cm-err">Traceback &lt;here&gt;',
    "  *indented* and _under_",
    "</pre>",
    '<pre class="cm-err">a second one</pre>',
    "",
    '<details class="cm-transcript-box"><summary>Transcript: 2 messages</summary>',
    '<table class="cm-table"><tbody>',
    '<tr><td>sdk-&gt;cli</td><td><pre class="cm-err">{',
    ' &#34;method&#34;: &#34;ping&#34;',
    "}</pre></td></tr>",
    "</tbody></table>",
    "</details>",
    "",
    '<pre class="cm-err">kept</pre> and *text* after it on its line',
    "",
    '<pre class="cm-err">a later one</pre>',
    "",
    "!!! note",
    "    after the tables",
    "",
])


def render(text: str) -> str:
    return markdown.markdown(text, extensions=["tables", "attr_list", "admonition", "toc"])


def test_a_page_with_its_tables_set_aside_renders_as_markdown_renders_it_with_them() -> None:
    held = set_aside(PAGE, "versions/a.md")
    assert "<table" not in held and held.count("cm0raw0table0") == 6
    made = put_back(render(held), "versions/a.md")
    assert re.sub(r"\s+", "", made) == re.sub(r"\s+", "", render(PAGE))
    assert "*not emphasis*" in made and "<em>" not in made.split("<table")[1]  # the tables were not Markdown's
    assert "*indented* and _under_" in made and "&#34;method&#34;" in made  # nor the errors and transcripts


def test_an_error_with_text_after_it_on_its_line_is_left_to_markdown() -> None:
    held = set_aside(PAGE, "versions/b.md")
    assert '<pre class="cm-err">kept</pre> and *text*' in held
    assert "<em>text</em>" in put_back(render(held), "versions/b.md")


def test_a_page_without_tables_is_left_alone_and_nothing_is_kept_for_it() -> None:
    text = "# plain\n\ntext with cm0raw0table0 in it\n"
    assert set_aside(text, "about/x.md") == text
    assert put_back(render(text), "about/x.md") == render(text)

