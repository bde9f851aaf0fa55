"""The one API every front end calls: it returns model objects, never strings.

The CLI, the sidebar, the language server and any web page call these functions and
format the results themselves.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from studykb.errors import NotFound
from studykb.model import Document, Problem
from studykb.vault import Link, Vault
from studykb.vault.resolve import fold


@dataclass(frozen=True)
class GraphOptions:
    """Filters for a graph export, filled by the CLI in one place."""

    types: tuple[str, ...] = ()
    """Keep only documents of these types (empty: all)."""
    tags: tuple[str, ...] = ()
    """Keep only documents carrying one of these tags or covering one of these topics."""
    kinds: tuple[str, ...] = ()
    """Keep only edges of these kinds (empty: all)."""


@dataclass(frozen=True)
class Shown:
    """Everything ``show`` prints about one document."""

    doc: Document
    outgoing: list[Link] = field(default_factory=list)
    backlinks: list[Link] = field(default_factory=list)
    units: list[Document] = field(default_factory=list)


def find(vault: Vault, query: str) -> Document:
    """Resolve ``query`` like a reference (path, id, alias, title, URL); NotFound otherwise."""
    query = query.strip()
    names = vault.names()
    if query.lower().startswith(("http://", "https://")):
        from studykb.parse.urls import normalize_url

        key, _state, _note = names.resolve("", "", normalize_url(query), "url", "", False)
    else:
        key, _state, _note = names.resolve("", "", query, "name", "", False)
        if key is None and query.lower().endswith(".md"):
            key, _state, _note = names.resolve("", "", query, "path", "", False)
    doc = vault.document(key) if key else None
    if doc is None:
        raise NotFound(query, suggest(vault, query))
    return doc


def suggest(vault: Vault, query: str, limit: int = 5) -> list[str]:
    """Names close to ``query``: containing it, or similar in spelling."""
    q = fold(query)
    names = vault.names()
    picked: dict[str, None] = {}
    if q:
        for name, entries in names.table.items():
            if q in name:
                for _lvl, key in entries:
                    picked.setdefault(key, None)
            if len(picked) >= limit:
                break
    import difflib

    for name in difflib.get_close_matches(q, list(names.table), n=limit, cutoff=0.6):
        for _lvl, key in names.table[name]:
            picked.setdefault(key, None)
    docs = [vault.document(k) for k in list(picked)[:limit]]
    return [f"{d.id} ({d.title})" if d.title != d.id else d.id for d in docs if d]


def check(vault: Vault) -> list[Problem]:
    return vault.problems()


def show(vault: Vault, doc: Document) -> Shown:
    units = []
    if doc.type == "course":
        units = sorted((d for d in vault.documents().values() if d.parent == doc.key),
                       key=lambda d: d.line)
    return Shown(doc, vault.outgoing(doc.key), vault.backlinks(doc.key), units)


def backlinks(vault: Vault, doc: Document) -> list[Link]:
    return vault.backlinks(doc.key)


def graph(vault: Vault, options: GraphOptions):  # type: ignore[no-untyped-def]
    """The typed graph, filtered by type, tag and edge kind."""
    from studykb import graph as g
    full = g.from_vault(vault)
    keep = []
    topics = g.topic_names(vault.documents().values()) if options.tags else {}
    wanted_tags = {fold(t) for t in options.tags}
    wanted_topics = {topics.get(t) for t in wanted_tags} - {None}
    for key, data in full.nodes(data=True):
        doc: Document = data["doc"]
        if options.types and doc.type not in options.types:
            continue
        if options.tags:
            tags = {fold(t) for t in (*doc.tags, *doc.covers)}
            if not (tags & wanted_tags or key in wanted_topics):
                continue
        keep.append(key)
    sub = g.subgraph(full, keep)
    if options.kinds:
        drop = [(u, v, k) for u, v, k, d in sub.edges(keys=True, data=True)
                if d["kind"] not in options.kinds]
        sub.remove_edges_from(drop)
    return sub
