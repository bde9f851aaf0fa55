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
  the ranker gives them), its backlinks (source, kind and line of each, and the
  content of every source file, whose line is quoted) and the content of the files its
  links go to (a link to a heading depends on the target having it).

An edit of one note's body therefore makes that note's page again, the pages whose
related lists or "Before this"/"Leads to" changed, the pages it links to (their
backlinks quote it) and the pages that link to it; no other page. A test compares
such a build with one from scratch. Which documents those are is found without
computing every page's digest (:mod:`studykb.web.site_changes`).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from studykb.api import Session
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
    """The digest of a document's sidebar (its related list with the reasons, "Before
    this" and "Leads to"), as the site's manifest keeps it."""
    return hashlib.blake2b(repr(sidebar).encode(), digest_size=16).hexdigest()


def page_inputs(
    pages: Pages, doc: Document, listed: str, files: dict[str, str], common: str
) -> str:
    """The digest of what ``doc``'s pages are made from; ``listed``: its
    :func:`sidebar_digest`, ``files``: path -> content digest of every file, ``common``:
    :func:`shared`."""
    h = hashlib.blake2b(common.encode(), digest_size=16)
    h.update(f"\0{doc.key}\0{files.get(doc.path, '')}\0".encode())
    h.update(listed.encode())
    for b in pages.backlinks_of(doc):
        ref = b.ref
        h.update(f"\0{ref.source}\0{ref.kind}\0{ref.line}\0{files.get(ref.path, '')}".encode())
    h.update(b"\1")
    for found in pages.outgoing(doc):  # a link to a heading: whether the target has it
        if found.target:
            h.update(f"\0{found.target}\0{files.get(found.target.split('#', 1)[0], '')}".encode())
    return h.hexdigest()
