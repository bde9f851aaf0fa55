"""Small sparse-matrix helpers the engine's components are made with (scipy.sparse)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from studykb.related.weights import inv_sqrt as inv_sqrt  # the engine takes it from here

if TYPE_CHECKING:
    from numpy.typing import NDArray

Csr = Any
"""A ``scipy.sparse.csr_matrix`` (scipy ships no type information)."""


def csr(
    rows: NDArray[np.int64],
    cols: NDArray[np.int64],
    vals: NDArray[np.float64],
    shape: tuple[int, int],
) -> Csr:
    made = sp.csr_matrix((vals, (rows, cols)), shape=shape)
    made.sum_duplicates()
    return made


def replace_rows(m: Csr, rows: list[int], new: Csr) -> Csr:
    """``m`` with the rows ``rows`` those of ``new`` (its other rows empty), in canonical
    form (each row's columns sorted, as :func:`csr` makes them)."""
    if not rows:
        return m
    counts = np.diff(m.indptr)
    of = np.repeat(np.arange(m.shape[0], dtype=np.int64), counts)
    keep = ~np.isin(of, np.asarray(rows, dtype=np.int64))
    new = sp.csr_matrix(new)
    new_of = np.repeat(np.arange(new.shape[0], dtype=np.int64), np.diff(new.indptr))
    return csr(
        np.concatenate([of[keep], new_of]),
        np.concatenate([m.indices[keep], new.indices]).astype(np.int64),
        np.concatenate([m.data[keep], new.data]),
        m.shape,
    )


def scale_cols(m: Csr, w: NDArray[np.float64]) -> Csr:
    return sp.csr_matrix(m @ sp.diags(w))


def scale_rows(m: Csr, w: NDArray[np.float64]) -> Csr:
    return sp.csr_matrix(sp.diags(w) @ m)


def top_per_row(m: Csr, k: int) -> Csr:
    """The ``k`` largest entries of each row (ties by column), the rest dropped."""
    m = sp.csr_matrix(m)
    m.eliminate_zeros()
    counts = np.diff(m.indptr)
    if counts.max(initial=0) <= k:
        return m
    keep = np.zeros(len(m.data), dtype=bool)
    for r in np.nonzero(counts > 0)[0]:
        a, b = m.indptr[r], m.indptr[r + 1]
        if b - a <= k:
            keep[a:b] = True
            continue
        order = np.lexsort((m.indices[a:b], -m.data[a:b]))[:k]
        keep[a + order] = True
    rows = np.repeat(np.arange(m.shape[0]), counts)
    return csr(rows[keep], m.indices[keep].astype(np.int64), m.data[keep], m.shape)
