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
folder          the same folder or section further up (Adamic-Adar: a big folder says
                less; :func:`~studykb.related.weights.folders`), counted only
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

import hashlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from studykb.related import stored
from studykb.related.components import ALONGSIDE as ALONGSIDE
from studykb.related.components import ALONGSIDE_SHARE as ALONGSIDE_SHARE
from studykb.related.components import COMPONENTS as COMPONENTS
from studykb.related.components import HALF as HALF
from studykb.related.components import MAX_POSTING
from studykb.related.components import TEXT_POOL as TEXT_POOL
from studykb.related.components import Weights as Weights
from studykb.related.feature_index import (
    COCITE_MAX,
    COURSE_BIT,
    HUB_CAP,
    KIND_BITS,
    FeatureIndex,
)
from studykb.related.features import FEATURES
from studykb.related.matrices import groups, mention_counts, weigh_mentions
from studykb.related.sparse import (
    Csr,
    csr,
    inv_sqrt,
    replace_rows,
    scale_cols,
    scale_rows,
    top_per_row,
)
from studykb.related.vectorcache import VECTORS
from studykb.related.weights import flat_rows, folders
from studykb.runtime.memory import give_back

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from studykb.related.row_scores import Part
    from studykb.related.textsim import TermVectors
    from studykb.vault import BuildStats, Vault
    from studykb.vault.derived import Change, Snapshot

#: The engine's matrices, as kept in the cache (:data:`ENGINE`, :mod:`studykb.related.stored`).
MATRICES = (
    *("L", "LT", "B", "BT", "Q", "QT", "R", "RT", "Rin", "RinT", "Rout", "RoutT"),
    *("T", "TT", "G", "GT", "C", "CT", "K", "KT", "M", "MT", "X", "Xq", "XT", "F", "FT"),
    "Mraw",
)
#: The engine's arrays, as kept in the cache.
ARRAYS = ("posting", "tv_number", "keys_digest", "tv_made")
#: What the engine makes of the text vectors alone (the rest, of the graph features alone).
WORDS = ("Mraw", "M", "MT", "X", "Xq", "XT", "posting", "tv_number")


class Engine:
    """The factor matrices of every component, by the feature index's node numbers."""

    ix: FeatureIndex
    tv: TermVectors | None

    def __init__(self, ix: FeatureIndex, tv: TermVectors | None) -> None:
        """Made from the inputs."""
        self._inputs(ix, tv)
        self._build()

    def _inputs(self, ix: FeatureIndex, tv: TermVectors | None) -> None:
        self.ix, self.tv = ix, tv
        self.n = len(ix.keys)
        self.shape = (self.n, self.n)
        self.memo: dict[str, Any] = {}
        """What readers of the engine remember of it and its inputs (reasons' word lists)."""
        self.keys_digest = _keys_digest(ix)
        self.tv_made = _tv_made(tv)

    @classmethod
    def kept(cls, matrices: dict[str, Csr], arrays: dict[str, NDArray[Any]]) -> Engine:
        """The engine as :meth:`stored` gave it (its inputs :meth:`attach`-ed before use)."""
        engine = cls.__new__(cls)
        for name, m in matrices.items():
            setattr(engine, name, m)
        engine.posting, engine.tv_number = arrays["posting"], arrays["tv_number"]
        engine.keys_digest, engine.tv_made = arrays["keys_digest"], arrays["tv_made"]
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
            {name: getattr(self, name) for name in ARRAYS},
        )

    def updated(
        self,
        ix: FeatureIndex,
        tv: TermVectors | None,
        paths: frozenset[str],
        graph: bool = True,
        words: bool = True,
    ) -> Engine | None:
        """The engine of ``ix`` and ``tv``, inputs that differ from this engine's only in
        the documents of the files ``paths``, or None when they are other inputs (other
        documents, vectors of another full build). The mentions of the other documents
        are kept and every matrix is made again from them, the same numbers as a full
        build; without ``graph`` (the graph features are the same: their stamp says so)
        the matrices made of them alone are kept as they are, and without ``words`` those
        of the text vectors."""
        if not np.array_equal(self.keys_digest, _keys_digest(ix)):
            return None
        if not np.array_equal(self.tv_made, _tv_made(tv)):
            return None
        engine = Engine.__new__(Engine)
        engine._inputs(ix, tv)
        if graph:
            engine._graph()
        if words:
            nodes = [n for n, path in enumerate(ix.paths) if path in paths]
            engine.Mraw = replace_rows(self.Mraw, nodes, mention_counts(ix, tv, nodes))
            engine._words()
        for name in MATRICES + ARRAYS:
            if not hasattr(engine, name):
                setattr(engine, name, getattr(self, name))
        return engine

    # -- building ----------------------------------------------------------------------------
    def _build(self) -> None:
        """Every matrix, from the inputs."""
        self.Mraw = mention_counts(self.ix, self.tv)
        self._matrices()

    def _matrices(self) -> None:
        """Every matrix, from the inputs and the mention rows (:attr:`Mraw`)."""
        self._graph()
        self._words()

    def _graph(self) -> None:
        """The matrices of the graph features."""
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
        self.T = groups(ix.topics, n, n)
        self.TT = sp.csr_matrix(self.T.T)
        self.G = groups(ix.tag_ids, n, len(ix.tag_names))
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

    def _words(self) -> None:
        """The matrices of the text vectors: mentions (from :attr:`Mraw`) and words."""
        self.M = weigh_mentions(self.Mraw)
        self.MT = sp.csr_matrix(self.M.T)
        self.posting = np.zeros(1, dtype=np.int64)
        """Term -> how many documents' vectors hold it."""
        self.X, self.Xq, self.tv_number = self._text()
        self.XT = sp.csr_matrix(self.X.T)

    def _edges(self) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
        """(source, target, kind bits) of every reference, in the index's order."""
        src, pairs = flat_rows(self.ix.out.data[: self.n], 2)
        return src, pairs[:, 0].copy(), pairs[:, 1].copy()

    def _text(self) -> tuple[Csr, Csr, NDArray[np.int64]]:
        """Unit-length BM25 vectors (document x term) in node order, and the same with the
        terms too common to look candidates up by left out."""
        tv = self.tv
        number = np.full(self.n, -1, dtype=np.int64)
        if tv is None:
            empty = sp.csr_matrix((self.n, 1))
            return empty, empty, number
        get = tv.number.get
        number = np.fromiter((get(k, -1) for k in self.ix.keys), dtype=np.int64, count=self.n)
        pairs = [tv.packed_vectors[m] for m in number[number >= 0].tolist()]
        terms = [t for t, _w in pairs]
        weights = [w for _t, w in pairs]
        lengths = np.zeros(self.n, dtype=np.int64)
        lengths[number >= 0] = np.fromiter(map(len, terms), dtype=np.int64, count=len(terms)) // 4
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

    def entries(self, rows: NDArray[np.int64], text: bool = True) -> dict[str, Part]:
        """:meth:`components` as the scoring reads them: (row, column, value) of each
        stored entry (what :class:`studykb.related.row_scores.RowEngine` gives too)."""
        out: dict[str, Part] = {}
        for name, m in self.components(rows, text).items():
            coo = m.tocoo()
            out[name] = (coo.row.astype(np.int64), coo.col.astype(np.int64), coo.data)
        return out

    def vector(self, i: int) -> tuple[NDArray[Any], NDArray[np.float64]]:
        """Node ``i``'s text vector: (terms, weights) in the vector's order."""
        x = self.X
        a, b = x.indptr[i], x.indptr[i + 1]
        return x.indices[a:b], x.data[a:b]


def _keys_digest(ix: FeatureIndex) -> NDArray[np.uint8]:
    """A digest of the documents, by node number (an engine is for one numbering)."""
    made = hashlib.blake2b("\0".join(ix.keys).encode(), digest_size=16).digest()
    return np.frombuffer(made, dtype=np.uint8)


def _tv_made(tv: TermVectors | None) -> NDArray[np.uint8]:
    """The full build of the vectors the engine was made from (see ``TermVectors.made``)."""
    return np.frombuffer((tv.made if tv is not None else "").encode(), dtype=np.uint8)


class EngineSpec:
    """The engine as a derived structure (:mod:`studykb.vault.derived`): made from the
    graph features and the text vectors, kept while what it reads of them is the same
    (their stamps), made again when it is not; kept in the cache as plain arrays
    (:mod:`studykb.related.stored`)."""

    name = "related-engine"
    made_by = (
        "studykb.related.engine",
        "studykb.related.components",
        "studykb.related.matrices",
        "studykb.related.sparse",
        "studykb.related.stored",
        "studykb.related.weights",
    )
    inputs = (FEATURES, VECTORS)

    def build(self, vault: Snapshot) -> Engine:
        return Engine(vault.derived(FEATURES), vault.derived(VECTORS).tv)

    #: An update after an edit of the text costs about what loading the engine does
    #: (the matrices of the words made again): it is written back once many files
    #: changed (:data:`studykb.vault.derived.REWRITE_AFTER`), or when the graph features
    #: changed, so that the next processes, after edits of the text only, keep the
    #: graph's matrices as written instead of making them again each time.
    write_when_inputs_change = frozenset({FEATURES.name})

    def update(self, value: Engine, change: Change, vault: Snapshot) -> Engine | None:
        if not change.inputs:
            return value
        return value.updated(
            vault.derived(FEATURES),
            vault.derived(VECTORS).tv,
            change.paths,
            graph=FEATURES.name in change.inputs,
            words=VECTORS.name in change.inputs,
        )

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
        arrays = {name: stored.unpack_array(data["arrays"][name]) for name in ARRAYS}
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
    made_lean(vault)
    return True


def made_lean(vault: Vault) -> Engine:
    """:func:`for_vault`, holding less at once (a memory seam of a build): the graph
    edges a first build kept let go first (nothing here reads them), then the graph
    features made, then the documents let go (the text vectors and the engine read the
    state, not them), so that what the last steps make fits in the room those held; the
    C heap's free room is handed back before the vectors and before the engine
    (:func:`studykb.runtime.memory.give_back`, a few milliseconds each)."""
    vault.release(documents=False)  # the features read the documents
    vault.derived(FEATURES)
    vault.release()
    give_back()  # the documents' room, for the vectors (strings over 512 bytes: C heap)
    vault.derived(VECTORS)
    give_back()  # the name table's automaton and the texts, for the engine's matrices
    return for_vault(vault)


def for_vault(vault: Snapshot) -> Engine:
    """The engine of the vault's current state, reading the features and vectors of now
    (the matrices are the same while what they are made of is)."""
    engine = vault.derived(ENGINE)
    engine.attach(vault.derived(FEATURES), vault.derived(VECTORS).tv)
    return engine
