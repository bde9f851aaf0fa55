"""How the engine's membership and mention matrices are made (document x group, document
x named document), each column weighted by how few documents share it: something most
documents share says little about two of them."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from studykb.related.mentions import unpack as unpack_mentions
from studykb.related.packed import Rows
from studykb.related.sparse import Csr, csr, scale_cols
from studykb.related.weights import flat_rows, group_weights, mention_weights

if TYPE_CHECKING:
    from studykb.related.feature_index import FeatureIndex
    from studykb.related.textsim import TermVectors


def groups(rows_of: Sequence[Sequence[int]] | Rows, n: int, width: int) -> Csr:
    """Membership (document x group) weighted by :func:`group_weights`."""
    if isinstance(rows_of, Rows):
        r, c = flat_rows(rows_of.data[:n], 1)
    else:
        rows: list[int] = []
        cols: list[int] = []
        for i in range(n):
            got = rows_of[i]
            rows.extend([i] * len(got))
            cols.extend(got)
        r = np.asarray(rows, dtype=np.int64)
        c = np.asarray(cols, dtype=np.int64)
    m = csr(r, c[:, 0] if c.ndim == 2 else c, np.ones(len(r)), (n, max(width, 1)))
    m.data[:] = 1.0
    size = np.asarray(m.sum(axis=0)).ravel()
    return scale_cols(m, group_weights(size))


def mentions(ix: FeatureIndex, tv: TermVectors | None) -> Csr:
    """Who names whom: ``1 + log(times named)``, each named document weighted by how few
    name it (1 for a document one other names, towards 0 for one everybody names)."""
    return weigh_mentions(mention_counts(ix, tv))


def mention_counts(
    ix: FeatureIndex, tv: TermVectors | None, nodes: Iterable[int] | None = None
) -> Csr:
    """``1 + log(times named)`` of who names whom, unweighted (of ``nodes`` only: the
    other rows empty)."""
    n = len(ix.keys)
    if tv is None:
        return csr(*_none(), (n, n))
    number = ix.number
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    for i in range(n) if nodes is None else nodes:
        m = tv.number.get(ix.keys[i])
        if m is None or m >= len(tv.mentions):
            continue
        for target, count in unpack_mentions(tv.mentions[m]):
            j = number.get(target)
            if j is not None and j != i:
                rows.append(i)
                cols.append(j)
                vals.append(1.0 + math.log(max(count, 1)))
    return csr(
        np.asarray(rows, dtype=np.int64),
        np.asarray(cols, dtype=np.int64),
        np.asarray(vals, dtype=np.float64),
        (n, n),
    )


def weigh_mentions(made: Csr) -> Csr:
    """:func:`mention_counts` with each named document weighted by how few name it."""
    named = np.diff(made.tocsc().indptr).astype(np.float64)
    return scale_cols(made, mention_weights(named, made.shape[0]))


def _none() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    empty = np.zeros(0, dtype=np.int64)
    return empty, empty, np.zeros(0)
