"""The small pieces of HTML every page is made of: escaped text, an outcome's badge, a cell's
marks (flaky, stale). Third-party text (error messages, argv) always goes through ``esc`` and
into an element, so nothing an SDK or CLI printed can become markup on our pages."""

from __future__ import annotations

import html
import os
from typing import Any
from urllib.parse import quote

from matrix.model import OUTCOME_INFO, Outcome

__all__ = ["TABLE_END", "TABLE_START", "UNSEARCHED", "WIDE", "WIDE_UNSEARCHED", "badge", "badge_path", "cli_slug",
           "embed_badge", "esc", "esc_raw", "flaky_mark", "num", "sdk_slug", "sortable", "yes_no"]


# Front matter of a page whose tables need the width the table of contents would take.
WIDE = ["---", "hide:", "  - toc", "---", ""]
# The same, for a page of thousands of cells that the site's search would only repeat (every
# cell is on its release's page, which search finds): indexing them is most of a build.
WIDE_UNSEARCHED = [*WIDE[:3], "search:", "  exclude: true", *WIDE[3:]]
# Front matter of an evidence page (an SDK release's tolerance checks with every transcript,
# about 100 kB each): its release's version page links it and search finds that page; its
# transcripts in the index were a third of MkDocs' time.
UNSEARCHED = ["---", "search:", "  exclude: true", "---", ""]
# Every table of a generated page is one raw HTML block, from this start to ``TABLE_END``.
TABLE_START = '<div class="cm-table-wrap">'
TABLE_END = "</tbody></table></div>"


def sortable(headers: list[str], css: str = "") -> str:
    """The start of a table the site's script sorts (click a header) and filters, up to its
    body: ``headers`` are HTML (escape third-party text first); close it with ``TABLE_END``."""
    cls = f"cm-table {css}".strip()
    return (f'{TABLE_START}<table class="{cls}" data-cm-sortable><thead><tr>'
            + "".join(f"<th>{h}</th>" if not h.startswith("<th") else h for h in headers) + "</tr></thead><tbody>")


def esc(value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value):  # NaN
        return ""
    return html.escape(str(value), quote=True)


def esc_raw(value: Any) -> str:
    """The text of a possibly-missing value, not yet escaped."""
    return "" if value is None or (isinstance(value, float) and value != value) else str(value)


def yes_no(value: Any) -> bool | None:
    """A possibly missing yes/no (a grade, a contract check): None unless it is one."""
    return value if isinstance(value, bool) else None


def badge(outcome: str) -> str:
    colour = OUTCOME_INFO[Outcome(outcome)][0]
    return f'<span class="cm-badge cm-{esc(outcome)}" style="background:{colour}">{esc(outcome)}</span>'


def flaky_mark(row: Any) -> str:
    """A cell whose outcome differed between repeats says so, with every outcome seen; a stale
    cell (``stale``: what its family says of it, "" when it is not) says so."""
    marks = ""
    if getattr(row, "flaky", False) is True:
        seen = " / ".join(str(o) for o in (getattr(row, "repeats", None) or []))
        marks += f' <span class="cm-flaky" title="outcomes across repeats: {esc(seen)}">flaky ({esc(seen)})</span>'
    stale = str(getattr(row, "stale", "") or "")
    if stale:
        marks += f' <span class="cm-stale" title="{esc(stale)}">stale</span>'
    return marks


def badge_path(family: str, side: str, version: str) -> str:
    """Where a release's shields.io endpoint document is, relative to the site's root."""
    return f"api/v1/{family}/badge/{side}-{version}.json"


def embed_badge(family: str, side: str, version: str, label: str, page: str) -> list[str]:
    """A version page's section: the Markdown a README pastes to show this release's badge.
    ``page``: the version page, relative to the site's root. Where the site is published is
    known only to whoever publishes it: ``COMPAT_MATRIX_SITE_URL``."""
    site_url = os.environ.get("COMPAT_MATRIX_SITE_URL", "")
    root = site_url.rstrip("/") or "https://SITE"  # shields.io fetches the document: it needs the full address
    endpoint = f"{root}/{badge_path(family, side, version)}"
    snippet = f"[![{label}](https://img.shields.io/endpoint?url={quote(endpoint, safe='')})]({root}/{page})"
    where = "" if site_url else (" Replace `https://SITE` with the address this site is published at (the "
                                 "publishing workflow fills it in).")
    return ["## Badge", "",
            f"A badge that says what this release works with, coloured by its pairing with the newest release of the "
            f"other side, kept current by every publish (a [shields.io endpoint]({'../' * (page.count('/') - 1)}"
            f"{badge_path(family, side, version)}) document).{where} For a README:", "",
            "```markdown", snippet, "```", ""]


def num(value: Any) -> str:
    """A number as a page shows it: a whole number without a point, nothing for a missing one."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    return str(int(value)) if isinstance(value, (int, float)) and float(value).is_integer() else f"{value}"


def sdk_slug(v: str) -> str:
    """An SDK release's page, in its family's folder of versions."""
    return f"sdk-{v}"


def cli_slug(v: str) -> str:
    """A release of the other side's page, in its family's folder of versions."""
    return f"cli-{v}"

