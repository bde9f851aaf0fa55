"""A document's body as HTML, with its links going where the vault resolved them.

The vault already resolved every reference of the file (``kb.show(doc).outgoing``):
a link in the body goes to the page of the document its reference resolved to, looked
up by the reference as written, so the web view and ``studykb check`` never disagree.
Files the note shows (images) must lie inside the vault, outside hidden folders.
"""

from __future__ import annotations

import posixpath
from collections import OrderedDict
from typing import TYPE_CHECKING
from urllib.parse import quote, unquote

from studykb.api import IMAGE_EXTS, heading_anchor, heading_ids, render_note
from studykb.model import Document
from studykb.runtime import process
from studykb.web.links import Linker

if TYPE_CHECKING:
    from pathlib import Path

    from studykb.api import CodeTarget, Link, Outline, Session

#: Rendered bodies kept (serve mode), by vault state, file and page root.
CACHE_SIZE = 512
#: Outlines of link targets kept, with their heading ids, by vault state, file and title
#: (a static site links to a few thousand anchored targets from 10k pages).
ANCHORS_SIZE = 4096


def _bodies() -> OrderedDict[tuple[str, str, str], tuple[str, frozenset[str]]]:
    """The rendered bodies this process keeps (a server renders a page once per state)."""
    return process.once("web.bodies", OrderedDict)


class VaultLinks:
    """:class:`studykb.parse.render.Links` for one document of the vault."""

    def __init__(self, kb: Session, doc: Document, outgoing: list[Link], link: Linker) -> None:
        self.kb = kb
        self.doc = doc
        self.folder = posixpath.dirname(doc.path)
        self.link = link
        self.targets = {f.ref.text: f.target for f in outgoing if f.ref.kind == "link" and f.target}
        self.code = code_targets(kb, outgoing)
        self.assets: set[str] = set()

    def reference(self, written: str, anchor: str) -> str | None:
        code = self.code.get(written)
        if code is not None:  # into a tracked repository's code: its code page
            return self.link.code(code)
        key = self.targets.get(written)
        if key is None:
            return None
        href = self.link.key(key)
        if anchor and "#" not in key:
            target = self.kb.documents().get(key)
            path, title = (target.path, target.title) if target else (key, "")
            href += "#" + quote(self.anchor_id(path, title, anchor), safe="^")
        return href

    def title(self, written: str) -> str | None:
        code = self.code.get(written)
        if code is not None:
            return f"{code.repo}:{code.path}"
        key = self.targets.get(written)
        target = self.kb.documents().get(key) if key else None
        return target.title if target is not None else None

    def local(self, anchor: str) -> str:
        return self.anchor_id(self.doc.path, self.doc.title, anchor)

    def anchor_id(self, path: str, title: str, anchor: str) -> str:
        """The id the page of ``path`` gives what ``anchor`` names there: a block's
        ``^id``, the heading the vault's rules find (``Setup#Linux``, a generator's slug),
        else the slug of the text."""
        if anchor.startswith("^"):
            return anchor
        outline, ids = _anchors_of(self.kb, path, title)
        line = outline.find(anchor, self.kb.reading)
        found = ids.get(line) if line is not None else None
        return found or heading_anchor(anchor.rpartition("#")[2] or anchor)

    def asset(self, target: str) -> str | None:
        path = vault_file(self.kb.root, self.folder, target)
        if path is None:
            return None
        self.assets.add(path)
        return self.link.file(path)


def _anchors_of(kb: Session, path: str, title: str) -> tuple[Outline, dict[int, str]]:
    """The outline of the file ``path`` as last read, with the id its page gives each
    heading line (kept for the vault's state: many pages link into the same files)."""
    entry = (kb.fingerprint(), path, title)
    kept: OrderedDict[tuple[str, str, str], tuple[Outline, dict[int, str]]]
    kept = process.once("web.anchors", OrderedDict)
    found = kept.get(entry)
    if found is None:
        outline = kb.outline(path)
        rows = [(h.text, h.level, h.line) for h in outline.headings]
        found = kept[entry] = (outline, heading_ids(rows, title))
        if len(kept) > ANCHORS_SIZE:
            kept.popitem(last=False)
    return found


def code_targets(kb: Session, outgoing: list[Link]) -> dict[str, CodeTarget]:
    """Where each code link of a note goes, by its text; a note without code links
    never reads the tracked repositories."""
    codes = [f for f in outgoing if f.ref.kind == "link" and f.ref.style == "code"]
    if not codes:
        return {}
    view = kb.repos()
    out = {}
    for found in codes:
        target = view.target(found.ref.text, found)
        if target is not None:
            out[found.ref.text] = target
    return out


def vault_file(root: Path, folder: str, target: str) -> str | None:
    """The vault path of the image ``target`` names from a note in ``folder`` (relative to
    it, else to the vault's root), if it is a file inside the vault; else None."""
    name = unquote(target.split("#", 1)[0].split("?", 1)[0]).strip()
    if not name or posixpath.splitext(name)[1].lower() not in IMAGE_EXTS:
        return None
    places = [name.lstrip("/")] if name.startswith("/") else [posixpath.join(folder, name), name]
    for place in places:
        path = posixpath.normpath(place)
        if path.startswith("../") or path == ".." or posixpath.isabs(path):
            continue
        if any(part.startswith(".") for part in path.split("/")):
            continue
        if inside(root, path):
            return path
    return None


def inside(root: Path, path: str) -> bool:
    """Whether the vault path names a regular file whose real place is inside the vault."""
    full = root / path
    try:
        real = full.resolve(strict=True)
        return real.is_file() and real.is_relative_to(root.resolve())
    except (OSError, RuntimeError):
        return False


def render_body(
    kb: Session, doc: Document, outgoing: list[Link], link: Linker, assets: set[str]
) -> str:
    """The HTML of ``doc``'s body; the vault files it shows are added to ``assets``."""
    if doc.type == "unit":
        return ""
    entry = (kb.fingerprint(), doc.path, link.root)
    kept = _bodies()
    cached = kept.get(entry)
    if cached is None:
        links = VaultLinks(kb, doc, outgoing, link)
        text = _read(kb, doc.path)
        cached = (render_note(text, links, title=doc.title).html, frozenset(links.assets))
        kept[entry] = cached
        if len(kept) > CACHE_SIZE:
            kept.popitem(last=False)
    else:
        kept.move_to_end(entry)
    assets.update(cached[1])
    return cached[0]


def _read(kb: Session, path: str) -> str:
    raw = kb.read_file(path)
    if raw is None:
        return ""
    return raw.decode("utf-8-sig", errors="replace").replace("\x00", "\ufffd")
