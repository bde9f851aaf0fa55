"""The cross-reference and prerequisite graphs (the only module that imports networkx).

Nodes are document keys with their metadata; edges are typed with ``kind``:
``link``, ``ref``, ``requires``, ``related``, ``course``, ``item`` (from references),
``covers`` (a document to a topic it teaches) and ``about`` (to a topic its tags name).
A course unit has a ``course`` edge to its course.
"""

from __future__ import annotations

import graphlib
import heapq
import re
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from studykb.model import Document, fold
from studykb.runtime.lazy import nx
from studykb.runtime.memory import paused_gc


class TopicsOf(Protocol):
    """What the graph asks of the vault's topic table (:class:`studykb.vault.topics.TopicTable`)."""

    def taught(self, doc: Document) -> list[str]: ...

    def about(self, doc: Document) -> list[str]: ...


def build(
    docs: Mapping[str, Document], edges: Iterable[Sequence[Any]], topics: TopicsOf
) -> nx.MultiDiGraph:
    """The whole typed graph: ``docs`` by key, ``edges`` as (source, target, kind, path,
    line, reason) of every resolved reference, and ``covers`` / ``about`` edges from each
    document to the topics it teaches or is about."""
    with paused_gc(freeze=True):
        return _build(docs, edges, topics)


def _build(
    docs: Mapping[str, Document], edges: Iterable[Sequence[Any]], topics: TopicsOf
) -> nx.MultiDiGraph:
    graph = nx.MultiDiGraph()
    graph.add_nodes_from((key, {"doc": doc}) for key, doc in docs.items())
    _add_edges(
        graph,
        (
            (source, target, {"kind": kind, "path": path, "line": line, "reason": reason})
            for source, target, kind, path, line, reason in _typed_edges(docs, edges, topics)
        ),
    )
    return graph


def _typed_edges(
    docs: Mapping[str, Document],
    edges: Iterable[Sequence[Any]],
    topics: TopicsOf,
    of: Mapping[str, Document] | None = None,
) -> Iterator[Sequence[Any]]:
    """(source, target, kind, path, line, reason) of every edge of :func:`build`, in the
    order it adds them: the references' between documents, then each document's
    ``covers``, ``about`` and ``course`` edges (those of the documents ``of`` only, when
    given)."""
    for edge in edges:
        if edge[0] in docs and edge[1] in docs:
            yield edge
    for key, doc in (docs if of is None else of).items():
        taught = topics.taught(doc)
        for topic in taught:
            yield key, topic, "covers", doc.path, doc.line, ""
        for topic in topics.about(doc):
            if topic not in taught:
                yield key, topic, "about", doc.path, doc.line, ""
        if doc.parent and doc.parent in docs:
            yield key, doc.parent, "course", doc.path, doc.line, ""


def edge_kinds(
    docs: Mapping[str, Document],
    edges: Iterable[Sequence[Any]],
    topics: TopicsOf,
    sources: Collection[str] | None = None,
) -> Iterator[tuple[str, str, str]]:
    """(source, target, kind) of every edge of :func:`build` (unfiltered, as
    :func:`select` with no filter keeps them), in the order its ``edges()`` gives them,
    without building the graph: the graph view's data (``graph.json``) needs no more,
    and filling and copying the networkx graph was about 1 s of a 10k-note vault's.
    ``sources``: only the edges from these documents (``edges``: at least their
    references).

    networkx's order: by source in node order, then by target in the order the pair
    was first added, then in the order added. A test holds the two to the same list."""
    of = None if sources is None else {k: d for k, d in docs.items() if k in sources}
    succ: dict[str, dict[str, list[str]]] = {key: {} for key in (docs if of is None else of)}
    for edge in _typed_edges(docs, edges, topics, of):
        targets = succ.get(edge[0])
        if targets is not None:
            targets.setdefault(edge[1], []).append(edge[2])
    for source, targets in succ.items():
        for target, kinds in targets.items():
            for kind in kinds:
                yield source, target, kind


def _add_edges(graph: nx.MultiDiGraph, edges: Iterable[tuple[str, str, dict[str, Any]]]) -> None:
    """``graph.add_edges_from(edges)`` for edges between nodes already in ``graph``, each
    with a fresh attribute dict that the graph may keep.

    It fills the adjacency dicts networkx documents for a ``MultiDiGraph`` (successors
    and predecessors share one key dict per node pair; keys count up from 0 as
    ``new_edge_key`` gives them) directly: ``add_edges_from`` goes through views and
    copies each attribute dict, 0.35 s of the 0.45 s graph of a 10k-note vault. A test
    holds the two to the same graph.
    """
    succ, pred = graph._succ, graph._pred  # noqa: SLF001
    new_keys = graph.edge_key_dict_factory
    for u, v, data in edges:
        keys = succ[u].get(v)
        if keys is None:
            keys = succ[u][v] = pred[v][u] = new_keys()
        key = len(keys)
        while key in keys:
            key += 1
        keys[key] = data
    nx._clear_cache(graph)  # noqa: SLF001


@dataclass(frozen=True)
class GraphOptions:
    """Filters for a graph export, filled by each front end in one place."""

    types: tuple[str, ...] = ()
    """Keep only documents of these types (empty: all)."""
    tags: tuple[str, ...] = ()
    """Keep only documents carrying one of these tags or covering one of these topics."""
    kinds: tuple[str, ...] = ()
    """Keep only edges of these kinds (empty: all)."""


def subgraph(graph: nx.MultiDiGraph, keep: Iterable[str]) -> nx.MultiDiGraph:
    """The nodes ``keep`` and the edges between them, in ``graph``'s own order (a
    networkx subgraph view walks a set, so its order would follow the hash seed)."""
    kept = set(keep)
    out = nx.MultiDiGraph()
    out.graph.update(graph.graph)
    out.add_nodes_from((n, dict(d)) for n, d in graph.nodes(data=True) if n in kept)
    out.add_edges_from(
        (u, v, k, dict(d))
        for u, v, k, d in graph.edges(keys=True, data=True)
        if u in kept and v in kept
    )
    return out


def select(
    full: nx.MultiDiGraph,
    topic_names: Mapping[str, str],
    types: Sequence[str] = (),
    tags: Sequence[str] = (),
    kinds: Sequence[str] = (),
) -> nx.MultiDiGraph:
    """The part of ``full`` a graph export asks for: documents of ``types``, carrying
    one of ``tags`` or covering (or being) a topic one names (``topic_names``: folded
    name -> topic key), and edges of ``kinds`` (each empty: all)."""
    keep = []
    wanted_tags = {fold(t) for t in tags}
    wanted_topics = {topic_names.get(t) for t in wanted_tags} - {None}
    for key, data in full.nodes(data=True):
        doc: Document = data["doc"]
        if types and doc.type not in types:
            continue
        if tags:
            have = {fold(t) for t in (*doc.tags, *doc.covers)}
            if not (have & wanted_tags or key in wanted_topics):
                continue
        keep.append(key)
    sub = subgraph(full, keep)
    if kinds:
        drop = [
            (u, v, k) for u, v, k, d in sub.edges(keys=True, data=True) if d["kind"] not in kinds
        ]
        sub.remove_edges_from(drop)
    return sub


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
        flat.add_node(
            _xml(key),
            id=_xml(doc.id),
            label=_xml(doc.title),
            path=_xml(doc.path),
            type=doc.type,
            level=doc.level or 0,
            status=doc.status or "",
        )
    for u, v, data in graph.edges(data=True):
        flat.add_edge(
            _xml(u), _xml(v), kind=data["kind"], path=_xml(data["path"]), line=data["line"]
        )
    nx.write_graphml(flat, fh, encoding="utf-8")


_NOT_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _xml(text: str) -> str:
    """Control characters (a JSON title may hold them) are not allowed in XML 1.0."""
    return _NOT_XML.sub("\ufffd", text)


def topological_layers(graph: nx.DiGraph) -> list[list[Any]]:
    return [sorted(layer) for layer in nx.topological_generations(graph)]


# -- prerequisite graph (reading plans) -----------------------------------------------
# Plans run on plain dicts and the standard library's graphlib, so a plan does not pay
# for importing networkx; networkx only steps in to group a prerequisite loop.


class Prerequisites:
    """``needs[doc] = {need: reason}`` and the reverse, ``needed_by[need] = {doc: reason}``."""

    def __init__(self, edges: Iterable[tuple[str, str, str]] = ()) -> None:
        self.needs: dict[str, dict[str, str]] = {}
        self.needed_by: dict[str, dict[str, str]] = {}
        for doc, need, reason in edges:
            self.add(doc, need, reason)

    def add(self, doc: str, need: str, reason: str = "") -> None:
        if doc == need:
            return
        current = self.needs.setdefault(doc, {})
        if need not in current or (reason and not current[need]):
            current[need] = reason
            self.needed_by.setdefault(need, {})[doc] = reason

    def __contains__(self, key: str) -> bool:
        return key in self.needs or key in self.needed_by

    def successors(self, key: str) -> list[str]:
        return list(self.needs.get(key, ()))

    def predecessors(self, key: str) -> list[str]:
        return list(self.needed_by.get(key, ()))

    def reason(self, doc: str, need: str) -> str:
        return self.needs.get(doc, {}).get(need, "")


def prerequisite_graph(edges: Iterable[tuple[str, str, str]]) -> Prerequisites:
    """``(doc, needs, reason)`` triples -> :class:`Prerequisites`."""
    return Prerequisites(edges)


def ordered_blocks(graph: Prerequisites, nodes: Iterable[str], sort_key: Any) -> list[list[str]]:
    """Order ``nodes`` so every node comes after what it needs.

    Among nodes free to go next, the smallest ``sort_key`` goes first. Nodes on a loop
    come out together as one block (a strongly connected component), in ``sort_key`` order.
    """
    members = set(nodes)
    deps = {n: [m for m in graph.needs.get(n, ()) if m in members] for n in members}
    sorter = graphlib.TopologicalSorter(deps)
    try:
        sorter.prepare()
    except graphlib.CycleError:
        return _ordered_with_loops(deps, sort_key)
    heap = [(sort_key(n), n) for n in sorter.get_ready()]
    heapq.heapify(heap)
    out = []
    while heap:
        _key, node = heapq.heappop(heap)
        out.append([node])
        sorter.done(node)
        for ready in sorter.get_ready():
            heapq.heappush(heap, (sort_key(ready), ready))
    return out


def _ordered_with_loops(deps: dict[str, list[str]], sort_key: Any) -> list[list[str]]:
    dag = nx.DiGraph()
    dag.add_nodes_from(deps)
    dag.add_edges_from((need, node) for node, needs in deps.items() for need in needs)
    cond = nx.condensation(dag)
    blocks: dict[int, list[str]] = {}
    for node, comp in cond.graph["mapping"].items():
        blocks.setdefault(comp, []).append(node)
    for block in blocks.values():
        block.sort(key=sort_key)
    order = nx.lexicographical_topological_sort(cond, key=lambda c: sort_key(blocks[c][0]))
    return [blocks[c] for c in order]


def within_depth(
    graph: Prerequisites, start: str, depth: int | None, stop: Any = None
) -> dict[str, int]:
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
            for need in graph.needs.get(node, ()):
                if need in seen or (stop is not None and stop(need)):
                    continue
                seen[need] = dist + 1
                nxt.append(need)
        frontier = nxt
    return seen
