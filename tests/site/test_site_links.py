"""Every link on a built site leads to a page of it. MkDocs rewrites the links of Markdown,
not those inside raw HTML (our tables and grids), so a template that writes ``x.md`` into an
``<a href>`` publishes a dead link that ``mkdocs build --strict`` does not see."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

import pytest

from matrix.site.build import build_site
from matrix.store.results import Store
from tests.conftest import make_row, site_root

_HREF = re.compile(r'<a\b[^>]*\bhref="([^"]+)"')


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small site with every kind of page: two SDK families against the same CLIs (the
    side-by-side page), tolerance checks, and a stand-in family."""
    tmp = tmp_path_factory.mktemp("links")
    store = Store(tmp / "results")
    for family in ("copilot-python", "copilot-node"):
        for sdk in ("1.0.0", "1.0.1"):
            for cli, outcome in (("1.0.60", "compatible"), ("1.0.61", "refused")):
                store.append(make_row(sdk, cli, outcome, family=family,
                                      protocol=3 if outcome == "compatible" else None))
    for rule, outcome in (("event.unknown-type", "surfaced"), ("result.extra-field", "lost")):
        store.append(make_row("1.0.1", "1.0.60", outcome, probe="tolerance", mutation=rule))
    # A session on a pair that connected: the session grid, the events page, the release pages' sessions.
    store.append(make_row("1.0.0", "1.0.60", "surfaced", probe="session", route="provider", asked=["shell"],
                          events={"session.idle": "typed", "model.call_start": "unknown"},
                          turns=[{"name": "reply", "ok": True, "seconds": 0.4, "held": True, "why": ""}]))
    store.append(make_row("0.6.1", "stand-in-1", "surfaced", family="cosmo-python", probe="tolerance",
                          mutation="frame.unknown-type"))
    build_site(site_root(tmp / "repo"), tmp / "results", tmp / "out", tmp / "cache")
    return tmp / "out"


def _target(site: Path, page: Path, href: str) -> Path | None:
    """The file a relative link of ``page`` leads to (None: not a link into the site)."""
    parsed = urlparse(href)
    if parsed.scheme or parsed.netloc or not parsed.path or href.startswith(("mailto:", "javascript:")):
        return None
    url = "/" + page.relative_to(site).as_posix().removesuffix("index.html")
    path = unquote(urlparse(urljoin("http://site" + url, href)).path)
    return site / path.lstrip("/") / ("index.html" if path.endswith("/") else "")


def test_every_link_leads_to_a_page(site: Path) -> None:
    dead: set[str] = set()
    pages = [p for p in site.rglob("*.html") if "404" not in p.name]
    for page in pages:
        for href in _HREF.findall(page.read_text()):
            target = _target(site, page, href)
            if target is not None and not target.exists():
                dead.add(f"{page.relative_to(site)}: {href}")
    assert {p.relative_to(site).parts[0] for p in pages} >= {"matrix", "versions", "tolerance", "cosmo"}
    assert not dead, "\n".join(sorted(dead)[:30])


def test_a_page_address_is_where_a_raw_html_link_must_point() -> None:
    from matrix.render import href

    assert href("copilot-python/sdk-1.0.0.md#event.unknown-type") == "../copilot-python/sdk-1.0.0/#event.unknown-type"
    assert href("../versions/f/cli-1.md") == "../../versions/f/cli-1/"
    assert href("#frame-x") == "#frame-x" and href("sdk-1/") == "sdk-1/"
