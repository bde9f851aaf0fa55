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


# -- prerequisite graph (reading plans) -----------------------------------------------


def prerequisite_graph(edges: Iterable[tuple[str, str, str]]) -> nx.DiGraph:
    """``(doc, needs, reason)`` triples -> a DiGraph with an edge doc -> needs."""
    graph = nx.DiGraph()
    for doc, needs, reason in edges:
        if doc == needs:
            continue
        if graph.has_edge(doc, needs):
            if reason and not graph[doc][needs]["reason"]:
                graph[doc][needs]["reason"] = reason
        else:
            graph.add_edge(doc, needs, reason=reason)
    return graph


def ordered_blocks(graph: nx.DiGraph, nodes: Iterable[str], sort_key: Any) -> list[list[str]]:
    """Order ``nodes`` so every node comes after what it needs (edges point to needs).

    Among nodes free to go next, ``sort_key`` decides. Nodes on a loop come out together
    as one block (a strongly connected component), in ``sort_key`` order.
    """
    sub = graph.subgraph(nodes)
    cond = nx.condensation(sub)
    members = cond.graph["mapping"]  # node -> component id
    blocks: dict[int, list[str]] = {}
    for node, comp in members.items():
        blocks.setdefault(comp, []).append(node)
    for comp in blocks.values():
        comp.sort(key=sort_key)
    first = {comp: sort_key(nodes_[0]) for comp, nodes_ in blocks.items()}
    # condensation edges point from a node to what it needs; reverse so needs come first
    order = nx.lexicographical_topological_sort(cond.reverse(copy=False), key=lambda c: first[c])
    return [blocks[c] for c in order]


def within_depth(graph: nx.DiGraph, start: str, depth: int | None,
                 stop: Any = None) -> dict[str, int]:
    """Nodes reachable from ``start`` along needs-edges with their distance.

    ``stop(node)`` true means the node is not entered (it is known), so whatever is only
    needed through it is left out too.
    """
    seen = {start: 0}
    frontier = [start]
    while frontier:
        nxt = []
        for node in frontier:
            dist = seen[node]
            if depth is not None and dist >= depth:
                continue
            if node not in graph:
                continue
            for need in graph.successors(node):
                if need in seen or (stop is not None and stop(need)):
                    continue
                seen[need] = dist + 1
                nxt.append(need)
        frontier = nxt
    return seen
