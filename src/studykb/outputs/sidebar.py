"""The sidebar as Markdown, an HTML fragment, or JSON (a Hugo / Jekyll data file).

Every title, reason and note comes from users' files, so every format escapes it:

* Markdown: ``\\`` before every character that could start markup or a template
  (``[ ] < > | { } % * _ ` ! ~ $ & #``), so ``[[x]]``, ``<script>``, ``{{ .Site }}`` and
  ``{% include %}`` stay text in CommonMark, GitHub, Obsidian, Hugo and Jekyll.
* HTML: ``html.escape`` on all text and attributes, and ``{``/``}`` as character
  references so Liquid or Go templates that include the fragment see no tags; class
  names only, no inline styles; links relative to the document.
* JSON: ``<``, ``>``, ``&`` and opening template braces as ``\\u`` escapes (the same data
  once parsed), safe to inline in a ``<script>`` or a template.

Links are relative to the document's own folder, to the target's Markdown file with
``.md`` replaced by ``ext`` (``.html`` for a site, ``.md`` for the vault itself). A data
file for a Hugo or Jekyll site (:func:`keyed` with :class:`SitePages`) is keyed by each
page's path as the generator names it (Hugo's ``.File.Path``, Jekyll's ``page.path``), and
its links (``href``) are the URLs the generator builds (Hugo's pretty URLs, ``slug``, ``url``,
``[permalinks]`` and ``uglyURLs``; Jekyll's permalinks), with ``page`` the target's key for
Hugo's ``site.GetPage``.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Iterator
from types import MappingProxyType
from typing import Any
from urllib.parse import quote

from studykb.outputs.site_pages import SitePages
from studykb.related.sidebar import Neighbour, Sidebar
from studykb.runtime import process

LABELS = MappingProxyType({"related": "Related", "before": "Before this", "leads_to": "Leads to"})
_MD_SPECIAL = frozenset("\\`*_{}[]<>|!~$&#%")
#: Control characters and bidirectional overrides: never written into a page or a note.
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


# -- links -------------------------------------------------------------------------------------
def href(source_path: str, target_key: str, target_path: str, ext: str = ".md") -> str:
    """Relative link from the file at ``source_path`` to a document (a unit: its course)."""
    folder, tail = _target(target_key, target_path, ext)
    return _folder_link(source_path.rpartition("/")[0], folder) + tail


@process.memo(maxsize=65536)
def _target(target_key: str, target_path: str, ext: str) -> tuple[str, str]:
    """(the target's folder, its quoted name and anchor): what a link to it ends with,
    from any folder (remembered: a vault's documents are each linked many times)."""
    anchor = target_key.split("#", 1)[1] if "#" in target_key else ""
    path = target_path
    if ext != ".md" and path.lower().endswith(".md"):
        path = path[:-3] + ext
    folder, _slash, name = path.rpartition("/")
    return folder, _quote(name) + (f"#{quote(anchor, safe='-_.~')}" if anchor else "")


@process.memo(maxsize=65536)
def _quote(rel: str) -> str:
    return quote(rel, safe="/.-_~")


@process.memo(maxsize=65536)
def _folder_link(here: str, there: str) -> str:
    """The quoted relative link from folder ``here`` into folder ``there`` (empty, or
    ending with ``/``); remembered, as a vault has few folders and many links."""
    rel = _relative(there + "/x", here)[:-1] if there else _relative("x", here)[:-1]
    return _quote(rel)


def _relative(path: str, folder: str) -> str:
    """``posixpath.relpath(path, folder)`` for vault paths (no ``..`` inside), faster."""
    if not folder:
        return path
    here = folder.split("/")
    there = path.split("/")
    common = 0
    for a, b in zip(here, there[:-1], strict=False):
        if a != b:
            break
        common += 1
    return "/".join([".."] * (len(here) - common) + there[common:])


# -- Markdown ----------------------------------------------------------------------------------
def md_escape(text: str) -> str:
    text = CONTROL.sub("\ufffd", " ".join(str(text).split()))
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in text)


def to_markdown(sb: Sidebar, ext: str = ".md", heading: str = "##") -> str:
    """The three sections as Markdown (empty sections left out), ending with a newline."""
    blocks = []
    related = [
        _md_item(sb, r.key, r.path, r.title or r.id, "; ".join(r.reasons), ext) for r in sb.related
    ]
    sections = (
        ("related", related, 0),
        ("before", [_md_neighbour(sb, n, ext) for n in sb.before], sb.more_before),
        ("leads_to", [_md_neighbour(sb, n, ext) for n in sb.leads_to], sb.more_leads_to),
    )
    for name, items, more in sections:
        if not items:
            continue
        if more:
            items.append(f"- … and {more} more")
        blocks.append(f"{heading} {LABELS[name]}\n\n" + "\n".join(items) + "\n")
    return "\n".join(blocks)


def _md_neighbour(sb: Sidebar, n: Neighbour, ext: str) -> str:
    return _md_item(sb, n.key, n.path, n.title or n.id, n.note, ext)


def _md_item(sb: Sidebar, key: str, path: str, title: str, note: str, ext: str) -> str:
    link = href(sb.path, key, path, ext)
    line = f"- [{md_escape(title)}]({link})"
    return line + (f" — {md_escape(note)}" if note else "")


# -- HTML --------------------------------------------------------------------------------------
def html_escape(text: str) -> str:
    text = CONTROL.sub("\ufffd", " ".join(str(text).split()))
    return html.escape(text, quote=True).replace("{", "&#123;").replace("}", "&#125;")


def to_html(sb: Sidebar, ext: str = ".html") -> str:
    """A fragment: ``<aside class="studykb-sidebar">`` with one ``<section>`` per list."""
    out = [f'<aside class="studykb-sidebar" data-id="{html_escape(sb.id)}">']
    related = [
        _html_item(sb, r.key, r.path, r.title or r.id, r.type, r.reasons, ext) for r in sb.related
    ]
    sections = (
        ("related", related, 0),
        ("before", [_html_neighbour(sb, n, ext) for n in sb.before], sb.more_before),
        ("leads_to", [_html_neighbour(sb, n, ext) for n in sb.leads_to], sb.more_leads_to),
    )
    for name, items, more in sections:
        if not items:
            continue
        css = "studykb-" + name.replace("_", "-")
        out.append(f'  <section class="{css}">')
        out.append(f'    <h2 class="studykb-heading">{html_escape(LABELS[name])}</h2>')
        out.append('    <ul class="studykb-list">')
        out.extend("      " + item for item in items)
        if more:
            out.append(f'      <li class="studykb-more">… and {more} more</li>')
        out.append("    </ul>")
        out.append("  </section>")
    out.append("</aside>")
    return "\n".join(out) + "\n"


def _html_neighbour(sb: Sidebar, n: Neighbour, ext: str) -> str:
    return _html_item(sb, n.key, n.path, n.title or n.id, n.type, [n.note] if n.note else [], ext)


def _html_item(
    sb: Sidebar, key: str, path: str, title: str, dtype: str, notes: list[str], ext: str
) -> str:
    link = html_escape(href(sb.path, key, path, ext))
    item = (
        f'<li class="studykb-item studykb-{html_escape(dtype)}">'
        f'<a class="studykb-link" href="{link}">{html_escape(title)}</a>'
    )
    if notes:
        item += f' <span class="studykb-why">{html_escape("; ".join(notes))}</span>'
    return item + "</li>"


# -- JSON --------------------------------------------------------------------------------------
def as_dict(sb: Sidebar, ext: str = ".md", pages: SitePages | None = None) -> dict[str, Any]:
    """One sidebar as data; with ``pages``, links as the site generator builds them."""

    def link(key: str, path: str) -> dict[str, Any]:
        if pages is None:
            return {"href": href(sb.path, key, path, ext)}
        return {"href": pages.href(key, path), "page": pages.key(key, path)}

    def shown(path: str) -> bool:
        return pages is None or pages.shown(path)

    def neighbour(n: Neighbour) -> dict[str, Any]:
        return {
            "id": n.id,
            "path": n.path,
            "title": n.title,
            "type": n.type,
            "level": n.level,
            "note": n.note,
            **link(n.key, n.path),
        }

    return {
        "id": sb.id,
        "path": sb.path,
        "title": sb.title,
        "type": sb.type,
        "related": [{**r.brief(), **link(r.key, r.path)} for r in sb.related if shown(r.path)],
        "before": [neighbour(n) for n in sb.before if shown(n.path)],
        "leads_to": [neighbour(n) for n in sb.leads_to if shown(n.path)],
        "more_before": sb.more_before,
        "more_leads_to": sb.more_leads_to,
    }


def keyed(
    sidebars: list[Sidebar], ext: str = ".md", pages: SitePages | None = None
) -> dict[str, Any]:
    """``{page path: sidebar}`` for a data file: the vault path, or with ``pages`` the
    path the site generator names the page by (``.File.Path`` in Hugo, ``page.path`` in
    Jekyll); a path two languages share gets the language in front (``zh/docs/a.md``)."""
    out: dict[str, Any] = {}
    for sb in sidebars:
        name = sb.path if pages is None else pages.key(sb.key, sb.path)
        if name in out and pages is not None:
            name = pages.language_key(sb.path, name)
        out[name] = as_dict(sb, ext, pages)
    return out


def to_json(data: Any, indent: int | None = 2) -> str:
    """JSON that is safe to inline in HTML and templates (the data is unchanged).

    ``<``, ``>`` and ``&`` are never structural in JSON, and neither is ``{{`` or ``{%``
    (an object opens with ``{"`` or ``{}``), so these replacements only touch strings;
    a lone closing ``}}`` cannot start a template tag.
    """
    return _safe(json.dumps(data, ensure_ascii=False, indent=indent)) + "\n"


def _safe(text: str) -> str:
    for raw, safe in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("{{", "\\u007b\\u007b"),
        ("{%", "\\u007b%"),
    ):
        text = text.replace(raw, safe)
    return text


# -- JSON of many, in pieces -------------------------------------------------------------------
#: One sidebar of :func:`keyed` as :func:`keyed_entry` makes it: (its name, its path, the
#: JSON text of its value).
Entry = tuple[str, str, str]


def keyed_entry(sb: Sidebar, ext: str = ".md", pages: SitePages | None = None) -> Entry:
    """One sidebar of :func:`keyed` made into text where it is made (a worker of the
    whole vault's sidebars), so only text comes back; :func:`keyed_json` joins them."""
    name = entry_name(sb.key, sb.path, pages)
    return name, sb.path, _safe(json.dumps(as_dict(sb, ext, pages), ensure_ascii=False))


def entry_name(key: str, path: str, pages: SitePages | None = None) -> str:
    """The name :func:`keyed_entry` gives the sidebar of ``key`` (before a name two
    languages share gets the language in front)."""
    return path if pages is None else pages.key(key, path)


def keyed_json(entries: list[Entry], pages: SitePages | None = None) -> str:
    """``to_json(keyed(sidebars, ext, pages), indent=None)``, character for character,
    from the :func:`keyed_entry` of each sidebar: the object's members as one-line
    ``json.dumps`` writes them (``"name": value`` joined by ``, ``), each already made
    safe (no replacement can span two members: each opens with ``"``)."""
    return "".join(keyed_json_pieces(entries, [(name, path) for name, path, _ in entries], pages))


def keyed_json_pieces(
    entries: Iterable[Entry], names: list[tuple[str, str]], pages: SitePages | None = None
) -> Iterator[str]:
    """:func:`keyed_json` in pieces, given as the entries come, so they can be written
    and let go one by one: ``names`` are the (name, path) of every entry, in order, known
    before the entries are made (:func:`entry_name`). A name met again takes the place of
    the first and the value of the last (as a dict does), so a member waits only for the
    last entry of its name; with no name twice, each is given as it comes."""
    slot: list[int] = []  # entry -> its member
    members: dict[str, int] = {}
    for name, path in names:
        if name in members and pages is not None:
            name = pages.language_key(path, name)
        slot.append(members.setdefault(name, len(members)))
    last = {m: n for n, m in enumerate(slot)}  # member -> the entry whose value it shows
    member_names = list(members)
    ready: dict[int, str] = {}
    next_member = 0
    yield "{"
    for n, (name, path, text) in enumerate(entries):
        if (name, path) != names[n]:
            raise ValueError(f"entry {n} is {name!r}, not {names[n][0]!r} as announced")
        m = slot[n]
        if last[m] == n:
            ready[m] = text
        while next_member in ready:
            key = _safe(json.dumps(member_names[next_member], ensure_ascii=False))
            yield f"{', ' if next_member else ''}{key}: {ready.pop(next_member)}"
            next_member += 1
    if next_member != len(member_names):
        raise ValueError(f"{len(member_names) - next_member} entries announced never came")
    yield "}\n"
