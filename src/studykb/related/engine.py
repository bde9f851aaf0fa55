"""The related-documents engine: every document scored against every other at once.

Each signal a reader expects is one named *component*, a sparse matrix product over the
vault (scipy.sparse), so a block of documents is scored in one go and one document is the
same arithmetic on one row (``related``, every sidebar format, ``serve`` and ``site``
read the same numbers):

==============  ====================================================================
link_out        this document links to the candidate (any kind but ``course``)
link_in         the candidate links here
mentions        this document's text names the candidate (title, alias or id) without
                needing a link: an *unlinked mention*, weighted by how few documents
                name it
mentioned_by    the candidate's text names this document
refs            bibliographic coupling: both cite the same documents, each weighted by
                how few cite it (resource allocation; a hub cited by more than
                :data:`HUB_CAP` counts for nothing)
cocite          co-citation: the same documents cite both (a list citing more than
                :data:`COCITE_MAX` counts for nothing)
prereq          the prerequisite neighbourhood: the same prerequisites, needed by the
                same documents, or one step further along ``requires``
topics          shared topics (tags and ``covers`` naming a topic), Adamic-Adar
tags            shared tags that name no topic, Adamic-Adar
course          the same course (or the course itself)
sibling         both are courses
text            distinctive shared terms: BM25 vectors of both languages, cosine
folder          the same folder (Adamic-Adar: a big folder says less), counted only
                alongside other evidence (:data:`ALONGSIDE`)
==============  ====================================================================

Hand-picked ``related`` come first, always, in the order written. A component's raw
value ``x`` becomes evidence ``x / (x + half)`` (:data:`HALF`) and the score is the
weighted mean of the evidence (:class:`Weights`, fitted by
``benchmarks/eval_related_real.py --tune`` on the tuning collections named in the
related guide). The engine is a derived structure (:data:`ENGINE`) made from two others,
the graph features (:mod:`studykb.related.features`) and the text vectors with their
mentions (:mod:`studykb.related.vectorcache`); see :func:`for_vault`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from studykb.related import stored
from studykb.related.feature_index import (
    COCITE_MAX,
    COURSE_BIT,
    HUB_CAP,
    KIND_BITS,
    FeatureIndex,
)
from studykb.related.features import FEATURES
from studykb.related.matrices import folders, groups, mentions
from studykb.related.sparse import Csr, csr, inv_sqrt, scale_cols, scale_rows, top_per_row
from studykb.related.vectorcache import VECTORS

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from studykb.related.textsim import TermVectors
    from studykb.vault import BuildStats, Vault
    from studykb.vault.derived import Change, Snapshot

COMPONENTS = (
    "link_out",
    "link_in",
    "mentions",
    "mentioned_by",
    "refs",
    "cocite",
    "prereq",
    "topics",
    "tags",
    "course",
    "sibling",
    "text",
    "folder",
)
#: Raw value of each component that counts as half of full evidence (0: a yes/no
#: component, its evidence 1).
HALF = MappingProxyType(
    {
        "link_out": 0.5,
        "link_in": 0.5,
        "mentions": 0.25,
        "mentioned_by": 0.25,
        "refs": 0.25,
        "cocite": 0.25,
        "prereq": 0.25,
        "topics": 0.75,
        "tags": 0.75,
        "course": 0.0,
        "sibling": 0.0,
        "text": 0.15,
        "folder": 0.1,
    }
)
#: The engine's matrices, as kept in the cache (:data:`ENGINE`, :mod:`studykb.related.stored`).
MATRICES = (
    *("L", "LT", "B", "BT", "Q", "QT", "R", "RT", "Rin", "RinT", "Rout", "RoutT"),
    *("T", "TT", "G", "GT", "C", "CT", "K", "KT", "M", "MT", "X", "Xq", "XT", "F", "FT"),
)
#: Components that are no evidence on their own (two pages of one folder may share
#: nothing else), only alongside another's...
ALONGSIDE = frozenset({"folder"})
#: ...and then at most this share of a pair's score.
ALONGSIDE_SHARE = 0.25
#: Text matches kept per document (the best ones; the rest never reach a list).
TEXT_POOL = 50
#: A term in more documents' vectors than this is skipped when looking for text matches.
MAX_POSTING = 400


@dataclass(frozen=True)
class Weights:
    """How much each component counts (see the module table)."""

    link_out: float = 0.5
    link_in: float = 1.4
    mentions: float = 2.28
    mentioned_by: float = 0.0
    refs: float = 0.7
    cocite: float = 2.0
    prereq: float = 0.5
    topics: float = 0.5
    tags: float = 0.0
    course: float = 1.0
    sibling: float = 1.0
    text: float = 4.0
    folder: float = 1.4

    def total(self) -> float:
        return sum(getattr(self, f.name) for f in fields(self)) or 1.0

    def by_name(self) -> dict[str, float]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


class Engine:
    """The factor matrices of every component, by the feature index's node numbers."""

    ix: FeatureIndex
    tv: TermVectors | None

    def __init__(self, ix: FeatureIndex, tv: TermVectors | None) -> None:
        """Made from the inputs."""
        self.ix, self.tv = ix, tv
        self.n = len(ix.keys)
        self.shape = (self.n, self.n)
        self.memo: dict[str, Any] = {}
        """What readers of the engine remember of it and its inputs (reasons' word lists)."""
        self._build()

    @classmethod
    def kept(cls, matrices: dict[str, Csr], arrays: dict[str, NDArray[Any]]) -> Engine:
        """The engine as :meth:`stored` gave it (its inputs :meth:`attach`-ed before use)."""
        engine = cls.__new__(cls)
        for name, m in matrices.items():
            setattr(engine, name, m)
        engine.posting, engine.tv_number = arrays["posting"], arrays["tv_number"]
        engine.n = int(engine.L.shape[0])
        engine.shape = (engine.n, engine.n)
        engine.memo = {}
        return engine

    def attach(self, ix: FeatureIndex, tv: TermVectors | None) -> None:
        """Read these inputs (the ones the matrices were made of, or equal to them in
        what the matrices hold) for what is not in the matrices."""
        if getattr(self, "ix", None) is not ix or getattr(self, "tv", None) is not tv:
            self.ix, self.tv = ix, tv
            self.memo.clear()

    def stored(self) -> tuple[dict[str, Csr], dict[str, NDArray[Any]]]:
        """The matrices and arrays to keep (what ``stored`` gives back)."""
        return (
            {name: getattr(self, name) for name in MATRICES},
            {"posting": self.posting, "tv_number": self.tv_number},
        )

    # -- building ----------------------------------------------------------------------------
    def _build(self) -> None:
        ix, n = self.ix, self.n
        src, dst, bits = self._edges()
        linked = (bits & ~COURSE_BIT) != 0
        ones = np.ones(int(linked.sum()))
        self.L = csr(src[linked], dst[linked], ones, self.shape)
        self.LT = sp.csr_matrix(self.L.T)
        out_deg = np.diff(self.L.indptr).astype(np.float64)
        in_deg = np.diff(self.LT.indptr).astype(np.float64)
        citer = (out_deg <= COCITE_MAX).astype(np.float64)
        # coupling: B B^T, B = L with targets weighted 1/sqrt(citers), lists of everything out
        self.B = scale_rows(scale_cols(self.L, inv_sqrt(in_deg, HUB_CAP)), citer)
        self.BT = sp.csr_matrix(self.B.T)
        # co-citation: Q^T Q, Q = L with sources weighted 1/sqrt(what they cite)
        self.QT = sp.csr_matrix(scale_rows(self.L, inv_sqrt(out_deg) * citer).T)
        self.Q = sp.csr_matrix(self.QT.T)
        req = (bits & KIND_BITS["requires"]) != 0
        self.R = csr(src[req], dst[req], np.ones(int(req.sum())), self.shape)
        self.RT = sp.csr_matrix(self.R.T)
        self.Rin = scale_cols(self.R, inv_sqrt(np.diff(self.RT.indptr).astype(np.float64)))
        self.RinT = sp.csr_matrix(self.Rin.T)
        self.Rout = scale_rows(self.R, inv_sqrt(np.diff(self.R.indptr).astype(np.float64)))
        self.RoutT = sp.csr_matrix(self.Rout.T)
        self.T = groups(ix.topics, n, n)  # type: ignore[arg-type]
        self.TT = sp.csr_matrix(self.T.T)
        self.G = groups(ix.tag_ids, n, len(ix.tag_names))  # type: ignore[arg-type]
        self.GT = sp.csr_matrix(self.G.T)
        in_folder, width = folders(ix.paths)
        self.F = groups(in_folder, n, width)
        self.FT = sp.csr_matrix(self.F.T)
        course = np.asarray(ix.course, dtype=np.int64)
        member = course >= 0
        self.C = csr(np.nonzero(member)[0], course[member], np.ones(int(member.sum())), self.shape)
        self.CT = sp.csr_matrix(self.C.T)
        is_course = np.array([t == "course" for t in ix.types], dtype=np.float64)
        self.K = sp.csr_matrix(is_course.reshape(-1, 1))
        self.KT = sp.csr_matrix(self.K.T)
        self.M = mentions(ix, self.tv)
        self.MT = sp.csr_matrix(self.M.T)
        self.posting = np.zeros(1, dtype=np.int64)
        """Term -> how many documents' vectors hold it."""
        self.X, self.Xq, self.tv_number = self._text()
        self.XT = sp.csr_matrix(self.X.T)

    def _edges(self) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
        src: list[int] = []
        dst: list[int] = []
        bits: list[int] = []
        out = self.ix.out
        for i in range(self.n):
            row = out[i]
            src.extend([i] * len(row))
            dst.extend(row)
            bits.extend(row.values())
        return (
            np.asarray(src, dtype=np.int64),
            np.asarray(dst, dtype=np.int64),
            np.asarray(bits, dtype=np.int64),
        )

    def _text(self) -> tuple[Csr, Csr, NDArray[np.int64]]:
        """Unit-length BM25 vectors (document x term) in node order, and the same with the
        terms too common to look candidates up by left out."""
        tv = self.tv
        number = np.full(self.n, -1, dtype=np.int64)
        if tv is None:
            empty = sp.csr_matrix((self.n, 1))
            return empty, empty, number
        terms: list[bytes] = []
        weights: list[bytes] = []
        lengths = np.zeros(self.n, dtype=np.int64)
        for i, key in enumerate(self.ix.keys):
            m = tv.number.get(key)
            if m is None:
                continue
            number[i] = m
            t, w = tv.packed_vectors[m]
            terms.append(t)
            weights.append(w)
            lengths[i] = len(t) // 4
        indptr = np.concatenate([[0], np.cumsum(lengths)])
        idx = np.frombuffer(b"".join(terms), dtype=np.int32).astype(np.int64)
        val = np.frombuffer(b"".join(weights), dtype=np.float32).astype(np.float64)
        width = max(len(tv.terms), 1)
        x = sp.csr_matrix((val, idx, indptr), shape=(self.n, width))
        posting = self.posting = np.bincount(idx, minlength=width)
        keep = (posting <= MAX_POSTING).astype(np.float64)
        return x, scale_cols(x, keep), number

    # -- scoring --------------------------------------------------------------------------------
    def components(self, rows: NDArray[np.int64], text: bool = True) -> dict[str, Csr]:
        """Raw values of every component for the documents ``rows`` (one row each)."""
        out: dict[str, Csr] = {}
        out["link_out"] = self.L[rows]
        out["link_in"] = self.LT[rows]
        out["mentions"] = self.M[rows]
        out["mentioned_by"] = self.MT[rows]
        out["refs"] = self.B[rows] @ self.BT
        out["cocite"] = self.QT[rows] @ self.Q
        out["prereq"] = (
            self.Rin[rows] @ self.RinT
            + self.RoutT[rows] @ self.Rout
            + 0.5 * (self.R[rows] @ self.R + self.RT[rows] @ self.RT)
        )
        out["topics"] = self.T[rows] @ self.TT
        out["tags"] = self.G[rows] @ self.GT
        out["course"] = self.C[rows] @ self.CT
        out["sibling"] = self.K[rows] @ self.KT
        out["folder"] = self.F[rows] @ self.FT
        if text:
            out["text"] = top_per_row(self.Xq[rows] @ self.XT, TEXT_POOL)
        return {name: sp.csr_matrix(m) for name, m in out.items()}


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
    engine: Engine,
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
    parts = engine.components(rows, text=use_text)
    if text is not None and w.get("text", 0.0) > 0:
        text_r = [n for n, found in text.items() for _j, _s in found]
        text_c = [j for found in text.values() for j, _s in found]
        text_v = [s for found in text.values() for _j, s in found]
        parts["text"] = csr(
            np.asarray(text_r, dtype=np.int64),
            np.asarray(text_c, dtype=np.int64),
            np.asarray(text_v, dtype=np.float64),
            (len(rows), engine.n),
        )
    all_r: list[NDArray[np.int64]] = []
    all_c: list[NDArray[np.int64]] = []
    all_k: list[NDArray[np.int64]] = []
    all_v: list[NDArray[np.float64]] = []
    for kind, name in enumerate(COMPONENTS):
        m = parts.get(name)
        if m is None or w.get(name, 0.0) <= 0:
            continue
        coo = m.tocoo()
        keep = (coo.data > 0) & (coo.col != rows[coo.row])
        value = coo.data[keep]
        all_r.append(coo.row[keep].astype(np.int64))
        all_c.append(coo.col[keep].astype(np.int64))
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


class EngineSpec:
    """The engine as a derived structure (:mod:`studykb.vault.derived`): made from the
    graph features and the text vectors, kept while what it reads of them is the same
    (their stamps), made again when it is not; kept in the cache as plain arrays
    (:mod:`studykb.related.stored`)."""

    name = "related-engine"
    made_by = (
        "studykb.related.engine",
        "studykb.related.matrices",
        "studykb.related.sparse",
        "studykb.related.stored",
    )
    inputs = (FEATURES, VECTORS)

    def build(self, vault: Snapshot) -> Engine:
        return Engine(vault.derived(FEATURES), vault.derived(VECTORS).tv)

    def update(self, value: Engine, change: Change, vault: Snapshot) -> Engine | None:
        return None if change.inputs else value

    def stamp(self, value: Engine) -> None:
        return None

    def dump(self, value: Engine) -> dict[str, Any]:
        matrices, arrays = value.stored()
        return {
            "matrices": {name: stored.pack_csr(m) for name, m in matrices.items()},
            "arrays": {name: stored.pack_array(a) for name, a in arrays.items()},
        }

    def load(self, data: Any) -> Engine:
        matrices = {name: stored.unpack_csr(data["matrices"][name]) for name in MATRICES}
        arrays = {
            name: stored.unpack_array(data["arrays"][name]) for name in ("posting", "tv_number")
        }
        return Engine.kept(matrices, arrays)


ENGINE = EngineSpec()


def prepare(vault: Vault, stats: BuildStats, known: Callable[[], frozenset[str]]) -> bool:
    """After a refresh, make what related documents need (the graph features, the text
    vectors and the engine's matrices, kept in the cache) when the refresh read many
    files or none of it is kept yet, so the first ``related`` after a full build loads
    it; whether it did. After a small edit it is left to the next ``related``, which
    updates it for the edited files only (a build stays within its budget). ``known``:
    the cache names of every structure (what an older version kept is pruned)."""
    if not stats.changed:
        return False
    many = len(stats.added) + len(stats.modified) + len(stats.removed) >= stored.PREPARE_MIN
    if not many and vault.structures.kept(ENGINE):
        return False
    vault.cache.prune(known())  # what an older version kept
    for_vault(vault)
    return True


def for_vault(vault: Snapshot) -> Engine:
    """The engine of the vault's current state, reading the features and vectors of now
    (the matrices are the same while what they are made of is)."""
    engine = vault.derived(ENGINE)
    engine.attach(vault.derived(FEATURES), vault.derived(VECTORS).tv)
    return engine
