"""Related documents: an explainable blend of the link graph, shared topics and text.

``related(vault, doc, RelatedOptions(limit, types))`` returns :class:`Related` objects,
best first. The blend (weights chosen by ``benchmarks/eval_related.py``, see the README):

* hand-picked ``related`` always come first, in the order written;
* a link either way (``links here`` / ``linked from here``);
* shared references, each weighted by how rare it is (resource allocation: a reading
  cited by 2 documents counts 1/2, one cited by 40 counts 1/40), and co-citation (being
  cited by the same documents);
* shared topics and tags (Adamic-Adar, 1/log of how many documents carry it; a course
  also has its units' topics), same course, and for a course the other courses;
* text similarity on distinctive terms (see :mod:`studykb.related.textsim`).

Each continuous feature is turned into evidence in [0, 1) by a fixed saturation
``x / (x + half)`` (:data:`HALF`), so weak evidence stays weak whatever else the
document has (a reading list of everything gives no co-citation at all); the blend is
their weighted mean. The list is then diversified with maximal marginal relevance, so
near-duplicates (documents with the same neighbours or the same distinctive words) do
not crowd the top. Each :class:`Related` carries its ``rank`` and the ``score`` that
ordered it (hand-picked first in the order written, then the diversified blend, never
increasing), and its ``relevance`` (the blend before diversity).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, NamedTuple

from studykb.related.features import FeatureIndex, Pair
from studykb.related.features import load as load_features
from studykb.related.reasons import explain

if TYPE_CHECKING:
    from studykb.model import Document
    from studykb.related.textsim import TermVectors, TextSimilarity
    from studykb.vault import Vault

#: Types ranked by default: what a reader would open next. Topics have their own pages
#: (``studykb topic``) and course units live inside their course.
DEFAULT_TYPES = ("note", "entry", "course", "list")
TEXT_POOL = 50
FEATURES = (
    "picked",
    "link_in",
    "link_out",
    "course",
    "sibling",
    "refs",
    "cocite",
    "peers",
    "topics",
    "tags",
    "text",
)
#: Value of each continuous feature that counts as half of full evidence.
HALF = {"refs": 0.25, "cocite": 0.25, "peers": 0.1, "topics": 0.75, "tags": 0.75, "text": 0.15}


@dataclass(frozen=True)
class Weights:
    """How much each feature counts in the blend.

    Chosen by ``python benchmarks/eval_related.py --tune`` (coordinate descent from equal
    weights on the bundled vault's hidden links) and checked on the held-out topical
    vault (the related guide has the tables). The search gave shared references no
    weight on the bundled vault's 73 links; half a weight does as well on the held-out
    vault, and a shared reading is the reason a reader understands best.
    """

    link_in: float = 2.0
    """The candidate links to the document."""
    link_out: float = 1.0
    """The document links to the candidate."""
    course: float = 1.0
    """Same course (or the course itself)."""
    sibling: float = 1.0
    """Both are courses."""
    refs: float = 0.5
    """Shared cited documents, by rarity."""
    cocite: float = 1.0
    """Cited by the same documents, by rarity."""
    peers: float = 1.0
    """Cited by the documents that cite what this one cites."""
    topics: float = 0.5
    """Shared topics, by rarity."""
    tags: float = 1.0
    """Shared tags that name no topic, by rarity."""
    text: float = 4.0
    """Text similarity."""

    def total(self) -> float:
        return sum(getattr(self, f.name) for f in fields(self)) or 1.0

    def by_name(self) -> dict[str, float]:
        """Feature name -> weight."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class RelatedOptions:
    """What to rank and how; filled by the CLI (or any front end) in one place."""

    limit: int = 10
    """How many documents to return."""
    types: tuple[str, ...] = ()
    """Types to return (empty: :data:`DEFAULT_TYPES`, plus hand-picked ones of any type)."""
    text: str = "vectors"
    """Text similarity: ``vectors`` (fast term vectors), ``index`` (the search index's
    more-like-this) or ``none``."""
    diversity: float = 0.3
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
    """Why, in words, strongest first: "hand-picked", "links here", "same course: X"..."""
    features: dict[str, float] = field(default_factory=dict)
    """The feature values (evidence in [0, 1)) the blend was made from."""
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
    """Ranks related documents over one :class:`FeatureIndex` and one text provider."""

    def __init__(
        self, ix: FeatureIndex, text: TextSimilarity | None, text_vectors: TermVectors | None = None
    ) -> None:
        self.ix = ix
        self.text = text
        self._vectors = text_vectors  # TermVectors, for near-duplicate checks
        self._sigs: dict[int, frozenset[int]] = {}
        self._top: dict[int, frozenset[int]] = {}

    @classmethod
    def for_vault(
        cls, vault: Vault, text: str = "vectors", index_text: TextSimilarity | None = None
    ) -> Ranker:
        """The ranker of ``vault``; ``text``: ``vectors`` (term vectors), ``index`` (the
        search index's more-like-this, given as ``index_text``) or ``none``."""
        from studykb.related import vectorcache

        ix = load_features(vault)
        vectors = vectorcache.load(vault, ix.fingerprint, ix.files)
        provider: TextSimilarity | None = None
        if text == "vectors":
            provider = vectors
        elif text == "index":
            provider = index_text or vectors
        return cls(ix, provider, vectors)

    # -- scoring -------------------------------------------------------------------------
    def candidates(
        self, i: int, hidden: frozenset[Pair] = frozenset()
    ) -> tuple[dict[int, dict[str, float]], dict[int, list[str]]]:
        """Normalised features of every candidate, and the shared words of text matches."""
        feats = self.ix.features(i, hidden)
        words: dict[int, list[str]] = {}
        if self.text is not None:
            number = self.ix.number
            for key, score, shared in self.text.similar(self.ix.keys[i], TEXT_POOL):
                j = number.get(key)
                if j is not None and j != i and score > 0:
                    feats.setdefault(j, {})["text"] = score
                    words[j] = list(shared)
        for f in feats.values():
            for name, value in f.items():
                half = HALF.get(name)
                if half is not None and value:
                    f[name] = value / (value + half)
        return feats, words

    def rank(
        self,
        i: int,
        limit: int,
        types: tuple[str, ...] = (),
        weights: Weights = Weights(),
        diversity: float = 0.3,
        hidden: frozenset[Pair] = frozenset(),
        exclude: frozenset[int] = frozenset(),
    ) -> tuple[list[Ranked], dict[int, list[str]]]:
        """The ranking (hand-picked, then the blend diversified) and the words each text
        match shares with node ``i``."""
        feats, words = self.candidates(i, hidden)
        return self.order(i, feats, limit, types, weights, diversity, hidden, exclude), words

    def order(
        self,
        i: int,
        feats: dict[int, dict[str, float]],
        limit: int,
        types: tuple[str, ...] = (),
        weights: Weights = Weights(),
        diversity: float = 0.3,
        hidden: frozenset[Pair] = frozenset(),
        exclude: frozenset[int] = frozenset(),
    ) -> list[Ranked]:
        """Blend, put hand-picked documents first, diversify the rest."""
        allowed = frozenset(types or DEFAULT_TYPES)
        total = weights.total()
        weight = _blend_weights(weights)
        picked = [
            j
            for j in self.ix.picked[i]
            if (i, j) not in hidden
            and j not in exclude
            and (not types or self.ix.types[j] in allowed)
        ]
        out = [
            Ranked(
                j,
                1.0 + (len(picked) - k) / len(picked),
                _blend(feats.get(j, {}), weight) / total,
                feats.get(j, {}),
            )
            for k, j in enumerate(picked)
        ]
        room = max(0, limit - len(out))
        best = self._best(feats, max(2 * room, 20), allowed, exclude.union(picked), weight, total)
        for j, ordering, relevance in self._diversify(best, [r.node for r in out], room, diversity):
            out.append(Ranked(j, ordering, relevance, feats[j]))
        return out[:limit]

    def _best(
        self,
        feats: dict[int, dict[str, float]],
        most: int,
        allowed: frozenset[str],
        skip: frozenset[int],
        weight: Blend,
        total: float,
    ) -> list[tuple[float, int]]:
        """The ``most`` best-scored candidates of an allowed type, not in ``skip``, as
        (score, node), best first, then by key (without sorting them all)."""
        node_types, keys = self.ix.types, self.ix.keys
        pool = []
        for j, f in feats.items():
            if j in skip or node_types[j] not in allowed:
                continue
            score = _blend(f, weight) / total
            if score > 0:
                pool.append((-score, keys[j], j))
        return [(-negative, j) for negative, _key, j in heapq.nsmallest(most, pool)]

    def _diversify(
        self, pool: list[tuple[float, int]], chosen: list[int], room: int, diversity: float
    ) -> list[tuple[int, float, float]]:
        """Maximal marginal relevance over ``pool`` ((score, node), best first):
        (node, the score that ordered it, its score), in order.

        Each step takes the candidate with the best ``(1 - d) * score - d * likeness`` to
        what is already chosen (the likeness to the chosen set is updated incrementally);
        that value, rescaled to the scores (``score - d / (1 - d) * likeness * best``),
        never increases from one step to the next.
        """
        if diversity <= 0 or len(pool) <= 1:
            return [(j, s, s) for s, j in pool[:room]]
        top = pool[0][0] or 1.0
        left = {j: s for s, j in pool}
        order = {j: n for n, (_s, j) in enumerate(pool)}
        sigs = {j: (self._sig(j), self._words_of(j)) for j in (*left, *chosen)}
        like = self._like
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

    @staticmethod
    def _like(
        a: tuple[frozenset[int], frozenset[int]], b: tuple[frozenset[int], frozenset[int]]
    ) -> float:
        (ga, ta), (gb, tb) = a, b
        both = len(ga & gb)
        graph = both / (len(ga) + len(gb) - both) if both else 0.0
        both = len(ta & tb)
        text = both / (len(ta) + len(tb) - both) if both else 0.0
        return graph if graph > text else text

    def likeness(self, a: int, b: int) -> float:
        """How much two documents are the same: the larger of the Jaccard overlaps of their
        graph neighbourhoods and of their most distinctive words."""
        return self._like((self._sig(a), self._words_of(a)), (self._sig(b), self._words_of(b)))

    def _sig(self, j: int) -> frozenset[int]:
        sig = self._sigs.get(j)
        if sig is None:
            sig = self._sigs[j] = self.ix.signature(j)
        return sig

    def _words_of(self, j: int) -> frozenset[int]:
        got = self._top.get(j)
        if got is None:
            vectors = self._vectors
            got = self._top[j] = vectors.top_terms(self.ix.keys[j]) if vectors else frozenset()
        return got

    # -- results -------------------------------------------------------------------------
    def related(self, key: str, options: RelatedOptions) -> list[Related]:
        i = self.ix.number[key]
        ranked, words = self.rank(
            i, options.limit, options.types, options.weights, options.diversity
        )
        out = []
        for n, r in enumerate(ranked, 1):
            j = r.node
            out.append(
                Related(
                    key=self.ix.keys[j],
                    id=self.ix.ids[j],
                    path=self.ix.paths[j],
                    title=self.ix.titles[j],
                    type=self.ix.types[j],
                    score=round(r.score, 3),
                    reasons=explain(self.ix, i, j, r.features, options.weights, words.get(j, [])),
                    features={k: round(v, 3) for k, v in sorted(r.features.items())},
                    rank=n,
                    relevance=round(r.relevance, 3),
                )
            )
        return out


#: The order the blend adds features in: fixed, so that equal features give equal scores
#: (and a tie is broken by key) whatever order a document's features were found in.
BLEND_ORDER = (
    "link_in",
    "link_out",
    "course",
    "refs",
    "cocite",
    "topics",
    "sibling",
    "peers",
    "tags",
    "text",
)


class Blend(NamedTuple):
    """The weights of a blend, by name and in :data:`BLEND_ORDER`."""

    by_name: dict[str, float]
    ordered: tuple[tuple[str, float], ...]
    """(feature, weight) in :data:`BLEND_ORDER`, those weighing nothing left out."""


def _blend_weights(weights: Weights) -> Blend:
    by_name = weights.by_name()
    return Blend(
        by_name, tuple((name, by_name[name]) for name in BLEND_ORDER if by_name.get(name, 0.0))
    )


def _blend(f: dict[str, float], weight: Blend) -> float:
    """The weighted sum of a candidate's features, added in :data:`BLEND_ORDER`
    (``picked``, unknown names and features weighing nothing count for nothing)."""
    if len(f) == 1:  # most candidates: one feature
        for name, value in f.items():
            return weight.by_name.get(name, 0.0) * value
    total = 0.0
    for name, w in weight.ordered:
        found = f.get(name)
        if found is not None:
            total += w * found
    return total


def related(
    vault: Vault,
    doc: Document,
    options: RelatedOptions | None = None,
    index_text: TextSimilarity | None = None,
) -> list[Related]:
    """The documents related to ``doc``, best first, hand-picked ones first of all."""
    options = options or RelatedOptions()
    ranker = Ranker.for_vault(vault, options.text, index_text)
    if doc.key not in ranker.ix.number:
        return []
    return ranker.related(doc.key, options)
