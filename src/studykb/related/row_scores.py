"""The engine's numbers for a few documents, made from its inputs with numpy alone.

A fresh ``studykb related ID`` ranks one document. The engine (:mod:`studykb.related.engine`)
holds every component as a sparse matrix of the whole vault: loading it means importing
scipy.sparse (about 0.13 s), decoding its 13.5 MB entry and, after an edit, making its
matrices again, all for one row of each product. :class:`RowEngine` gives the same rows
from the graph features and the text vectors directly: the few counts of the whole vault
the products are weighted by (degrees, group sizes, how many documents name a document or
hold a term) as numpy arrays, then each product for the rows asked for only.

The numbers are the engine's bit for bit, so the lists and their order are too: every
weight is computed by the same numpy expression over the same whole array as the engine
computes it, and each product's sum is taken in the order scipy takes it (the left
factor's row in the order the engine's matrix stores it, which for a matrix scaled by a
diagonal is the reverse of its source's order; see each product below).
``tests/test_related_rows.py`` compares every component of every row with the engine's.
This is a speed seam: what is scored and how is the engine's.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from itertools import chain, repeat
from typing import TYPE_CHECKING, Any

import numpy as np

from studykb.related.components import MAX_POSTING, TEXT_POOL
from studykb.related.feature_index import COCITE_MAX, COURSE_BIT, HUB_CAP, KIND_BITS
from studykb.related.mentions import unpack as unpack_mentions
from studykb.related.weights import flat_rows, folders, group_weights, inv_sqrt, mention_weights

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from studykb.related.feature_index import FeatureIndex
    from studykb.related.textsim import TermVectors

Part = tuple["NDArray[np.int64]", "NDArray[np.int64]", "NDArray[np.float64]"]
"""One component of a block of rows: (row in the block, column, value) of each entry."""


@dataclass(frozen=True)
class _Rows:
    """A sparse matrix in canonical CSR form (each row's columns ascending), numpy only."""

    indptr: NDArray[np.int64]
    indices: NDArray[np.int64]
    data: NDArray[np.float64]

    @classmethod
    def of(
        cls,
        rows: NDArray[np.int64],
        cols: NDArray[np.int64],
        n_rows: int,
        data: NDArray[np.float64] | None = None,
    ) -> _Rows:
        """From (row, column) pairs, none twice; ``data`` by pair (default 1.0)."""
        width = int(cols.max()) + 1 if len(cols) else 1
        key = rows * width + cols
        order = _pair_order(rows, cols, key, n_rows, width)
        values = np.ones(len(key)) if data is None else data
        if order is not None:
            key, values = key[order], values[order]
        indptr = np.zeros(n_rows + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=n_rows), out=indptr[1:])
        return cls(indptr, key % width, values)

    def row(self, i: int) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        a, b = self.indptr[i], self.indptr[i + 1]
        return self.indices[a:b], self.data[a:b]

    def with_data(self, data: NDArray[np.float64]) -> _Rows:
        return _Rows(self.indptr, self.indices, data)

    def rows_of(self) -> NDArray[np.int64]:
        """The row of each entry."""
        return np.repeat(np.arange(len(self.indptr) - 1, dtype=np.int64), np.diff(self.indptr))


#: Rows and columns below this many fit in 16 bits (a vault of up to 65,536 documents).
SMALL = 1 << 16


def _pair_order(
    rows: NDArray[np.int64],
    cols: NDArray[np.int64],
    key: NDArray[np.int64],
    n_rows: int,
    width: int,
) -> NDArray[np.int64] | None:
    """The order that sorts (row, column) pairs (``key``: ``row * width + column``),
    None when they are in order already. A speed seam: pairs of 16-bit rows and columns
    are ordered by numpy's stable sort of 16-bit integers (a radix sort), by column,
    then by row (only by row when the columns come ascending, as the transpose of rows
    in order has them), 2-5 times faster than sorting the 64-bit keys; the keys come out
    the same, as they do from any sort (a pair given twice is the same key twice)."""
    if len(key) < 2 or bool(np.all(key[1:] > key[:-1])):
        return None
    if n_rows > SMALL or width > SMALL:
        return np.argsort(key)
    if bool(np.all(cols[1:] >= cols[:-1])):
        return np.argsort(rows.astype(np.uint16), kind="stable")
    order = np.argsort(cols.astype(np.uint16), kind="stable")
    return order[np.argsort(rows[order].astype(np.uint16), kind="stable")]


def _times(
    cols: NDArray[np.int64], vals: NDArray[np.float64], m: _Rows, width: int
) -> NDArray[np.float64]:
    """The row (``cols``, ``vals``) times ``m``, dense: each sum taken in the order of
    ``cols`` (then of ``m``'s rows), as scipy's CSR product takes it."""
    starts = m.indptr[cols]
    counts = m.indptr[cols + 1] - starts
    total = int(counts.sum())
    if not total:
        return np.zeros(width)
    take = np.repeat(starts - (np.cumsum(counts) - counts), counts) + np.arange(total)
    products = np.repeat(vals, counts) * m.data[take]
    return _sums(m.indices[take], products, width)


def _sums(at: NDArray[np.int64], values: NDArray[np.float64], width: int) -> NDArray[np.float64]:
    """``values`` summed by place, one after the other in their order (dense)."""
    return np.bincount(at, weights=values, minlength=width).astype(np.float64, copy=False)


def _kept(
    cols: NDArray[np.int64], vals: NDArray[np.float64]
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """The entries that are not zero (scipy keeps no zero a product or a scaling makes)."""
    ok = vals != 0
    return cols[ok], vals[ok]


def _entries(dense: NDArray[np.float64]) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    cols = np.nonzero(dense)[0]
    return cols, dense[cols]


class RowGraph:
    """The graph features as the engine's factors (``ix.out`` read once, vectorised): a
    value of its own, kept in the cache while the features are the same
    (:mod:`studykb.related.row_graph`)."""

    #: What it holds (:mod:`studykb.related.row_graph` keeps each).
    PARTS = (
        *("L", "LT", "citer", "a", "q", "BT", "Q", "R", "RT", "r_in", "r_out", "RinT"),
        *("Rout", "topics", "tags", "folder", "course", "courses"),
    )

    def __init__(self, ix: FeatureIndex, n: int) -> None:
        src, pairs = flat_rows(ix.out.data[:n], 2)
        dst, bits = pairs[:, 0].copy(), pairs[:, 1].copy()
        linked = (bits & ~COURSE_BIT) != 0
        self.L = _Rows.of(src[linked], dst[linked], n)
        self.LT = _Rows.of(dst[linked], src[linked], n)
        out_deg = np.diff(self.L.indptr).astype(np.float64)
        in_deg = np.diff(self.LT.indptr).astype(np.float64)
        self.citer = (out_deg <= COCITE_MAX).astype(np.float64)
        self.a = inv_sqrt(in_deg, HUB_CAP)
        """A cited document's weight in coupling (B's column scale)."""
        self.q = inv_sqrt(out_deg) * self.citer
        """A citing document's weight in co-citation (Q's row scale)."""
        lt_of = self.LT.rows_of()
        self.BT = self.LT.with_data(self.citer[self.LT.indices] * (1.0 * self.a[lt_of]))
        self.Q = self.L.with_data(self.q[self.L.rows_of()] * 1.0)
        req = (bits & KIND_BITS["requires"]) != 0
        self.R = _Rows.of(src[req], dst[req], n)
        self.RT = _Rows.of(dst[req], src[req], n)
        self.r_in = inv_sqrt(np.diff(self.RT.indptr).astype(np.float64))
        self.r_out = inv_sqrt(np.diff(self.R.indptr).astype(np.float64))
        self.RinT = self.RT.with_data(1.0 * self.r_in[self.RT.rows_of()])
        self.Rout = self.R.with_data(self.r_out[self.R.rows_of()] * 1.0)
        self.topics = _Groups.of_rows(ix.topics.data[:n], n, n)
        self.tags = _Groups.of_rows(ix.tag_ids.data[:n], n, len(ix.tag_names))
        in_folder, width = folders(ix.paths)
        self.folder = _Groups.of_lists(in_folder, n, width)
        self.course = np.asarray(ix.course[:n], dtype=np.int64)
        is_course = map("course".__eq__, ix.types[:n])
        self.courses = np.nonzero(np.fromiter(is_course, dtype=bool, count=n))[0]


@dataclass(frozen=True)
class _Groups:
    """Membership (document x group) weighted as :func:`studykb.related.matrices.groups`
    weighs it: ``rows`` each document's groups (ascending), ``members`` each group's."""

    rows: _Rows
    members: _Rows
    weight: NDArray[np.float64]

    @classmethod
    def of_rows(cls, data: list[bytes], n: int, width: int) -> _Groups:
        r, c = flat_rows(data, 1)
        return cls._made(r, c[:, 0], n, width)

    @classmethod
    def of_lists(cls, lists: list[list[int]], n: int, width: int) -> _Groups:
        sizes = np.fromiter(map(len, lists[:n]), dtype=np.int64, count=n)
        r = np.repeat(np.arange(n, dtype=np.int64), sizes)
        c = np.fromiter(chain.from_iterable(lists[:n]), dtype=np.int64, count=int(sizes.sum()))
        return cls._made(r, c, n, width)

    @classmethod
    def _made(cls, r: NDArray[np.int64], c: NDArray[np.int64], n: int, width: int) -> _Groups:
        width = max(width, 1)
        pairs = r * width + c  # a group listed twice counts once (np.unique: numpy.ma)
        order = _pair_order(r, c, pairs, n, width)
        pairs = pairs if order is None else pairs[order]
        pairs = pairs[np.concatenate([[True], pairs[1:] != pairs[:-1]])] if len(pairs) else pairs
        r, c = pairs // width, pairs % width
        size = np.bincount(c, minlength=width).astype(np.float64)
        weight = group_weights(size)
        members = _Rows.of(c, r, width)
        members = members.with_data(1.0 * weight[members.rows_of()])
        return cls(_Rows.of(r, c, n), members, weight)

    def product(self, i: int, n: int) -> NDArray[np.float64]:
        """Row ``i`` of the membership times its transpose: the engine's matrix stores a
        document's groups in descending order (a scaled matrix), so they are summed so."""
        groups = self.rows.row(i)[0][::-1]
        return _times(*_kept(groups, 1.0 * self.weight[groups]), self.members, n)


class _Mentions:
    """Who names whom (the engine's ``Mraw``) read a row or a column at a time, and each
    named document's weight, by how many documents name it (the counts kept with the
    mentions, :func:`_named`): every document's mentions joined into one string; a row
    is its document's mentions read, a column the places its key is found at. (Where
    some key holds a separator, every mention is read as :func:`_mention_entries` reads
    them.)"""

    def __init__(self, ix: FeatureIndex, tv: TermVectors | None, n: int) -> None:
        self._number, self._keys = ix.number, ix.keys
        naming, texts = _naming(ix, tv, n)
        self._naming = np.asarray(naming, dtype=np.int64)
        self._text_of = dict(zip(naming, texts, strict=True))
        joined = "\x1e".join(texts)
        self._full: tuple[_Rows, _Rows] | None = None
        named = np.zeros(n)
        if texts and joined.count("\x1f") != joined.count("\x1e") + 1:
            r, c, v = _mention_entries(ix, tv, n)
            self._full = (_Rows.of(r, c, n, v), _Rows.of(c, r, n, v))
            named = np.diff(self._full[1].indptr).astype(np.float64)
        elif texts:
            named = _named(ix, tv, n) if tv is not None else named
        self._joined = "\x1e" + joined
        self._starts = np.cumsum([0, *(len(t) + 1 for t in texts[:-1])], dtype=np.int64)
        """Where each text begins in :attr:`_joined` (at the separator before it)."""
        self.weight = mention_weights(named, n)

    def row(self, i: int) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """Row ``i`` of ``Mraw``: whom node ``i`` names, and ``1 + log(times)``."""
        if self._full is not None:
            return self._full[0].row(i)
        number = self._number
        found: dict[int, float] = {}
        for target, times in unpack_mentions(self._text_of.get(i, "")):
            j = number.get(target)
            if j is not None and j != i:
                found[j] = 1.0 + math.log(max(times, 1))
        cols = np.asarray(sorted(found), dtype=np.int64)
        return cols, np.asarray([found[j] for j in cols.tolist()], dtype=np.float64)

    def column(self, i: int) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """Column ``i`` of ``Mraw``: who names node ``i``, and ``1 + log(times)``."""
        if self._full is not None:
            return self._full[1].row(i)
        key, joined = self._keys[i], self._joined
        found: dict[int, float] = {}
        if "\x1e" not in key and "\x1f" not in key:  # else no key split as unpack splits
            needle = f"\x1e{key}\x1f"
            at = joined.find(needle)
            while at >= 0:
                source = int(self._naming[np.searchsorted(self._starts, at, side="right") - 1])
                begin = at + len(needle)
                end = joined.find("\x1e", begin)
                times = int(joined[begin : end if end >= 0 else len(joined)])
                if source != i:
                    found[source] = 1.0 + math.log(max(times, 1))
                at = joined.find(needle, begin)
        cols = np.asarray(sorted(found), dtype=np.int64)
        return cols, np.asarray([found[s] for s in cols.tolist()], dtype=np.float64)


def _named(ix: FeatureIndex, tv: TermVectors, n: int) -> NDArray[np.float64]:
    """How many documents name each node: the counts kept with the mentions
    (:attr:`TermVectors.named`) when the vectors hold the nodes' documents and no other,
    else every document's mentions counted (no key holds a separator here)."""
    number = ix.number
    named = np.zeros(n)
    if len(tv.number) == n and all(map(tv.number.__contains__, ix.keys[:n])):
        for key, times in tv.named.items():
            j = number.get(key)
            if j is not None:
                named[j] = times
        return named
    naming, texts = _naming(ix, tv, n)
    joined = "\x1e".join(texts)
    for key, times in Counter(joined.replace("\x1f", "\x1e").split("\x1e")[::2]).items():
        j = number.get(key)
        if j is not None:
            named[j] = times
    for i, text in zip(naming, texts, strict=True):  # nobody names itself, as counted
        if ix.keys[i] in text and ("\x1e" + text).find(f"\x1e{ix.keys[i]}\x1f") >= 0:
            named[i] -= 1
    return named


def _naming(ix: FeatureIndex, tv: TermVectors | None, n: int) -> tuple[list[int], list[str]]:
    """The nodes whose text names some document, and their mentions as kept."""
    if tv is None:
        return [], []
    mentions = tv.mentions
    numbers = list(map(tv.number.get, ix.keys[:n], repeat(len(mentions))))
    naming = [i for i, m in enumerate(numbers) if m < len(mentions) and mentions[m]]
    return naming, [mentions[numbers[i]] for i in naming]


def _mention_entries(ix: FeatureIndex, tv: TermVectors | None, n: int) -> Part:
    """(naming node, named node, ``1 + log(times named)``) of every mention, as
    :func:`studykb.related.matrices.mention_counts` reads them: every document's mentions
    split at once (:func:`studykb.related.mentions.unpack` item by item where a key holds
    a separator)."""
    empty = np.zeros(0, dtype=np.int64)
    naming, texts = _naming(ix, tv, n)
    if not texts:
        return empty, empty, np.zeros(0)
    items = "\x1e".join(texts).split("\x1e")
    flat = "\x1f".join(items).split("\x1f")
    if len(flat) == 2 * len(items):
        keys, counts = flat[::2], flat[1::2]
    else:  # a key with a separator in it: as unpack reads it
        pairs = [item.rpartition("\x1f") for item in items]
        keys, counts = [k for k, _s, _c in pairs], [c for _k, _s, c in pairs]
    sizes = np.fromiter(map(_items, texts), dtype=np.int64, count=len(texts))
    rows = np.repeat(np.asarray(naming, dtype=np.int64), sizes)
    cols = np.fromiter(map(ix.number.get, keys, repeat(-1)), dtype=np.int64, count=len(keys))
    times = list(map(int, counts))
    value = {t: 1.0 + math.log(max(t, 1)) for t in set(times)}  # as mention_counts: math.log
    vals = np.fromiter(map(value.__getitem__, times), dtype=np.float64, count=len(times))
    ok = (cols >= 0) & (cols != rows)
    return rows[ok], cols[ok], vals[ok]


def _items(text: str) -> int:
    return text.count("\x1e") + 1


class _Text:
    """The text vectors as the engine's ``X`` (document x term), in node order."""

    def __init__(self, ix: FeatureIndex, tv: TermVectors | None, n: int) -> None:
        self.number = np.full(n, -1, dtype=np.int64)
        self.posting = np.zeros(1, dtype=np.int64)
        self.width = 1
        self.keep = np.zeros(1, dtype=bool)
        if tv is None:
            self.indptr = np.zeros(n + 1, dtype=np.int64)
            self.indices = np.zeros(0, dtype=np.int64)
            self.data = np.zeros(0)
            return
        got = map(tv.number.get, ix.keys[:n], repeat(-1))
        number = np.fromiter(got, dtype=np.int64, count=n)
        pairs = [tv.packed_vectors[m] for m in number[number >= 0].tolist()]
        terms = [t for t, _w in pairs]
        weights = [w for _t, w in pairs]
        lengths = np.zeros(n, dtype=np.int64)
        lengths[number >= 0] = np.fromiter(map(len, terms), dtype=np.int64, count=len(terms)) // 4
        self.number = number
        self.indptr = np.concatenate([[0], np.cumsum(lengths)])
        self.indices = np.frombuffer(b"".join(terms), dtype=np.int32).astype(np.int64)
        self.data = np.frombuffer(b"".join(weights), dtype=np.float32).astype(np.float64)
        self.width = max(len(tv.terms), 1)
        self.posting = np.bincount(self.indices, minlength=self.width)
        self.keep = self.posting <= MAX_POSTING
        self.rows_of = np.repeat(np.arange(n, dtype=np.int64), lengths)

    def vector(self, i: int) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        a, b = self.indptr[i], self.indptr[i + 1]
        return self.indices[a:b], self.data[a:b]

    def similar(self, i: int, n: int) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """The engine's ``top_per_row(Xq[i] @ XT, TEXT_POOL)``: ``Xq``'s row holds the
        terms held by few documents in the reverse of the vector's order (a scaled
        matrix), and each similarity is summed in that order."""
        terms, weights = self.vector(i)
        ok = self.keep[terms]
        terms, weights = terms[ok][::-1], (weights[ok] * 1.0)[::-1]
        if not len(terms):
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        place = np.full(self.width, -1, dtype=np.int64)
        place[terms] = np.arange(len(terms))
        at = place[self.indices]
        hits = np.nonzero(at >= 0)[0]
        hits = hits[np.argsort(at[hits], kind="stable")]
        products = weights[at[hits]] * self.data[hits]
        cols, vals = _entries(_sums(self.rows_of[hits], products, n))
        if len(cols) > TEXT_POOL:
            best = np.lexsort((cols, -vals))[:TEXT_POOL]
            best.sort()
            cols, vals = cols[best], vals[best]
        return cols, vals


class RowEngine:
    """What the ranking and the reasons read of an :class:`studykb.related.engine.Engine`,
    for rows asked for one at a time: :meth:`components`, :meth:`vector`, ``posting``,
    ``ix``, ``tv``, ``n`` and ``memo``."""

    def __init__(
        self, ix: FeatureIndex, tv: TermVectors | None, graph: RowGraph | None = None
    ) -> None:
        """``graph``: the rows of ``ix``'s graph, when made already (of the same content)."""
        self.ix, self.tv = ix, tv
        self.n = len(ix.keys)
        self.memo: dict[str, Any] = {}
        self._graph = graph if graph is not None else RowGraph(ix, self.n)
        self._mentions = _Mentions(ix, tv, self.n)
        self._text = _Text(ix, tv, self.n)
        self.posting = self._text.posting
        """Term -> how many documents' vectors hold it (the engine's ``posting``)."""

    def vector(self, i: int) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """Node ``i``'s text vector: (terms, weights) in the vector's order."""
        return self._text.vector(i)

    def entries(self, rows: NDArray[np.int64], text: bool = True) -> dict[str, Part]:
        """Raw values of every component for the documents ``rows``, as
        :meth:`studykb.related.engine.Engine.components` gives them."""
        found: dict[str, list[tuple[int, Any, Any]]] = {}
        for r, i in enumerate(rows.tolist()):
            for name, (cols, vals) in self._row(i, text).items():
                found.setdefault(name, []).append((r, cols, vals))
        out: dict[str, Part] = {}
        for name, parts in found.items():
            out[name] = (
                np.concatenate([np.full(len(c), r, dtype=np.int64) for r, c, _v in parts]),
                np.concatenate([c for _r, c, _v in parts]).astype(np.int64),
                np.concatenate([v for _r, _c, v in parts]).astype(np.float64),
            )
        return out

    def _row(self, i: int, text: bool) -> dict[str, tuple[Any, Any]]:
        g, n = self._graph, self.n
        out: dict[str, tuple[Any, Any]] = {}
        out["link_out"] = g.L.row(i)
        out["link_in"] = g.LT.row(i)
        mention = self._mentions
        cols, raw = mention.row(i)
        out["mentions"] = _kept(cols, raw * mention.weight[cols])
        cols, raw = mention.column(i)
        out["mentioned_by"] = _kept(cols, raw * mention.weight[i])
        # refs: B[i] @ BT, B's row ascending (scaled twice: reversed, then back)
        cited = g.L.row(i)[0]
        out["refs"] = _entries(_times(*_kept(cited, g.citer[i] * (1.0 * g.a[cited])), g.BT, n))
        # cocite: QT[i] @ Q, QT's row ascending (a transpose)
        citing = g.LT.row(i)[0]
        out["cocite"] = _entries(_times(*_kept(citing, g.q[citing] * 1.0), g.Q, n))
        # prereq: Rin's row descending (scaled), RoutT's ascending (a transpose)
        needs = g.R.row(i)[0]
        needed_by = g.RT.row(i)[0]
        prereq = _times(needs[::-1], 1.0 * g.r_in[needs[::-1]], g.RinT, n) + _times(
            needed_by, g.r_out[needed_by] * 1.0, g.Rout, n
        )
        prereq += 0.5 * (_times(*g.R.row(i), g.R, n) + _times(*g.RT.row(i), g.RT, n))
        out["prereq"] = _entries(prereq)
        out["topics"] = _entries(g.topics.product(i, n))
        out["tags"] = _entries(g.tags.product(i, n))
        course = int(g.course[i]) if i < len(g.course) else -1
        members = np.nonzero(g.course == course)[0] if course >= 0 else np.zeros(0, dtype=np.int64)
        out["course"] = (members, np.ones(len(members)))
        is_course = bool(len(g.courses)) and self.ix.types[i] == "course"
        siblings = g.courses if is_course else np.zeros(0, dtype=np.int64)
        out["sibling"] = (siblings, np.ones(len(siblings)))
        out["folder"] = _entries(g.folder.product(i, n))
        if text:
            out["text"] = self._text.similar(i, n)
        return out
