"""Scoring a block of documents with the engine's components (:mod:`studykb.related.engine`,
or for a few documents :mod:`studykb.related.row_scores`): every component of every row at
once, saturated and blended into one score per candidate."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

from studykb.related.components import ALONGSIDE, ALONGSIDE_SHARE, COMPONENTS, HALF, Weights

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from studykb.related.row_scores import Part


class Scores(Protocol):
    """What the scoring reads of an engine: its size and the entries of its components."""

    n: int

    def entries(self, rows: NDArray[np.int64], text: bool = True) -> dict[str, Part]: ...


@dataclass
class Block:
    """The scored candidates of a block of documents: one entry per (row, candidate),
    rows in order, candidates by node number, with the evidence of each component."""

    rows: NDArray[np.int64]
    starts: NDArray[np.int64]
    """Row r's candidates are ``cols[starts[r]:starts[r + 1]]``."""
    cols: NDArray[np.int64]
    score: NDArray[np.float64]
    """The weighted mean of the evidence, in [0, 1]."""
    evidence: NDArray[np.float64]
    """(candidate entry, component) evidence in [0, 1), components as :data:`COMPONENTS`."""


def score_block(
    engine: Scores,
    rows: NDArray[np.int64],
    weights: Weights,
    text: dict[int, list[tuple[int, float]]] | None = None,
) -> Block:
    """Score the documents ``rows``: every component, saturated, blended.

    ``text``: row number -> (node, similarity) replacing the text component (another text
    provider, the search index's more-like-this); with a text weight of 0 no text is
    computed at all.
    """
    w = weights.by_name()
    use_text = w.get("text", 0.0) > 0 and text is None
    parts = engine.entries(rows, text=use_text)
    if text is not None and w.get("text", 0.0) > 0:
        parts["text"] = _given_text(text, len(rows), engine.n)
    all_r: list[NDArray[np.int64]] = []
    all_c: list[NDArray[np.int64]] = []
    all_k: list[NDArray[np.int64]] = []
    all_v: list[NDArray[np.float64]] = []
    for kind, name in enumerate(COMPONENTS):
        part = parts.get(name)
        if part is None or w.get(name, 0.0) <= 0:
            continue
        p_row, p_col, p_data = part
        keep = (p_data > 0) & (p_col != rows[p_row])
        value = p_data[keep]
        all_r.append(p_row[keep].astype(np.int64))
        all_c.append(p_col[keep].astype(np.int64))
        all_k.append(np.full(len(value), kind, dtype=np.int64))
        half = HALF[name]
        all_v.append(value / (value + half) if half else np.minimum(value, 1.0))
    if not all_r:
        empty = np.zeros(0, dtype=np.int64)
        return Block(
            rows,
            np.zeros(len(rows) + 1, dtype=np.int64),
            empty,
            empty.astype(float),
            np.zeros((0, len(COMPONENTS))),
        )
    r = np.concatenate(all_r)
    c = np.concatenate(all_c)
    k = np.concatenate(all_k)
    v = np.concatenate(all_v)
    order = np.lexsort((k, c, r))
    r, c, k, v = r[order], c[order], k[order], v[order]
    pair = np.empty(len(r), dtype=bool)
    pair[:1] = True
    pair[1:] = (r[1:] != r[:-1]) | (c[1:] != c[:-1])
    entry = np.cumsum(pair) - 1
    cols = c[pair]
    evidence = np.zeros((len(cols), len(COMPONENTS)))
    evidence[entry, k] = v
    vector = np.array([w.get(name, 0.0) for name in COMPONENTS])
    score = _alongside(evidence, vector) / weights.total()
    starts = np.searchsorted(r[pair], np.arange(len(rows) + 1))
    return Block(rows, starts.astype(np.int64), cols, score, evidence)


def _alongside(evidence: NDArray[np.float64], vector: NDArray[np.float64]) -> NDArray[np.float64]:
    """The weighted sum of the evidence, the components of :data:`ALONGSIDE` counted only
    where another component has evidence too, and for at most :data:`ALONGSIDE_SHARE`
    of the pair's sum."""
    weighted = evidence * vector
    side = np.array([name in ALONGSIDE for name in COMPONENTS])
    other = weighted[:, ~side].sum(axis=1)
    extra = np.minimum(
        weighted[:, side].sum(axis=1), other * ALONGSIDE_SHARE / (1 - ALONGSIDE_SHARE)
    )
    return np.asarray(other + extra, dtype=np.float64)


def _given_text(text: dict[int, list[tuple[int, float]]], n_rows: int, n: int) -> Part:
    """Another provider's text matches (row -> (node, similarity)) as entries, a node
    given twice for a row summed."""
    # deferred: scipy.sparse, for the search index's more-like-this only
    from studykb.related.sparse import csr

    made = csr(
        np.asarray([r for r, found in text.items() for _j, _s in found], dtype=np.int64),
        np.asarray([j for found in text.values() for j, _s in found], dtype=np.int64),
        np.asarray([s for found in text.values() for _j, s in found], dtype=np.float64),
        (n_rows, n),
    ).tocoo()
    return made.row.astype(np.int64), made.col.astype(np.int64), made.data
