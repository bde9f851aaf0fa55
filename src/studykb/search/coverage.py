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
``replace=0`` is used anyway, see :func:`studykb.search.searcher._top`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from whoosh.matching.binary import DisjunctionMaxMatcher
from whoosh.matching.mcore import Matcher
from whoosh.query.compound import DisjunctionMax
from whoosh.query.qcore import Query

from studykb.search.scoring import live_average

#: A document's score is multiplied by the share of the query's slots it matches, to
#: this power (a note with half of what the query asks for gets 0.5 ** COVERAGE).
COVERAGE = 1.0
#: BM25's constants for how often two words stand together.
K1 = 1.2
B = 0.75
FIELD = "body"


class Pair(NamedTuple):
    """Two adjacent query words, and how much finding them together counts."""

    terms: tuple[str, str]
    weight: float
    """1, or less when one of them is a function word."""
    named_only: bool = False
    """Both are in one topic name of the query: only a title or alias holding them counts
    (the topic's slot scores the phrase in the body)."""


class Together(NamedTuple):
    """What two adjacent query words standing together are worth (see ranking.py)."""

    phrase: float
    """Per BM25 of how often they form a phrase in the body."""
    near: float
    """Per BM25 of how often they stand within ``window`` words of each other."""
    window: int
    named: float
    """When they form a phrase in a title or alias (once)."""
    name_fields: tuple[str, ...] = ("title", "aliases")


class Coverage(Query):
    """See the module docstring."""

    def __init__(
        self,
        slots: list[Query],
        terms: list[tuple[str, ...]],
        pairs: list[Pair],
        exact: Query,
        together: Together,
        first: Query | None = None,
        boost: float = 1.0,
    ) -> None:
        self.slots, self.slot_terms, self.pairs, self.exact = slots, terms, pairs, exact
        self.together, self.boost = together, boost
        self.first = first
        """A fast query (the terms alone, any of them) whose best documents this one
        re-ranks (see :func:`studykb.search.searcher.run`)."""

    def __repr__(self) -> str:
        return f"Coverage({self.slots!r}, {self.pairs!r}, {self.exact!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Coverage) and (
            self.slots,
            self.slot_terms,
            self.pairs,
            self.exact,
        ) == (other.slots, other.slot_terms, other.pairs, other.exact)

    def __hash__(self) -> int:
        return hash((tuple(self.slots), tuple(self.slot_terms), tuple(self.pairs), self.exact))

    def is_leaf(self) -> bool:
        return False

    def children(self) -> Iterator[Query]:
        return iter([*self.slots, self.exact])

    def apply(self, fn: Callable[[Query], Query]) -> Coverage:
        return Coverage(
            [fn(q) for q in self.slots],
            self.slot_terms,
            self.pairs,
            fn(self.exact),
            self.together,
            None if self.first is None else fn(self.first),
            self.boost,
        )

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
        pairs = [
            p._replace(weight=p.weight * (idf(p.terms[0]) + idf(p.terms[1])) / 2)
            for p in self.pairs
        ]
        lengths = _Lengths(searcher.reader(), live_average(top, FIELD))
        return _CoverageMatcher(
            [q.matcher(searcher, context) for q in self.slots],
            weights,
            _Positions(searcher.reader(), pairs, self.together),
            pairs,
            self.exact.matcher(searcher, context),
            lengths,
        )


class _Lengths:
    """BM25's saturation of a count, normalised by the length of a document's body."""

    def __init__(self, reader: Any, average: float) -> None:
        self.reader, self.average = reader, average or 1.0

    def saturate(self, tf: int, docnum: int) -> float:
        length = float(self.reader.doc_field_length(docnum, FIELD, 1))
        norm = K1 * (1 - B + B * length / self.average)
        return tf * (K1 + 1) / (tf + norm)


class _Positions:
    """Where the words of the pairs stand in a document (moving forward through one
    segment's postings)."""

    def __init__(self, reader: Any, pairs: list[Pair], together: Together) -> None:
        self.together = together
        self.fields = (FIELD, *together.name_fields)
        words = {t for p in pairs for t in p.terms}
        self.postings: dict[tuple[str, str], Matcher] = {}
        for field in self.fields:
            for word in words:
                if (field, word) in reader:
                    self.postings[field, word] = reader.postings(field, word)

    def of(self, field: str, word: str, docnum: int) -> list[int]:
        m = self.postings.get((field, word))
        if m is None:
            return []
        if m.is_active() and m.id() < docnum:
            m.skip_to(docnum)
        if not m.is_active() or m.id() != docnum:
            return []
        return list(m.value_as("positions"))


def together_score(pair: Pair, where: _Positions, lengths: _Lengths, docnum: int) -> float:
    """What finding the pair's words together in document ``docnum`` adds."""
    a, b = pair.terms
    how = where.together
    score = 0.0
    first, second = (
        ([], []) if pair.named_only else (where.of(FIELD, a, docnum), where.of(FIELD, b, docnum))
    )
    if first and second:
        after = set(second)
        phrase = sum(1 for p in first if p + 1 in after)
        near = sum(1 for p in first if any(abs(q - p) <= how.window for q in second))
        if phrase:
            score += how.phrase * lengths.saturate(phrase, docnum)
        if near:
            score += how.near * lengths.saturate(near, docnum)
    for field in how.name_fields:
        named = set(where.of(field, b, docnum))
        if named and any(p + 1 in named for p in where.of(field, a, docnum)):
            score += how.named
            break
    return pair.weight * score


class _CoverageMatcher(Matcher):
    """The matcher of :class:`Coverage` (on one segment)."""

    def __init__(
        self,
        slots: list[Matcher],
        weights: list[float],
        where: _Positions,
        pairs: list[Pair],
        exact: Matcher,
        lengths: _Lengths,
    ) -> None:
        self.slots, self.weights, self.where, self.pairs = slots, weights, where, pairs
        self.exact, self.lengths = exact, lengths
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
        return [*self.slots, *self.where.postings.values(), self.exact]

    def copy(self) -> _CoverageMatcher:
        raise NotImplementedError("a plain query's matcher is used once, in order")

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
        for pair in self.pairs:
            total += together_score(pair, self.where, self.lengths, here)
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
        made: Matcher = self._tree_matcher(
            subs, _BestMatcher, searcher, context, lambda q: q.estimate_size(reader)
        )
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
