"""The Atom feed (``feed.xml``): one entry per release the dataset's changelog says was added,
newest first, saying what it works with and what it broke.

Ids are ``tag:`` URIs (RFC 4151) built from the release, so an entry keeps its id on every
rebuild and every mirror of the site; links are relative to the feed, which sits at the
site's root."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from matrix.answers.changes import ReleaseNote
from matrix.site.changes_page import release_page
from matrix.store.changelog import Entry

__all__ = ["MAX_ENTRIES", "feed_xml"]

ATOM = "http://www.w3.org/2005/Atom"
MAX_ENTRIES = 100
_TAG = "tag:compat-matrix,2026:"


def _text(note: ReleaseNote) -> str:
    lines = [f"{note.title} ({note.family}): {note.summary()}."]
    if note.works_with:
        lines += ["Works with (measured): " + "; ".join(s.strip('"') for s in note.works_with)]
    if note.broke:
        lines += [f"Broke, compared with {note.previous}:"]
        lines += [f"- {b.text(note.other_package)}" for b in note.broke]
    return "\n".join(lines)


def feed_xml(entries: list[tuple[Entry, list[ReleaseNote]]], generated_at: str, pages: set[str]) -> str:
    """``entries``: the changelog, newest first, each with its releases' notes. ``pages``: the
    site's pages (relative to ``docs/``); an entry links to its release's page when the site
    has one."""
    ET.register_namespace("", ATOM)
    root = ET.Element(f"{{{ATOM}}}feed")

    def sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
        el = ET.SubElement(parent, f"{{{ATOM}}}{tag}", attrs)
        if text is not None:
            el.text = text
        return el

    sub(root, "id", _TAG + "feed")
    sub(root, "title", "compat-matrix: new releases measured")
    sub(root, "subtitle", "Each new SDK or CLI release the dataset measured: what it works with, what it broke.")
    sub(root, "updated", entries[0][0].at if entries else generated_at)
    sub(root, "link", rel="self", href="feed.xml")
    sub(root, "link", rel="alternate", href="changes/")
    author = sub(root, "author")
    sub(author, "name", "compat-matrix")
    count = 0
    for entry, notes in entries:
        for note in notes:
            if count == MAX_ENTRIES:
                break
            count += 1
            item = sub(root, "entry")
            sub(item, "id", f"{_TAG}{note.family}/{note.side}/{note.version}")
            broke = f", broke {len(note.broke)}" if note.broke else ""
            sub(item, "title", f"{note.title} ({note.family}){broke}")
            sub(item, "updated", entry.at)
            sub(item, "category", term=note.family)
            page = release_page(note, pages)
            if page:
                sub(item, "link", rel="alternate", href=page)
            sub(item, "content", _text(note), type="text")
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
