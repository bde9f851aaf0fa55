"""What the plan tables are made from, file by file (the plan tables' seam for not making
them again after an edit that leaves them alone).

The tables (:func:`studykb.study.needs.compute`) read every document's card (its fields
and front matter), the topic table, and three kinds of resolved reference: ``requires``
(in file and line order), ``link`` to a topic (in file and line order) and ``item`` (by
source and line). :func:`made_from` names what they read of each file with one digest;
the tables keep these digests, and after an edit (:meth:`studykb.study.plans.Tables.update`)
the digests of the changed files are made again: when each is the one kept, the tables
are the ones kept. A reference in a file that did not change resolves as before while
no document's card changed (its names, its type), and a card lives in its own file; a
changed topic table makes them again through the mechanism (it is an input).

The order of the documents (the state's, which an edit changes: a changed file's rows
are written again) is not named: nothing made from the tables depends on it (plans,
trees and lists sort what they show; each document's needs keep their own order).
"""

from __future__ import annotations

import hashlib
from collections.abc import Container, Iterable
from typing import TYPE_CHECKING, Any

from studykb.graph import prerequisite_graph

if TYPE_CHECKING:
    from studykb.model import Document
    from studykb.vault.derived import Snapshot
    from studykb.vault.state.rows import Edge

#: The kinds of reference the tables read.
KINDS = ("requires", "link", "item")


def card(doc: Document) -> str:
    """A document's card as the tables (and a static site's pages) read it."""
    return repr(doc) + "\1" + repr(sorted(doc.meta.items()))


def made_from(
    docs: Iterable[Document], edges: Iterable[Edge], topics: Container[str]
) -> tuple[dict[str, str], str]:
    """(path -> digest of what the tables read of that file, a digest of every card):
    ``edges``, the references of :data:`KINDS` (others are left out), each file's in
    the order they are written; ``topics``, the keys of the topics."""
    cards: dict[str, list[tuple[str, str]]] = {}
    for doc in docs:
        cards.setdefault(doc.path, []).append((doc.key, card(doc)))
    read: dict[str, tuple[list[Any], list[Any], list[Any]]] = {}
    for e in edges:
        if e.kind == "requires":
            read.setdefault(e.path, ([], [], []))[0].append((e.source, e.target, e.reason))
        elif e.kind == "link" and e.target in topics:
            read.setdefault(e.path, ([], [], []))[1].append((e.source, e.target))
        elif e.kind == "item":
            read.setdefault(e.path, ([], [], []))[2].append((e.source, e.line, e.target))
    files: dict[str, str] = {}
    everyone = hashlib.blake2b(digest_size=16)
    for path in sorted(cards.keys() | read.keys()):
        own = sorted(cards.get(path, ()))
        requires, links, items = read.get(path, ([], [], []))
        items.sort(key=lambda item: item[:2])  # by source and line (stable: as written)
        h = hashlib.blake2b(repr((own, requires, links, items)).encode(), digest_size=16)
        files[path] = h.hexdigest()
        for key, text in own:
            everyone.update(f"\0{key}\0{text}".encode())
    return files, everyone.hexdigest()


def of_files(vault: Snapshot, paths: Iterable[str]) -> dict[str, str]:
    """:func:`made_from`'s digests of the files ``paths`` as the state holds them now
    (those with no document and no reference of :data:`KINDS` left out)."""
    paths = sorted(paths)
    docs = [doc for found in vault.documents_in(paths).values() for doc in found]
    edges = [e for e in vault.edges_in(paths) if e.kind in KINDS]
    return made_from(docs, edges, vault.topics().ids)[0]


def content(data: dict[str, Any], cards: str) -> str:
    """A name of the tables' content (whatever the documents' order) and of the cards
    they were made from: what every page of a static site shares
    (:func:`studykb.web.site_inputs.shared`)."""
    needs = prerequisite_graph((d, n, r) for d, n, r in data["edges"]).needs
    h = hashlib.blake2b(cards.encode(), digest_size=16)
    for part in (data["info"], needs, data["list_pos"]):
        h.update(b"\2" + repr(sorted(part.items())).encode())
    for sets in (data["covers"], data["tagged"], data["taught"]):
        h.update(b"\3" + repr(sorted((k, sorted(v)) for k, v in sets.items())).encode())
    h.update(repr(sorted(data["known"])).encode())
    return h.hexdigest()
