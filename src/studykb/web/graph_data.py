"""The graph the browser draws (``/api/graph``, ``graph.json``): nodes with their page,
edges with their kind; the whole vault, a document's neighbourhood, or a plan's
prerequisites.

The whole vault's graph at 10k documents becomes interactive in the browser in about
1.5 s without positions (``graph.js`` lays out clusters itself in ~50 ms, then refines
in a worker), so no layout is computed here.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from studykb.web.links import Linker

if TYPE_CHECKING:
    from studykb.api import GraphOptions, Session
    from studykb.model import Document

#: Edge kinds the graph view knows (``about``, a tag naming a topic, is not drawn).
KINDS = ("link", "ref", "requires", "related", "course", "item", "covers")
MAX_STEPS = 6


def whole(kb: Session, link: Linker, options: GraphOptions | None = None) -> dict[str, Any]:
    """Every document (filtered by ``options``) and the edges between them."""
    if options is None or not (options.types or options.tags or options.kinds):
        # everything: the edges in the graph's order, without building it
        return _data(kb.graph_edge_kinds(), kb.documents().items(), link)
    return _from_graph(kb.graph(options), link)


def _from_graph(graph: Any, link: Linker) -> dict[str, Any]:
    """:func:`whole` of a (filtered) networkx graph."""
    return _data(
        ((s, t, d["kind"]) for s, t, d in graph.edges(data=True)),
        ((key, data["doc"]) for key, data in graph.nodes(data=True)),
        link,
    )


def _data(
    edges_in: Iterable[tuple[str, str, str]], docs: Iterable[tuple[str, Document]], link: Linker
) -> dict[str, Any]:
    edges = []
    seen: set[tuple[str, str, str]] = set()
    backlinks: dict[str, int] = {}
    for source, target, kind in edges_in:
        if kind not in KINDS or source == target or (source, target, kind) in seen:
            continue
        seen.add((source, target, kind))
        edges.append({"source": source, "target": target, "kind": kind})
        backlinks[target] = backlinks.get(target, 0) + 1
    nodes = [_node(key, doc, backlinks.get(key, 0), link) for key, doc in docs]
    return {"nodes": nodes, "edges": edges}


def _node(key: str, doc: Document, backlinks: int, link: Linker) -> dict[str, Any]:
    return {
        "id": key,
        "name": doc.id,
        "path": doc.path,
        "title": doc.title,
        "type": doc.type,
        "tags": list(dict.fromkeys((*doc.covers, *doc.tags))),
        "backlinks": backlinks,
        "url": link.doc(doc),
    }


def around(data: dict[str, Any], key: str, steps: int) -> dict[str, Any]:
    """The documents at most ``steps`` links away from ``key`` (either direction)."""
    steps = max(1, min(steps, MAX_STEPS))
    near: dict[str, list[str]] = {}
    for edge in data["edges"]:
        near.setdefault(edge["source"], []).append(edge["target"])
        near.setdefault(edge["target"], []).append(edge["source"])
    dist = {key: 0}
    queue = deque([key])
    while queue:
        node = queue.popleft()
        if dist[node] >= steps:
            continue
        for other in near.get(node, ()):
            if other not in dist:
                dist[other] = dist[node] + 1
                queue.append(other)
    return _keep(data, set(dist))


def prerequisites(data: dict[str, Any], kb: Session, doc: Document) -> dict[str, Any]:
    """The document, every step of its full plan and their readings, with the ``requires``
    and ``covers`` edges between them."""
    plan = kb.plan(doc, include_known=True)
    keep = {doc.key} | {s.doc.key for s in plan.steps}
    keep |= {r.doc.key for s in plan.steps for r in s.readings}
    kept = _keep(data, keep)
    kept["edges"] = [e for e in kept["edges"] if e["kind"] in ("requires", "covers")]
    return kept


def _keep(data: dict[str, Any], keys: set[str]) -> dict[str, Any]:
    return {
        "nodes": [n for n in data["nodes"] if n["id"] in keys],
        "edges": [e for e in data["edges"] if e["source"] in keys and e["target"] in keys],
    }
