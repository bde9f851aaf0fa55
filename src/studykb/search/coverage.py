"""Two whoosh queries the ranking needs and whoosh does not have (or has wrong).

* :class:`Coverage`: documents matching any of several *slots*, scored by the sum of
  what they match times the share of the slots they match, each slot weighing as much
  as its rarest term (its inverse document frequency): missing a rare word costs more
  than missing a common one, and a slot whose terms the index does not hold (a word no
  document uses, a function word) costs nothing. Pairs of words found together add BM25
  of how often they are together (phrase frequency, saturating, normalised by length),
  weighted by their rarity; the exact-name query adds its own score.
* :class:`BestOf`: any of several queries, scored by the best one (whoosh's
  ``DisjunctionMax`` gives a document the score another document earned: its matcher
  compares sub-matchers standing on different documents).

Neither skips by block quality: every match is scored (a top-N collector with
``replace=0`` is used anyway, see :func:`studykb.search.index._top`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from whoosh.matching.binary import DisjunctionMaxMatcher
from whoosh.matching.mcore import Matcher
from whoosh.query.compound import DisjunctionMax
from whoosh.query.qcore import Query

#: A document's score is multiplied by the share of the query's slots it matches, to
#: this power (a note with half of what the query asks for gets 0.5 ** COVERAGE).
COVERAGE = 1.0
#: BM25's constants for how often two words stand together.
K1 = 1.2
B = 0.75
FIELD = "body"


class Pair(NamedTuple):
    """Two adjacent query words, found together."""

    query: Query
    terms: tuple[str, str]
    weight: float
    counted: bool
    """Score how often they are together (BM25), or only whether they are."""


class Coverage(Query):
    """See the module docstring."""

    def __init__(self, slots: list[Query], terms: list[tuple[str, ...]], pairs: list[Pair],
                 exact: Query, boost: float = 1.0) -> None:
        self.slots, self.slot_terms, self.pairs, self.exact = slots, terms, pairs, exact
        self.boost = boost

    def __repr__(self) -> str:
        return f"Coverage({self.slots!r}, {self.pairs!r}, {self.exact!r})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Coverage)
                and (self.slots, self.slot_terms, self.pairs, self.exact)
                == (other.slots, other.slot_terms, other.pairs, other.exact))

    def __hash__(self) -> int:
        return hash((tuple(self.slots), tuple(self.slot_terms), tuple(self.pairs), self.exact))

    def is_leaf(self) -> bool:
        return False

    def children(self) -> Iterator[Query]:
        return iter([*self.slots, *(p.query for p in self.pairs), self.exact])

    def apply(self, fn: Callable[[Query], Query]) -> Coverage:
        return Coverage([fn(q) for q in self.slots], self.slot_terms,
                        [p._replace(query=fn(p.query)) for p in self.pairs], fn(self.exact),
                        self.boost)

    def normalize(self) -> Coverage:
        return self.apply(lambda q: q.normalize())

    def estimate_size(self, ixreader: Any) -> int:
        size = sum(int(q.estimate_size(ixreader)) for q in self.slots)
        return min(size, int(ixreader.doc_count()))

    def matcher(self, searcher: Any, context: Any = None) -> Matcher:
        top = searcher.get_parent()
        reader = top.reader()

        def idf(term: str) -> float:
            return float(top.idf(FIELD, term)) if (FIELD, term) in reader else 0.0

        weights = [max(map(idf, terms), default=0.0) for terms in self.slot_terms]
        pairs = [_PairMatcher(p.query.matcher(searcher, context),
                              p.weight * (idf(p.terms[0]) + idf(p.terms[1])) / 2, p.counted)
                 for p in self.pairs]
        lengths = _Lengths(searcher.reader(), float(top.avg_field_length(FIELD)))
        return _CoverageMatcher([q.matcher(searcher, context) for q in self.slots], weights,
                                pairs, self.exact.matcher(searcher, context), lengths)


class _Lengths:
    """BM25's saturation of a count, normalised by the length of a document's body."""

    def __init__(self, reader: Any, average: float) -> None:
        self.reader, self.average = reader, average or 1.0

    def saturate(self, tf: int, docnum: int) -> float:
        length = float(self.reader.doc_field_length(docnum, FIELD, 1))
        norm = K1 * (1 - B + B * length / self.average)
        return tf * (K1 + 1) / (tf + norm)


class _PairMatcher(NamedTuple):
    matcher: Matcher
    weight: float
    counted: bool


class _CoverageMatcher(Matcher):
    """The matcher of :class:`Coverage` (on one segment)."""

    def __init__(self, slots: list[Matcher], weights: list[float], pairs: list[_PairMatcher],
                 exact: Matcher, lengths: _Lengths) -> None:
        self.slots, self.weights, self.pairs, self.exact = slots, weights, pairs, exact
        self.lengths = lengths
        self.total = sum(weights)

    def is_active(self) -> bool:
        return any(m.is_active() for m in self.slots)

    def id(self) -> int:
        return min(int(m.id()) for m in self.slots if m.is_active())

    def next(self) -> None:
        here = self.id()
        for m in self.slots:
            if m.is_active() and m.id() == here:
                m.next()

    def skip_to(self, id: int) -> None:  # noqa: A002 - whoosh's name
        for m in self.slots:
            if m.is_active() and m.id() < id:
                m.skip_to(id)

    def reset(self) -> None:
        for m in self._all():
            m.reset()

    def _all(self) -> list[Matcher]:
        return [*self.slots, *(p.matcher for p in self.pairs), self.exact]

    def copy(self) -> _CoverageMatcher:
        return _CoverageMatcher([m.copy() for m in self.slots], self.weights,
                                [p._replace(matcher=p.matcher.copy()) for p in self.pairs],
                                self.exact.copy(), self.lengths)

    def replace(self, minquality: float = 0) -> Matcher:
        return self

    def children(self) -> list[Matcher]:
        return self._all()

    def supports(self, astype: str) -> bool:
        return False

    def value(self) -> Any:
        return None

    def value_as(self, astype: str) -> Any:
        return None

    def supports_block_quality(self) -> bool:
        return False

    def max_quality(self) -> float:
        return float("inf")

    def score(self) -> float:
        here = self.id()
        total = 0.0
        got = 0.0
        for m, weight in zip(self.slots, self.weights, strict=True):
            if m.is_active() and m.id() == here:
                total += float(m.score())
                got += weight
        for p in self.pairs:
            if _on(p.matcher, here):
                total += p.weight * (self.lengths.saturate(len(p.matcher.spans()), here)
                                     if p.counted else 1.0)
        if self.total:
            total *= (got / self.total) ** COVERAGE
        if _on(self.exact, here):
            total += float(self.exact.score())
        return total


def _on(m: Matcher, here: int) -> bool:
    """Whether matcher ``m`` (moved forward to ``here`` if behind) is on document ``here``."""
    if m.is_active() and m.id() < here:
        m.skip_to(here)
    return bool(m.is_active() and m.id() == here)


class BestOf(DisjunctionMax):
    """Any of the queries, scored by the best one (see the module docstring)."""

    def _matcher(self, subs: Any, searcher: Any, context: Any) -> Matcher:
        reader = searcher.reader()
        made: Matcher = self._tree_matcher(  # type: ignore[no-untyped-call]
            subs, _BestMatcher, searcher, context, lambda q: q.estimate_size(reader))
        return made


class _BestMatcher(DisjunctionMaxMatcher):
    """Scores only the sub-matchers standing on the current document."""

    def score(self) -> float:
        a, b = self.a, self.b
        if not a.is_active():
            return float(b.score())
        if not b.is_active():
            return float(a.score())
        here = min(a.id(), b.id())
        return max(float(m.score()) for m in (a, b) if m.id() == here)
