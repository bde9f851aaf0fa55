"""The cross-reference and prerequisite graphs (the only module that imports networkx).

Nodes are document keys with their metadata; edges are typed with ``kind``:
``link``, ``ref``, ``requires``, ``related``, ``course``, ``item`` (from references) and
``covers`` (a document whose tags or ``covers`` name a topic). A course unit has a
``course`` edge to its course.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import networkx as nx

from .model import Document

if TYPE_CHECKING:
    from .vault import Link, Vault


def topic_names(docs: Iterable[Document]) -> dict[str, str]:
    """Folded topic id / alias / title -> topic key, for reading tags and ``covers``."""
    out: dict[str, str] = {}
    topics = [d for d in docs if d.type == "topic"]
    for doc in topics:  # ids win over aliases and titles
        for name in (doc.title, *doc.aliases):
            out.setdefault(name.casefold(), doc.key)
    for doc in topics:
        out[doc.id.casefold()] = doc.key
    return out


def covered_topics(doc: Document, topics: dict[str, str]) -> list[str]:
    """Keys of the topics ``doc`` covers (its tags and ``covers`` that name a topic)."""
    seen: dict[str, None] = {}
    for tag in (*doc.covers, *doc.tags):
        key = topics.get(tag.casefold())
        if key and key != doc.key:
            seen[key] = None
    return list(seen)


def build(docs: dict[str, Document], links: Iterable[Link]) -> nx.MultiDiGraph:
    """The whole typed graph of the vault."""
    graph = nx.MultiDiGraph()
    for key, doc in docs.items():
        graph.add_node(key, doc=doc)
    for link in links:
        if link.target is None or link.target not in docs:
            continue
        ref = link.ref
        graph.add_edge(ref.source, link.target, kind=ref.kind, path=ref.path, line=ref.line,
                       reason=ref.reason)
    topics = topic_names(docs.values())
    for key, doc in docs.items():
        for topic in covered_topics(doc, topics):
            graph.add_edge(key, topic, kind="covers", path=doc.path, line=doc.line, reason="")
        if doc.parent and doc.parent in docs:
            graph.add_edge(key, doc.parent, kind="course", path=doc.path, line=doc.line,
                           reason="")
    return graph


def from_vault(vault: Vault) -> nx.MultiDiGraph:
    return build(vault.documents(), vault.links("WHERE target_key IS NOT NULL"))


def subgraph(graph: nx.MultiDiGraph, keep: Iterable[str]) -> nx.MultiDiGraph:
    return graph.subgraph(list(keep)).copy()


def loops(edges: list[tuple[str, str, str, int]]) -> list[tuple[list[str], list[tuple[str, int]]]]:
    """Prerequisite loops: (members in loop order, (path, line) of each ``requires`` on it).

    One entry per strongly connected component, so each loop is reported once.
    """
    graph = nx.DiGraph()
    where: dict[tuple[str, str], tuple[str, int]] = {}
    for source, target, path, line in edges:
        graph.add_edge(source, target)
        where.setdefault((source, target), (path, line))
    out = []
    for component in nx.strongly_connected_components(graph):
        members = sorted(component)
        if len(members) == 1 and not graph.has_edge(members[0], members[0]):
            continue
        cycle = [u for u, _v in nx.find_cycle(graph.subgraph(members), members[0])]
        rest = [m for m in members if m not in cycle]
        order = cycle + rest
        places = sorted({where[(u, v)] for u, v in graph.subgraph(members).edges()})
        out.append((order, places))
    return out


def to_graphml(graph: nx.MultiDiGraph, fh: Any) -> None:
    """GraphML for Gephi/yEd: node and edge attributes flattened to strings and numbers."""
    flat = nx.MultiDiGraph()
    for key, data in graph.nodes(data=True):
        doc: Document = data["doc"]
        flat.add_node(key, id=doc.id, label=doc.title, path=doc.path, type=doc.type,
                      level=doc.level or 0, status=doc.status or "")
    for u, v, data in graph.edges(data=True):
        flat.add_edge(u, v, kind=data["kind"], path=data["path"], line=data["line"])
    nx.write_graphml(flat, fh, encoding="utf-8")


def topological_layers(graph: nx.DiGraph) -> list[list[Any]]:
    return [sorted(layer) for layer in nx.topological_generations(graph)]
