"""The weights the engine's matrices are scaled by, from counts over the whole vault, and
the packed rows they are counted from (numpy only: the engine, :mod:`studykb.related.engine`,
and the rows of a few documents, :mod:`studykb.related.row_scores`, compute them with the
same expressions over the same arrays, so the two give the same numbers bit for bit)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from studykb.related.feature_index import HUB_CAP

if TYPE_CHECKING:
    from numpy.typing import NDArray


def inv_sqrt(counts: NDArray[np.float64], cap: float | None = None) -> NDArray[np.float64]:
    """``1 / sqrt(count)`` where the count is above 0 (and at most ``cap``), else 0."""
    out = np.zeros_like(counts, dtype=np.float64)
    ok = counts > 0
    if cap is not None:
        ok &= counts <= cap
    out[ok] = 1.0 / np.sqrt(counts[ok])
    return out


def group_weights(size: NDArray[np.float64]) -> NDArray[np.float64]:
    """Each group's weight by its number of members, ``1 / sqrt(log(1 + members))``: the
    product of two membership rows is the Adamic-Adar sum over what they share; groups of
    more than :data:`HUB_CAP` members count for nothing."""
    w = np.zeros_like(size)
    ok = (size > 0) & (size <= HUB_CAP)
    w[ok] = 1.0 / np.sqrt(np.log1p(size[ok]))
    return w


def mention_weights(named: NDArray[np.float64], n: int) -> NDArray[np.float64]:
    """Each document's weight as a named one, by how many of the ``n`` documents name it:
    1 for a document one other names, towards 0 for one everybody names."""
    w = np.zeros_like(named)
    ok = named > 0
    w[ok] = np.log((n + 1) / named[ok]) / np.log(n + 1)
    return w


def flat_rows(data: Sequence[bytes], width: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Packed rows of int32 tuples of ``width`` values each (:mod:`studykb.related.packed`)
    as (row of each tuple, the tuples: one line each), in stored order."""
    lengths = np.fromiter(map(len, data), dtype=np.int64, count=len(data))
    values = np.frombuffer(b"".join(data), dtype=np.int32).astype(np.int64)
    rows = np.repeat(np.arange(len(data), dtype=np.int64), lengths // (4 * width))
    return rows, values.reshape(-1, width)


#: A folder above a file's own counts as a section of the vault while it holds at most
#: this share of the documents (fitted on the tuning collections: 0.5 against no limit,
#: ``benchmarks/RESULTS.md``, h/quality2).
ANCESTOR_SHARE = 0.5


def folders(paths: Sequence[str]) -> tuple[list[list[int]], int]:
    """Each document's folders as group numbers, and how many folders there are: the
    folder its file is in and every folder above it (none for the top of the vault), so
    that two pages of one section of a book are siblings however deep their files sit
    (``pwn/linux/stack/rop.md`` and ``pwn/linux/heap/tcache.md`` share ``pwn/linux`` and
    ``pwn``; :func:`group_weights` lets a big folder say little). A folder above the
    file's own that holds more than :data:`ANCESTOR_SHARE` of the documents is the
    vault's content root (``notes/``), not a section, and is left out; so is a folder of
    more than :data:`HUB_CAP` pages, which would count for nothing (at 10k documents it
    would otherwise be multiplied through for nothing)."""
    above: list[list[str]] = []
    size: dict[str, int] = {}
    for path in paths:
        folder = path.rpartition("/")[0]
        mine: list[str] = []
        while folder:
            mine.append(folder)
            size[folder] = size.get(folder, 0) + 1
            folder = folder.rpartition("/")[0]
        above.append(mine)
    most = ANCESTOR_SHARE * len(paths)
    number: dict[str, int] = {}
    rows = [
        [
            number.setdefault(f, len(number))
            for k, f in enumerate(mine)
            if size[f] <= HUB_CAP and (k == 0 or size[f] <= most)
        ]
        for mine in above
    ]
    return rows, len(number)


def shared_folder(a: str, b: str) -> str:
    """The deepest folder the files ``a`` and ``b`` are both in ("" for none)."""
    mine, theirs = a.split("/")[:-1], b.split("/")[:-1]
    same = 0
    while same < min(len(mine), len(theirs)) and mine[same] == theirs[same]:
        same += 1
    return "/".join(mine[:same])
