"""Generated HTML from Jinja2 templates (``templates/``), autoescaped: third-party text (error
messages, argv) is always text on our pages, never markup."""

from __future__ import annotations

from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from matrix.markup import badge
from matrix.model import OUTCOME_INFO

__all__ = ["render"]


@cache
def _env() -> Environment:
    env = Environment(loader=PackageLoader("matrix.site", "templates"),
                      autoescape=select_autoescape(["html", "md"], default_for_string=True, default=True),
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.globals["colours"] = {o.value: (info[0], _ink(info[0])) for o, info in OUTCOME_INFO.items()}
    env.globals["badge"] = lambda outcome: Markup(badge(outcome))  # noqa: S704 (escaped by markup.badge)
    return env


def _ink(background: str) -> str:
    """Black or white text, whichever reads on ``background`` (#rrggbb), by its luminance."""
    r, g, b = (int(background.lstrip("#")[i:i + 2], 16) for i in (0, 2, 4))
    return "#000" if 0.299 * r + 0.587 * g + 0.114 * b > 150 else "#fff"


def render(template: str, **context: Any) -> str:
    return _env().get_template(template).render(**context)
