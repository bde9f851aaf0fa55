"""The graph's rows of one document's ranking, kept (a derived structure).

:class:`studykb.related.row_scores.RowGraph` holds the graph features as the engine's
factors: each kind of link either way as sorted rows, the topic, tag and folder groups
with their weights. Making it sorts every pair and reads every path for its folders,
about 0.03 s at 10k documents, in every fresh ``related``, after an edit too, though an
edit of the text leaves every one of them as it was. Here it is a derived structure
(:mod:`studykb.vault.derived`) of the graph features: kept in the cache as the arrays
themselves (each one's bytes, read back with ``numpy.frombuffer`` over the stored bytes,
never decoded item by item: about 8 MB at 10k documents, a few milliseconds to read),
kept after an edit while the features' stamp and the documents' paths (which the stamp
does not name) are the same, made again when they are not.

A speed seam: it trades 8 MB of the cache (written by ``build`` and when the graph
changes) for the sorts of every ``related``. Nothing read executes code: plain msgpack,
each array a dtype from :data:`DTYPES` and its bytes; anything else is a value not kept
(made again). The arrays are the made ones byte for byte, so the rows and the lists are
too (``tests/test_related_row_graph.py``).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

import numpy as np

from studykb.related.features import FEATURES
from studykb.related.row_scores import RowGraph, _Groups, _Rows

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from studykb.related.feature_index import FeatureIndex
    from studykb.vault.derived import Change, Snapshot

#: The array types a kept graph may hold (anything else is not a kept graph).
DTYPES = frozenset({"<i8", "<f8"})


def paths_digest(ix: FeatureIndex) -> str:
    """A name of the documents' paths (the folder groups are read from them)."""
    joined = "\0".join(ix.paths).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(joined, digest_size=16).hexdigest()


class KeptGraph:
    """The graph's rows and the paths they were made with."""

    def __init__(self, graph: RowGraph, paths: str) -> None:
        self.graph, self.paths = graph, paths


def _array(a: NDArray[Any]) -> list[Any]:
    return [a.dtype.str, a.tobytes()]


def _read(data: Any) -> NDArray[Any]:
    kind, raw = data
    if kind not in DTYPES or not isinstance(raw, bytes):
        raise ValueError("not a kept array")
    return np.frombuffer(raw, dtype=np.dtype(kind))


def _rows(rows: _Rows) -> list[Any]:
    return [_array(rows.indptr), _array(rows.indices), _array(rows.data)]


def _read_rows(data: Any) -> _Rows:
    indptr, indices, values = (_read(d) for d in data)
    if len(indices) != len(values) or (len(indptr) and int(indptr[-1]) != len(indices)):
        raise ValueError("not kept rows")
    return _Rows(indptr, indices, values)


def to_data(kept: KeptGraph) -> dict[str, Any]:
    """Plain data for the cache: each array as (dtype, bytes)."""
    out: dict[str, Any] = {}
    for name, value in vars(kept.graph).items():
        if isinstance(value, _Rows):
            out[name] = ["rows", _rows(value)]
        elif isinstance(value, _Groups):
            out[name] = ["groups", [_rows(value.rows), _rows(value.members), _array(value.weight)]]
        elif isinstance(value, np.ndarray):
            out[name] = ["array", _array(value)]
        else:
            raise TypeError(f"a graph's {name} is not an array")
    return {"paths": kept.paths, "graph": out}


def from_data(data: Any) -> KeptGraph:
    """The graph :func:`to_data` stored (a ``ValueError`` when it is not one)."""
    graph = RowGraph.__new__(RowGraph)
    stored = data["graph"]
    if not isinstance(stored, dict) or set(stored) != set(RowGraph.PARTS):
        raise ValueError("not a kept graph")
    for name, (kind, value) in stored.items():
        if kind == "rows":
            part: Any = _read_rows(value)
        elif kind == "groups":
            rows, members, weight = value
            part = _Groups(_read_rows(rows), _read_rows(members), _read(weight))
        elif kind == "array":
            part = _read(value)
        else:
            raise ValueError("not a kept graph")
        setattr(graph, name, part)
    return KeptGraph(graph, str(data["paths"]))


class RowGraphSpec:
    """:class:`RowGraph` of the graph features, as a derived structure: kept while the
    features' stamp and the paths are the same (an edit of the text), made again else."""

    name = "related-rows-graph"
    made_by = (
        "studykb.related.row_graph",
        "studykb.related.row_scores",
        "studykb.related.components",
        "studykb.related.feature_index",
        "studykb.related.mentions",
        "studykb.related.weights",
    )
    inputs = (FEATURES,)

    def build(self, vault: Snapshot) -> KeptGraph:
        ix = vault.derived(FEATURES)
        return KeptGraph(RowGraph(ix, len(ix.keys)), paths_digest(ix))

    def update(self, value: KeptGraph, change: Change, vault: Snapshot) -> KeptGraph | None:
        if change.inputs or value.paths != paths_digest(vault.derived(FEATURES)):
            return None
        return value

    def stamp(self, value: KeptGraph) -> str | None:
        return None

    def dump(self, value: KeptGraph) -> dict[str, Any]:
        return to_data(value)

    def load(self, data: Any) -> KeptGraph:
        return from_data(data)


ROW_GRAPH = RowGraphSpec()
