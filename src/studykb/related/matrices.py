"""How the engine's membership and mention matrices are made (document x group, document
x named document), each column weighted by how few documents share it: something most
documents share says little about two of them."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from studykb.related.feature_index import HUB_CAP
from studykb.related.mentions import unpack as unpack_mentions
from studykb.related.packed import Rows
from studykb.related.sparse import Csr, csr, scale_cols

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from studykb.related.feature_index import FeatureIndex
    from studykb.related.textsim import TermVectors


def groups(rows_of: Sequence[Sequence[int]] | Rows, n: int, width: int) -> Csr:
    """Membership (document x group) weighted 1/sqrt(log(1 + members)): the product of
    two rows is the Adamic-Adar sum over what they share; groups of more than
    :data:`HUB_CAP` members count for nothing."""
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
    w = np.zeros_like(size)
    ok = (size > 0) & (size <= HUB_CAP)
    w[ok] = 1.0 / np.sqrt(np.log1p(size[ok]))
    return scale_cols(m, w)


def flat_rows(data: Sequence[bytes], width: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Packed rows of int32 tuples of ``width`` values each (:mod:`studykb.related.packed`)
    as (row of each tuple, the tuples: one line each), in stored order."""
    lengths = np.fromiter((len(d) for d in data), dtype=np.int64, count=len(data))
    values = np.frombuffer(b"".join(data), dtype=np.int32).astype(np.int64)
    rows = np.repeat(np.arange(len(data), dtype=np.int64), lengths // (4 * width))
    return rows, values.reshape(-1, width)


def folders(paths: Sequence[str]) -> tuple[list[list[int]], int]:
    """Each document's folder (the folder its file is in; none at the top of the vault)
    as a group number, and how many folders there are."""
    number: dict[str, int] = {}
    rows: list[list[int]] = []
    for path in paths:
        folder = path.rpartition("/")[0]
        rows.append([number.setdefault(folder, len(number))] if folder else [])
    return rows, len(number)


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
    n = made.shape[0]
    named = np.diff(made.tocsc().indptr).astype(np.float64)
    w = np.zeros_like(named)
    ok = named > 0
    w[ok] = np.log((n + 1) / named[ok]) / np.log(n + 1)
    return scale_cols(made, w)


def _none() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    empty = np.zeros(0, dtype=np.int64)
    return empty, empty, np.zeros(0)
