"""Many related lists at once: a scored block made into lists with whole-array steps.

:meth:`studykb.related.rank.Ranker.order` makes one row of a block into a list; for a
block of hundreds of documents its few numpy calls per row cost more than the arithmetic.
:func:`order_block` gives the same lists for every row of a block (the same candidates,
the same order, the same numbers), sorting the whole block once: the candidates a row may
show (a ranked type, a score above 0, not hand-picked), ordered by row, then score
(highest first), then node number, and the first ``room`` of each row kept. Only lists
without diversity are made this way; with diversity the caller orders row by row
(maximal marginal relevance is sequential).

This is a speed seam only: what is ranked and how is :meth:`Ranker.order`'s, and a test
compares the two on every row (``tests/test_related_batch.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from studykb.related.components import COMPONENTS
from studykb.related.scoring import Block

if TYPE_CHECKING:
    from studykb.related.rank import Ranked, Ranker, RelatedOptions


def order_block(ranker: Ranker, block: Block, options: RelatedOptions) -> list[list[Ranked]]:
    """Every row of ``block`` as :meth:`Ranker.order` makes it (``options.diversity`` 0)."""
    from studykb.related.rank import Ranked  # deferred: an import cycle (rank uses this module)

    ix = ranker.ix
    n_rows = len(block.rows)
    types = options.types
    limit = options.limit
    allowed = ranker._allowed(types)
    starts, cols, score, evidence = block.starts, block.cols, block.score, block.evidence
    row_of = np.repeat(np.arange(n_rows, dtype=np.int64), np.diff(starts))
    out: list[list[Ranked]] = [[] for _ in range(n_rows)]
    room = np.full(n_rows, limit, dtype=np.int64)
    skip: list[int] = []  # row * n + node of the hand-picked ones
    width = max(len(ix.keys), int(cols.max()) + 1 if len(cols) else 0, 1)
    for r, i in enumerate(block.rows.tolist()):
        mine = ix.picked[i]
        if not mine:
            continue
        picked = [j for j in mine if j != i and (not types or ix.types[j] in types)]
        a, b = int(starts[r]), int(starts[r + 1])
        row_cols = cols[a:b]
        for k, j in enumerate(picked):
            n = int(np.searchsorted(row_cols, j))
            found = n < len(row_cols) and row_cols[n] == j
            feats = {"picked": 1.0, **(_evidence(evidence[a + n].tolist()) if found else {})}
            relevance = float(score[a + n]) if found else 0.0
            out[r].append(Ranked(j, 1.0 + (len(picked) - k) / len(picked), relevance, feats))
            skip.append(r * width + j)
        room[r] = max(0, limit - len(picked))
    ok = allowed[cols] & (score > 0)
    if skip:
        ok &= ~np.isin(row_of * width + cols, np.asarray(skip, dtype=np.int64))
    cand = np.nonzero(ok)[0]
    cand = cand[np.lexsort((cols[cand], -score[cand], row_of[cand]))]
    rows = row_of[cand]
    first = np.searchsorted(rows, np.arange(n_rows + 1))
    place = np.arange(len(cand)) - first[rows]
    cand = cand[place < room[rows]]
    chosen_rows = row_of[cand].tolist()
    chosen_cols = cols[cand].tolist()
    chosen_score = score[cand].tolist()
    chosen_evidence = _evidence_dicts(evidence[cand])
    for r, j, s, ev in zip(chosen_rows, chosen_cols, chosen_score, chosen_evidence, strict=True):
        out[r].append(Ranked(j, s, s, ev))
    return [found[:limit] for found in out]


def _evidence(row: list[float]) -> dict[str, float]:
    return {name: v for name, v in zip(COMPONENTS, row, strict=True) if v > 0}


def _evidence_dicts(evidence: np.ndarray) -> list[dict[str, float]]:
    """:func:`_evidence` of every row of ``evidence`` (component -> value, above 0, in
    the order of :data:`COMPONENTS`), the nonzero entries found at once."""
    rows, comps = np.nonzero(evidence > 0)  # row by row, components in order
    names = np.asarray(COMPONENTS, dtype=object)[comps].tolist()
    values = evidence[rows, comps].tolist()
    bounds = np.searchsorted(rows, np.arange(len(evidence) + 1)).tolist()
    return [
        dict(zip(names[a:b], values[a:b], strict=True))
        for a, b in zip(bounds, bounds[1:], strict=False)
    ]
