"""Related documents: the engine's scores made into lists, with reasons in words.

``related(vault, doc, RelatedOptions(limit, types))`` returns :class:`Related` objects,
best first; :meth:`Ranker.related_many` gives the lists of many documents from the same
arithmetic, a block of documents at once (:mod:`studykb.related.engine` has the
components and how they are blended). Hand-picked ``related`` always come first, in the
order written; then the blend, optionally diversified with maximal marginal relevance so
near-duplicates (documents with the same neighbours or the same distinctive words) do not
crowd the top. Each :class:`Related` carries its ``rank``, the ``score`` that ordered it
(never increasing down the list) and its ``relevance`` (the blend before diversity).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from studykb.related.batch import order_block
from studykb.related.components import COMPONENTS, Weights
from studykb.related.features import FEATURES
from studykb.related.reasons import explain
from studykb.related.row_graph import ROW_GRAPH
from studykb.related.row_scores import RowEngine
from studykb.related.scoring import Block, score_block
from studykb.related.vectorcache import VECTORS
from studykb.vault.topics import TOPICS

if TYPE_CHECKING:
    from studykb.model import Document
    from studykb.related.engine import Engine
    from studykb.related.feature_index import FeatureIndex
    from studykb.related.textsim import TextSimilarity
    from studykb.vault import Vault

__all__ = ["DEFAULT_TYPES", "Ranked", "Ranker", "Related", "RelatedOptions", "Weights", "related"]

#: Types ranked by default: what a reader would open next. Topics have their own pages
#: (``studykb topic``) and course units live inside their course.
DEFAULT_TYPES = ("note", "entry", "course", "list")
#: Documents scored at once by :meth:`Ranker.related_many`.
BLOCK = 512
#: Candidates an index text provider is asked for.
TEXT_POOL = 50


@dataclass(frozen=True)
class RelatedOptions:
    """What to rank and how; filled by the CLI (or any front end) in one place."""

    limit: int = 10
    """How many documents to return."""
    types: tuple[str, ...] = ()
    """Types to return (empty: :data:`DEFAULT_TYPES`, plus hand-picked ones of any type)."""
    text: str = "vectors"
    """Text similarity: ``vectors`` (the engine's BM25 vectors), ``index`` (the search
    index's more-like-this) or ``none``."""
    diversity: float = 0.0
    """MMR trade-off: 0 ranks by score alone, 1 by novelty alone."""
    weights: Weights = field(default_factory=Weights)


@dataclass(frozen=True)
class Related:
    """One related document, with its score and the reasons in words."""

    key: str
    """Key of the related document."""
    id: str
    path: str
    title: str
    type: str
    score: float
    """The score that ordered it (never increasing down the list): hand-picked documents
    above 1 in the order written, then the blend in [0, 1] lowered for near-duplicates."""
    reasons: list[str] = field(default_factory=list)
    """Why, in words, strongest first: "hand-picked", "links here", "mentions X"..."""
    features: dict[str, float] = field(default_factory=dict)
    """The evidence (in [0, 1)) of each component the blend was made from."""
    rank: int = 0
    """Its place in the list, from 1."""
    relevance: float = 0.0
    """The blend in [0, 1] before diversity."""

    def brief(self) -> dict[str, object]:
        return {
            "id": self.id,
            "path": self.path,
            "title": self.title,
            "type": self.type,
            "rank": self.rank,
            "score": self.score,
            "relevance": self.relevance,
            "reasons": list(self.reasons),
        }


class Ranked(NamedTuple):
    """One place of a ranking."""

    node: int
    score: float
    """What ordered it: hand-picked ones 1 + their place from the end over their number,
    the others the diversified blend (never increasing down the list)."""
    relevance: float
    """The blend before diversity."""
    features: dict[str, float]


class Ranker:
    """Ranks related documents over one :class:`Engine` (and, for ``--text index``, the
    search index's more-like-this)."""

    def __init__(
        self, engine: Engine | RowEngine, index_text: TextSimilarity | None = None
    ) -> None:
        self.engine = engine
        self.ix: FeatureIndex = engine.ix
        self.index_text = index_text
        self._sigs: dict[int, frozenset[int]] = {}
        self._top: dict[int, frozenset[int]] = {}
        self._types: dict[tuple[str, ...], np.ndarray] = {}

    @classmethod
    def for_vault(
        cls, vault: Vault, text: str = "vectors", index_text: TextSimilarity | None = None
    ) -> Ranker:
        """Over the engine of the vault (every document scored at once)."""
        from studykb.related.engine import for_vault  # deferred: loads scipy

        return cls(for_vault(vault), index_text if text == "index" else None)

    @classmethod
    def for_one(
        cls, vault: Vault, text: str = "vectors", index_text: TextSimilarity | None = None
    ) -> Ranker:
        """Over the rows of a few documents, made from the features and vectors of now
        (:mod:`studykb.related.row_scores`: no engine loaded or updated, no scipy), kept
        in memory while they are the same (a watch answering ``related`` again)."""
        ix, tv = vault.derived(FEATURES), vault.derived(VECTORS).tv
        stamps = (vault.structures.stamp(FEATURES), vault.structures.stamp(VECTORS))
        engine = vault.structures.made_of(
            "related-rows",
            (id(ix), id(tv), *stamps),
            lambda: RowEngine(ix, tv, vault.derived(ROW_GRAPH).graph),
        )
        return cls(engine, index_text if text == "index" else None)

    # -- scoring -------------------------------------------------------------------------
    def score(self, nodes: list[int], options: RelatedOptions) -> Block:
        """The engine's block for ``nodes`` (the text component from the index provider
        when there is one, none with ``--text none``)."""
        weights = options.weights
        if options.text == "none":
            weights = Weights(**{**weights.by_name(), "text": 0.0})
        text = None
        if self.index_text is not None and options.text == "index":
            text = {}
            number = self.ix.number
            for r, i in enumerate(nodes):
                found = self.index_text.similar(self.ix.keys[i], TEXT_POOL)
                text[r] = [(number[k], s) for k, s, _w in found if k in number and s > 0]
        return score_block(self.engine, np.asarray(nodes, dtype=np.int64), weights, text)

    def order(
        self, block: Block, r: int, options: RelatedOptions, exclude: frozenset[int] = frozenset()
    ) -> list[Ranked]:
        """Row ``r`` of ``block`` as a list: hand-picked first, then the blend (diversified)."""
        ix = self.ix
        i = int(block.rows[r])
        types = options.types
        allowed = self._allowed(types)
        a, b = block.starts[r], block.starts[r + 1]
        cols, score, evidence = block.cols[a:b], block.score[a:b], block.evidence[a:b]
        picked = [
            j
            for j in ix.picked[i]
            if j not in exclude and j != i and (not types or ix.types[j] in types)
        ]
        out = []
        for k, j in enumerate(picked):
            n = _find(cols, j)
            out.append(
                Ranked(
                    j,
                    1.0 + (len(picked) - k) / len(picked),
                    float(score[n]) if n >= 0 else 0.0,
                    {"picked": 1.0, **(_evidence(evidence[n]) if n >= 0 else {})},
                )
            )
        room = max(0, options.limit - len(out))
        if room:
            ok = allowed[cols] & (score > 0)
            skip = [*exclude, *picked]
            if skip:
                ok &= ~np.isin(cols, skip)
            cand = np.nonzero(ok)[0]
            most = max(2 * room, 20) if options.diversity > 0 else room
            if len(cand) > most:  # the best few, without sorting them all
                cut = np.argpartition(-score[cand], most - 1)[:most]
                edge = score[cand[cut]].min()
                cand = cand[score[cand] >= edge]  # ties at the edge kept, for the order
            best = cand[np.lexsort((cols[cand], -score[cand]))][:most]
            pool = [(float(score[n]), int(cols[n])) for n in best]
            for j, ordering, relevance in self._diversify(pool, picked, room, options.diversity):
                out.append(Ranked(j, ordering, relevance, _evidence(evidence[_find(cols, j)])))
        return out[: options.limit]

    def _allowed(self, types: tuple[str, ...]) -> np.ndarray:
        """Node -> whether its type is ranked (remembered per set of types)."""
        got = self._types.get(types)
        if got is None:
            wanted = frozenset(types or DEFAULT_TYPES)
            got = self._types[types] = np.array([t in wanted for t in self.ix.types], dtype=bool)
        return got

    def _diversify(
        self, pool: list[tuple[float, int]], chosen: list[int], room: int, diversity: float
    ) -> list[tuple[int, float, float]]:
        """Maximal marginal relevance over ``pool`` ((score, node), best first):
        (node, the score that ordered it, its score), in order.

        Each step takes the candidate with the best ``(1 - d) * score - d * likeness`` to
        what is already chosen; that value, rescaled to the scores
        (``score - d / (1 - d) * likeness * best``), never increases from one step to the
        next.
        """
        if diversity <= 0 or len(pool) <= 1:
            return [(j, s, s) for s, j in pool[:room]]
        top = pool[0][0] or 1.0
        left = {j: s for s, j in pool}
        order = {j: n for n, (_s, j) in enumerate(pool)}
        sigs = {j: (self._sig(j), self._words_of(j)) for j in (*left, *chosen)}
        like = _like
        penalty = {j: max((like(sigs[j], sigs[c]) for c in chosen), default=0.0) for j in left}
        keep, drop = 1 - diversity, diversity
        picked: list[tuple[int, float, float]] = []
        while left and len(picked) < room:
            j = max(left, key=lambda c: (keep * left[c] / top - drop * penalty[c], -order[c]))
            score = left.pop(j)
            ordering = max(0.0, score - drop / keep * penalty[j] * top)
            picked.append((j, ordering, score))
            mine = sigs[j]
            for c in left:
                value = like(sigs[c], mine)
                if value > penalty[c]:
                    penalty[c] = value
        return picked

    def likeness(self, a: int, b: int) -> float:
        """How much two documents are the same: the larger of the Jaccard overlaps of their
        graph neighbourhoods and of their most distinctive words."""
        return _like((self._sig(a), self._words_of(a)), (self._sig(b), self._words_of(b)))

    def _sig(self, j: int) -> frozenset[int]:
        sig = self._sigs.get(j)
        if sig is None:
            sig = self._sigs[j] = self.ix.signature(j)
        return sig

    def _words_of(self, j: int) -> frozenset[int]:
        got = self._top.get(j)
        if got is None:
            tv = self.engine.tv
            got = self._top[j] = tv.top_terms(self.ix.keys[j]) if tv else frozenset()
        return got

    # -- results -------------------------------------------------------------------------
    def related(self, key: str, options: RelatedOptions) -> list[Related]:
        return self.related_many([key], options)[key]

    def related_many(self, keys: list[str], options: RelatedOptions) -> dict[str, list[Related]]:
        """The lists of ``keys``, scored a block at a time: the same numbers as
        :meth:`related` for each."""
        out: dict[str, list[Related]] = {}
        nodes = [self.ix.number[k] for k in keys]
        weight = options.weights.by_name()
        for start in range(0, len(nodes), BLOCK):
            part = nodes[start : start + BLOCK]
            block = self.score(part, options)
            if options.diversity > 0:
                lists = [self.order(block, r, options) for r in range(len(part))]
            else:  # the same lists, the whole block sorted at once
                lists = order_block(self, block, options)
            for i, ranked in zip(part, lists, strict=True):
                out[self.ix.keys[i]] = self._made(i, ranked, options, weight)
        return out

    def _made(
        self, i: int, ranked: list[Ranked], options: RelatedOptions, weight: dict[str, float]
    ) -> list[Related]:
        ix = self.ix
        out = []
        for n, r in enumerate(ranked, 1):
            j = r.node
            out.append(
                Related(
                    key=ix.keys[j],
                    id=ix.ids[j],
                    path=ix.paths[j],
                    title=ix.titles[j],
                    type=ix.types[j],
                    score=round(r.score, 3),
                    reasons=explain(self.engine, i, j, r.features, weight),
                    features={k: round(v, 3) for k, v in sorted(r.features.items())},
                    rank=n,
                    relevance=round(r.relevance, 3),
                )
            )
        return out


def _find(cols: np.ndarray, j: int) -> int:
    """Where node ``j`` is in a row's candidates (sorted), or -1."""
    n = int(np.searchsorted(cols, j))
    return n if n < len(cols) and cols[n] == j else -1


def _evidence(row: np.ndarray) -> dict[str, float]:
    return {name: v for name, v in zip(COMPONENTS, row.tolist(), strict=True) if v > 0}


def _like(
    a: tuple[frozenset[int], frozenset[int]], b: tuple[frozenset[int], frozenset[int]]
) -> float:
    (ga, ta), (gb, tb) = a, b
    both = len(ga & gb)
    graph = both / (len(ga) + len(gb) - both) if both else 0.0
    both = len(ta & tb)
    text = both / (len(ta) + len(tb) - both) if both else 0.0
    return graph if graph > text else text


def related(
    vault: Vault,
    doc: Document,
    options: RelatedOptions | None = None,
    index_text: TextSimilarity | None = None,
) -> list[Related]:
    """The documents related to ``doc``, best first, hand-picked ones first of all."""
    options = options or RelatedOptions()
    ranker = Ranker.for_one(vault, options.text, index_text)
    if doc.key not in ranker.ix.number:
        return []
    return ranker.related(doc.key, options)


def warm(vault: Vault) -> None:
    """Read the kept topics, features and vectors of ``vault`` (this module loaded numpy and the
    ranking code), ahead of ranking one document: the cache only, never the state, so it
    may run while the refresh runs beside it; and the stemmer, which an update of the
    vectors reads the edited text with."""
    from studykb.text import analysis  # noqa: F401 - deferred: loads Stemmer

    for spec in (TOPICS, FEATURES, VECTORS):
        vault.structures.preload(spec)


def warm_steps(vault: Vault) -> Iterator[None]:
    """:func:`warm` and the kept graph's rows (:mod:`studykb.related.row_graph`), then, in
    a step a command takes only while its refresh still runs beside it (``Context.kb``'s
    ``meanwhile``), what the update of the vectors after an edit would decode after the
    refresh: the name table it reads the edited text with
    (:attr:`studykb.related.vectorcache.Vectors.names`, about 0.015 s at 10k documents).

    A speed seam: it trades time this process would wait for the refresh for time
    after it. It reads the cache only; when the refresh is done first, nothing is
    decoded ahead (the first ``related`` after a build, whose refresh is short, never
    decodes it), and when nothing was edited, what it decoded is not used."""
    warm(vault)
    vault.structures.preload(ROW_GRAPH)
    yield
    vectors = vault.structures.held(VECTORS)
    if vectors is not None:
        # the update meets a damaged table again, and builds the vectors anew
        with contextlib.suppress(ValueError, KeyError, TypeError, AttributeError):
            vectors.names  # noqa: B018 - decoded here, read by the update
    yield
