"""Graph exports: JSON (the contract), GraphML (Gephi), DOT (Graphviz), Mermaid (GitHub).

Every node is named by its unique key (the document's path, ``path#unit`` for a course
unit): ids two documents share would make networkx and d3 merge them. Whole vaults are
too big for some tools: :func:`size_warning` says so before they choke.
"""

from __future__ import annotations

import io
import re
from types import MappingProxyType
from typing import Any

from studykb.graph import to_graphml as write
from studykb.model import Document

#: Edge styles shared by DOT and Mermaid, so the two pictures read the same.
_DOT_STYLE = MappingProxyType(
    {
        "requires": "bold",
        "covers": "dashed",
        "course": "dotted",
        "item": "solid",
        "link": "solid",
        "ref": "solid",
        "related": "dashed",
    }
)


def _docs(graph: Any) -> list[tuple[str, Document]]:
    return sorted(((k, d["doc"]) for k, d in graph.nodes(data=True)), key=lambda kv: kv[0])


def _edges(graph: Any) -> list[tuple[str, str, dict[str, Any]]]:
    return sorted(
        ((u, v, d) for u, v, d in graph.edges(data=True)),
        key=lambda e: (e[0], e[1], e[2]["kind"], e[2]["line"]),
    )


def to_json(graph: Any) -> dict[str, Any]:
    """Nodes ``{id, name, path, title, type, ...}`` with ``id`` the unique key and ``name``
    the document's short id; edges ``{source, target, kind, path, line}`` by key."""
    nodes = [
        {
            "id": key,
            "name": doc.id,
            "path": doc.path,
            "title": doc.title,
            "type": doc.type,
            "key": key,
            "level": doc.level,
            "status": doc.status,
            "tags": list(doc.tags),
        }
        for key, doc in _docs(graph)
    ]
    edges = [
        {"source": u, "target": v, "kind": d["kind"], "path": d["path"], "line": d["line"]}
        for u, v, d in _edges(graph)
    ]
    return {"nodes": nodes, "edges": edges}


#: Above these, ``dot`` takes minutes (a whole vault of a few hundred notes took over 300 s).
DOT_MAX_NODES = 300
DOT_MAX_EDGES = 1000
#: Mermaid's defaults: ``maxEdges`` 500 and ``maxTextSize`` 50,000 characters.
MERMAID_MAX_EDGES = 500
MERMAID_MAX_TEXT = 50_000
_FILTERS = "keep part of it with --type, --tag or --kind"


def size_warning(fmt: str, graph: Any, text: str = "") -> str | None:
    """What to say when the ``fmt`` picture of ``graph`` (written as ``text``) is too big
    for the tool that draws it, or None."""
    nodes, edges = graph.number_of_nodes(), graph.number_of_edges()
    if fmt == "dot" and (nodes > DOT_MAX_NODES or edges > DOT_MAX_EDGES):
        return (
            f"{nodes} nodes and {edges} edges: the file asks for Graphviz's sfdp layout "
            f"(dot's own would take minutes); {_FILTERS} for a layered picture"
        )
    if fmt == "mermaid" and (edges > MERMAID_MAX_EDGES or len(text) > MERMAID_MAX_TEXT):
        return (
            f"{edges} edges and {len(text):,} characters: Mermaid draws at most "
            f"{MERMAID_MAX_EDGES} edges and {MERMAID_MAX_TEXT:,} characters by default; "
            f"{_FILTERS}"
        )
    return None


def to_graphml(graph: Any) -> str:
    buf = io.BytesIO()
    write(graph, buf)
    return buf.getvalue().decode("utf-8")


#: Line breaks and other control characters: one space in a label.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")


def _dot_str(text: str) -> str:
    text = _CONTROL.sub(" ", text)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def to_dot(graph: Any) -> str:
    """Graphviz text that ``dot -Tsvg`` lays out in seconds, whatever the vault's size.

    What makes ``dot`` slow is kept out: the references between two documents are one
    edge (their kinds in its tooltip, its style the first kind's), edges carry no label
    (each would be laid out as a node of its own), and a graph over :data:`DOT_MAX_NODES`
    nodes or :data:`DOT_MAX_EDGES` edges asks for the ``sfdp`` layout itself
    (``layout=sfdp``), so the usual command still draws it.
    """
    merged: dict[tuple[str, str], list[str]] = {}
    for u, v, d in _edges(graph):
        kinds = merged.setdefault((u, v), [])
        if d["kind"] not in kinds:
            kinds.append(d["kind"])
    lines = ["digraph studykb {", "  rankdir=LR;", '  node [shape=box, fontname="sans-serif"];']
    if graph.number_of_nodes() > DOT_MAX_NODES or len(merged) > DOT_MAX_EDGES:
        lines.append("  layout=sfdp; overlap=prism; splines=false; outputorder=edgesfirst;")
    for key, doc in _docs(graph):
        lines.append(
            f"  {_dot_str(key)} [label={_dot_str(doc.title)}, tooltip={_dot_str(doc.id)},"
            f" class={_dot_str(doc.type)}];"
        )
    for (u, v), kinds in merged.items():
        style = _DOT_STYLE.get(kinds[0], "solid")
        tip = _dot_str(", ".join(kinds))
        lines.append(f"  {_dot_str(u)} -> {_dot_str(v)} [tooltip={tip}, style={style}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


_MERMAID_UNSAFE = re.compile(r'["\[\]{}()<>|#;`]')


def _mermaid_label(text: str) -> str:
    return _MERMAID_UNSAFE.sub(lambda m: f"#{ord(m.group(0))};", _CONTROL.sub(" ", text))


def to_mermaid(graph: Any) -> str:
    """A flowchart that renders in GitHub Markdown (wrap it in a mermaid code fence)."""
    ids = {key: f"n{i}" for i, (key, _doc) in enumerate(_docs(graph))}
    lines = ["flowchart LR"]
    for key, doc in _docs(graph):
        lines.append(f'  {ids[key]}["{_mermaid_label(doc.title)}"]')
    for u, v, d in _edges(graph):
        arrow = (
            "-.->"
            if d["kind"] in ("covers", "related")
            else "==>"
            if d["kind"] == "requires"
            else "-->"
        )
        lines.append(f"  {ids[u]} {arrow}|{d['kind']}| {ids[v]}")
    return "\n".join(lines) + "\n"
