"""The graph the browser draws (``/api/graph``, ``graph.json``): nodes with their page,
edges with their kind; the whole vault, a document's neighbourhood, or a plan's
prerequisites.

The whole vault's graph at 10k documents becomes interactive in the browser in about
1.5 s without positions (``graph.js`` lays out clusters itself in ~50 ms, then refines
in a worker), so no layout is computed here.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterable
from json.decoder import scanstring  # type: ignore[attr-defined]
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
    edges, backlinks = _drawn(edges_in)
    nodes = [_node(key, doc, backlinks.get(key, 0), link) for key, doc in docs]
    return {"nodes": nodes, "edges": edges}


def _drawn(edges_in: Iterable[tuple[str, str, str]]) -> tuple[list[dict[str, str]], dict[str, int]]:
    """The edges the graph view draws (known kinds, no loop, each once), and how many
    of them go to each document."""
    edges = []
    seen: set[tuple[str, str, str]] = set()
    backlinks: dict[str, int] = {}
    for source, target, kind in edges_in:
        if kind not in KINDS or source == target or (source, target, kind) in seen:
            continue
        seen.add((source, target, kind))
        edges.append({"source": source, "target": target, "kind": kind})
        backlinks[target] = backlinks.get(target, 0) + 1
    return edges, backlinks


def dumps(data: dict[str, Any]) -> bytes:
    """The graph's data as the site writes it (compact JSON, UTF-8)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()


#: How :func:`dumps` writes the data (and so how :func:`update` reads it): a node's
#: and an edge's first key, what is before the first of each, and between two.
NODE_KEY, EDGE_KEY = '{"id":', '{"source":'
NODES, EDGES, END = '{"nodes":[' + NODE_KEY, '}],"edges":[' + EDGE_KEY, "}]}"
NODE, EDGE = "}," + NODE_KEY, "}," + EDGE_KEY


def update(kb: Session, old: bytes, paths: set[str]) -> bytes | None:
    """:func:`whole`'s data again, as :func:`dumps` writes it, from ``old`` (the last
    site's ``graph.json``) with the edges of the documents in the files ``paths`` made
    again, and the backlink counts of the documents they go to. Valid only when nothing
    else differs since (the same documents, cards and topics:
    :func:`studykb.web.site_inputs.shared` unchanged), so every other document's node
    and edges are the ones written: they are put in the documents' order of now (a
    changed file's documents are the state's last) as written. None when ``old`` is
    not the graph of the same documents.

    The file is read as text cut at the marks JSON puts between nodes and between edges
    (a mark's quote could not be inside a string unescaped). Making it whole reads
    every reference of the vault (about 0.5 s of CPU at 10k documents)."""
    text = old.decode("utf-8", errors="replace")
    at = text.find(EDGES)
    if not text.startswith(NODES) or at < 0 or not text.endswith(END):
        return None
    nodes = {_key(piece): piece for piece in text[len(NODES) : at].split(NODE)}
    docs = kb.documents()
    if nodes.keys() != docs.keys():
        return None
    written: dict[str, list[str]] = {}  # the edges of each source, as written
    for piece in text[at + len(EDGES) : -len(END)].split(EDGE):
        written.setdefault(piece[: piece.index(',"target":')], []).append(piece)
    blocks = {_key(source): pieces for source, pieces in written.items()}
    redo = {key for key, doc in docs.items() if doc.path in paths}
    edges, counts = _drawn(kb.graph_edge_kinds(paths))
    for key in redo:  # the backlinks the edges written made, out
        for piece in blocks.pop(key, ()):
            target = json.loads(EDGE_KEY + piece + "}")["target"]
            counts[target] = counts.get(target, 0) - 1
    for edge in edges:
        blocks.setdefault(edge["source"], []).append(_inside(edge, EDGE_KEY))
    for target, change in counts.items():
        if change:
            node = json.loads(NODE_KEY + nodes[target] + "}")
            node["backlinks"] += change
            nodes[target] = _inside(node, NODE_KEY)
    out = [piece for key in docs for piece in blocks.get(key, ())]
    if not out:
        return None
    return (NODES + NODE.join(nodes[k] for k in docs) + EDGES + EDGE.join(out) + END).encode()


def _key(piece: str) -> str:
    """The first value of a node or an edge as :func:`update` cuts them: its key."""
    return str(scanstring(piece, 1)[0])


def _inside(value: dict[str, Any], first: str) -> str:
    """``value`` as :func:`dumps` writes it, without its opening ``first`` (the brace and
    its first key) and its closing brace."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))[len(first) : -1]


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
