"""Generated pages from Jinja2 templates, autoescaped: third-party text (error messages, argv)
is always text on our pages, never markup. Each package that makes pages (the site, a family)
keeps its templates in its own ``templates/`` folder; ``matrix/templates/`` holds the macros
they share. Below the site and the families, so both can render."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from jinja2 import ChoiceLoader, Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup, escape

from matrix.markup import TABLE_END, UNSEARCHED, WIDE, WIDE_UNSEARCHED, badge, flaky_mark, sortable
from matrix.model import OUTCOME_INFO

__all__ = ["renderer"]


@cache
def _env(package: str) -> Environment:
    env = Environment(loader=ChoiceLoader([PackageLoader(package, "templates"), PackageLoader("matrix", "templates")]),
                      autoescape=select_autoescape(["html", "md"], default_for_string=True, default=True),
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.globals["colours"] = {o.value: (info[0], _ink(info[0])) for o, info in OUTCOME_INFO.items()}
    # One place each for the pieces every page shares (markup.py escapes what they hold).
    env.globals["badge"] = lambda outcome: Markup(badge(outcome))  # noqa: S704
    env.globals["flaky"] = lambda row: Markup(flaky_mark(row))  # noqa: S704
    env.globals["sortable"] = _sortable
    env.globals["TABLE_END"] = Markup(TABLE_END)  # noqa: S704
    env.globals["WIDE"] = "\n".join(WIDE)
    env.globals["WIDE_UNSEARCHED"] = "\n".join(WIDE_UNSEARCHED)
    env.globals["UNSEARCHED"] = "\n".join(UNSEARCHED)
    env.filters["href"] = href
    return env


def href(md_link: str) -> str:
    """A link to a page's Markdown source (relative to the linking page's source) as the
    address MkDocs serves it at, for raw HTML, whose links MkDocs leaves as written; for a
    page other than an index, which is served one folder deeper than its source:
    ``x/sdk-1.md#a`` -> ``../x/sdk-1/#a``. Anything else is returned as it is."""
    path, hash_, anchor = md_link.partition("#")
    if not path.endswith(".md") or "://" in path:
        return md_link
    page = path.removesuffix(".md")
    served = page.removesuffix("index") if page == "index" or page.endswith("/index") else page + "/"
    return "../" + served + hash_ + anchor


def _sortable(*headers: str, css: str = "") -> Markup:
    """A sortable table's start; a header is text unless it is already ``Markup``."""
    return Markup(sortable([str(escape(h)) for h in headers], css))  # noqa: S704


def _ink(background: str) -> str:
    """Black or white text, whichever reads on ``background`` (#rrggbb), by its luminance."""
    r, g, b = (int(background.lstrip("#")[i:i + 2], 16) for i in (0, 2, 4))
    return "#000" if 0.299 * r + 0.587 * g + 0.114 * b > 150 else "#fff"


def renderer(package: str) -> Callable[..., str]:
    """``render(template, **context)`` for the templates of ``package`` (its ``__name__``'s package)."""
    def render(template: str, **context: Any) -> str:
        return _env(package).get_template(template).render(**context)
    return render
