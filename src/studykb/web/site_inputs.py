"""What each page of a static site is made from, as one digest (the site's seam for
rewriting only what an edit changed).

``studykb site`` records, in its manifest, the digest of every page's inputs beside the
digest of the page itself; a later build makes a page again only when its inputs'
digest differs (or its file is no longer the one written), and otherwise keeps the
recorded file, its digest and the vault files it shows, without rendering it.

A document's page (and a topic's plan page) is made from:

* what every page shares (:func:`shared`): the code, templates, static files and options
  (:func:`studykb.web.site.code_digest`), the configuration, every document's *card*
  (its names, path, type, front matter and summary: how other pages name, link, list and
  describe it, and whether it is known) and the prerequisite and topic structure (what
  plans are made from). A change to any of these makes every page again: rare edits (a
  title, a status, a new document) cost a full rebuild, never a stale page;
* its own: the content of its file (the body, its links and the files it shows), its
  sidebar (the related documents with their reasons, "Before this" and "Leads to", as
  the ranker gives them), its backlinks (source, kind and line of each, and the text of
  that line, which the page quotes), the documents its links go to (with how each
  resolved) and, for a link to a heading or a block, the outline of the target's file
  (:func:`outline_digest`: the id the heading gets there). Nothing else of another
  file is shown, so nothing else of it counts.

A topic's plan page is made from what every page shares and which topic it is only
(:func:`plan_inputs`).

An edit of one note's body therefore makes that note's page again, the pages whose
related lists or "Before this"/"Leads to" changed, the pages whose backlink from it
moved, came, went or now quotes another line, and the pages that link to one of its
headings whose outline changed; no other page (the others' inputs are computed and
found the same: :mod:`studykb.web.site_changes` says which are looked at). A test compares
such a build with one from scratch. Which documents those are is found without
computing every page's digest (:mod:`studykb.web.site_changes`).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from studykb.api import Link, Session
    from studykb.model import Document
    from studykb.related.sidebar import Sidebar
    from studykb.web.pages import Pages


def shared(kb: Session, code: str) -> str:
    """The digest of what every page is made from (see the module's docstring): the
    cards and the prerequisite and topic structure are named by the plan tables' stamp
    (:meth:`studykb.session.Session.plan_stamp`), kept with the tables, so neither every
    card nor the tables are read for it."""
    h = hashlib.blake2b(code.encode(), digest_size=16)
    h.update(repr(kb.config).encode())
    h.update(b"\0" + kb.plan_stamp().encode())
    return h.hexdigest()


def sidebar_digest(sidebar: Sidebar | None) -> str:
    """The digest of what a page shows of a document's sidebar (its related list with
    the reasons, "Before this" and "Leads to", as
    :func:`studykb.web.contexts.sidebar_context` reads it: not the scores, which move
    with every edit of a document in the list and are never shown), as the site's
    manifest keeps it."""
    shown: object = None
    if sidebar is not None:
        shown = (
            [(r.key, r.title, r.type, list(r.reasons)) for r in sidebar.related],
            [(n.key, n.title, n.type, n.note) for n in sidebar.before],
            [(n.key, n.title, n.type, n.note) for n in sidebar.leads_to],
            sidebar.more_before,
            sidebar.more_leads_to,
        )
    return hashlib.blake2b(repr(shown).encode(), digest_size=16).hexdigest()


def page_inputs(
    pages: Pages, doc: Document, listed: str, files: dict[str, str], common: str
) -> str:
    """The digest of what ``doc``'s pages are made from; ``listed``: its
    :func:`sidebar_digest`, ``files``: path -> content digest of every file, ``common``:
    :func:`shared`. Of another file, only what the pages show of it counts (see the
    module's docstring): a backlink's line, the headings of a file a link goes into."""
    h = hashlib.blake2b(common.encode(), digest_size=16)
    h.update(f"\0{doc.key}\0{files.get(doc.path, '')}\0".encode())
    h.update(listed.encode())
    for b in pages.backlinks_of(doc):
        ref = b.ref
        shown = pages.context_line(ref.path, ref.line)
        h.update(f"\0{ref.source}\0{ref.kind}\0{ref.line}\0{shown}".encode())
    h.update(b"\1")
    for found in pages.outgoing(doc):
        if found.target:
            h.update(f"\0{found.target}\0{found.state}".encode())
            if _anchored(found):  # a link to a heading: the ids the target's headings get
                h.update(b"\0" + outline_digest(pages, found.target.split("#", 1)[0]).encode())
    return h.hexdigest()


def plan_inputs(doc: Document, common: str) -> str:
    """The digest of what a topic's plan page is made from: the plan tables and every
    card (both in ``common``: :func:`shared`) and which topic it is; nothing of the
    topic's file but its card, nor its sidebar or backlinks."""
    return hashlib.blake2b(f"{common}\0plan\0{doc.key}".encode(), digest_size=16).hexdigest()


def _anchored(found: Link) -> bool:
    """Whether a reference names a heading or a block of its target."""
    return bool(found.ref.anchor) or "#" in found.ref.text


def outline_digest(pages: Pages, path: str) -> str:
    """The digest of the headings and labels of the file ``path`` as last read (what a
    link into it finds its anchor in), kept for the vault's state."""
    known: dict[str, str] = pages.memo("site-outline-digests", dict)
    found = known.get(path)
    if found is None:
        stored = pages.kb.stored_outline(path) or ""
        found = known[path] = hashlib.blake2b(stored.encode(), digest_size=16).hexdigest()
    return found
