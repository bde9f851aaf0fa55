"""The whoosh query that ranks a plain query like a librarian would.

A document's score is BM25F (names count :data:`studykb.search.records.NAME_WEIGHT` times,
tags twice, the body once) over what the query asks for, after the *sequential
dependence model* of Metzler and Croft (2005), with the topic names as a thesaurus:

* **slots**: each word of the query (a function word such as 的 or "how" counts
  :data:`WEAK`), and each topic it names, scored by the best of the name as written
  (as a phrase; its words apart count :data:`LOOSE`) and the topic's other names (each
  as a phrase, :data:`OTHER_NAMES`: a document in the other language is found, a little
  below one using the query's own words);
* **coverage**: the score is multiplied by the share of the slots a document matches,
  each slot weighing as much as its rarest term (:mod:`studykb.search.coverage`);
* **together**: each pair of adjacent words written together (``数据 并行``) adds BM25
  of how often they stand as a phrase (:data:`PHRASE`) and within :data:`WINDOW` words
  (:data:`NEAR`) in the body, and :data:`NAMED` when they are a phrase in a title or
  alias: notes where the words stand together rise above those where they are
  scattered, in both languages;
* **the name itself**: a document whose title, alias or id is the whole query gets
  :data:`EXACT`.

The weights were compared on ``benchmarks/eval_search.py`` (see the search guide); the
ranking is stable across a wide range of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from whoosh.query.compound import Or
from whoosh.query.positional import Phrase
from whoosh.query.qcore import NullQuery, Query
from whoosh.query.terms import Term

from studykb.search.coverage import BestOf, Coverage, Pair, Together
from studykb.text.analysis import Analyser, fold_name

if TYPE_CHECKING:
    from studykb.search.understand import Reading, Word

#: Weight of a function word of the query.
WEAK = 0.15
#: Weight of a topic's other name, against the name as the query wrote it.
OTHER_NAMES = 0.6
#: Weight of the words of a topic name written in the query, found apart.
LOOSE = 0.4
#: Weight of two adjacent query words found as a phrase in the body.
PHRASE = 3.0
#: Weight of two adjacent query words found within :data:`WINDOW` words of each other.
NEAR = 0.25
WINDOW = 8
#: Weight of two adjacent query words found as a phrase in a title or alias.
NAMED = 12.0
NAME_FIELDS = ("title", "aliases")
#: Weight of a document whose title, alias or id is the whole query.
EXACT = 100.0
FIELD = "body"

Slot = tuple[Query, tuple[str, ...], bool]


def plain_query(reading: Reading, proximity: bool = True) -> Query:
    """The whoosh query for a plain query (see the module docstring)."""
    slots = _slots(reading)
    if not slots:
        return NullQuery
    pairs = (
        [
            Pair((a.term, b.term), WEAK if (a.weak or b.weak) else 1.0, _one_name(reading, a, b))
            for a, b in reading.pairs()
        ]
        if proximity
        else []
    )
    exact = exact_query(reading.text)
    return Coverage(
        [q for q, _t, _weak in slots],
        [() if weak else terms for _q, terms, weak in slots],
        pairs,
        exact,
        Together(PHRASE, NEAR, WINDOW, NAMED, NAME_FIELDS),
        Or([*_bag(reading), exact]),
    )


def _one_name(reading: Reading, a: Word, b: Word) -> bool:
    """Whether two words are in one topic name of the query (whose slot scores them as a
    phrase in the body already: only a title or alias holding them counts again)."""
    return any(c.start <= a.start and b.end <= c.end for c in reading.concepts)


def _bag(reading: Reading) -> list[Query]:
    """Every term the query looks for, once, weighted: the fast first pass."""
    weights: dict[str, float] = {}
    for word in reading.words:
        weights[word.term] = max(weights.get(word.term, 0.0), WEAK if word.weak else 1.0)
    for name in reading.also:
        for term in _terms(name, reading.analyser):
            weights[term] = max(weights.get(term, 0.0), OTHER_NAMES)
    return [Term(FIELD, term, boost=w) for term, w in weights.items()]


def _slots(reading: Reading) -> list[Slot]:
    """(query, its terms, weak) per thing the query asks for: a topic it names (its
    words, or the best of its other names), or a word outside any topic name."""
    out: list[Slot] = []
    seen: set[str] = set()
    inside: set[int] = set()
    for concept in reading.concepts:
        own = [w for w in reading.words if concept.start <= w.start < concept.end]
        inside.update(id(w) for w in own)
        names = [name_query(n, OTHER_NAMES, reading.analyser) for n in concept.others]
        options = [q for q in (*_own(own), *names) if q is not None]
        terms = {w.term for w in own} | {
            t for n in concept.others for t in _terms(n, reading.analyser)
        }
        if options:
            out.append((BestOf(options), tuple(sorted(terms)), False))
    for word in reading.words:
        if id(word) in inside or word.term in seen:
            continue
        seen.add(word.term)
        out.append(
            (Term(FIELD, word.term, boost=WEAK if word.weak else 1.0), (word.term,), word.weak)
        )
    return out


def _own(words: list[Word]) -> list[Query]:
    """A topic name as the query wrote it: the phrase, or its words apart (:data:`LOOSE`)."""
    if not words:
        return []
    if len(words) == 1:
        return [Term(FIELD, words[0].term)]
    terms = [w.term for w in words]
    return [Phrase(FIELD, terms), Or([Term(FIELD, t) for t in terms], boost=LOOSE)]


def _terms(name: str, analyser: Analyser) -> list[str]:
    return [t.text for t in analyser.tokens(name, pieces=False)]


def name_query(name: str, boost: float, analyser: Analyser) -> Query | None:
    """A name as a phrase of its terms as ``analyser`` reads them (a single term alone);
    None when it has none."""
    terms = _terms(name, analyser)
    if not terms:
        return None
    if len(terms) == 1:
        return Term(FIELD, terms[0], boost=boost)
    return Phrase(FIELD, terms, boost=boost)


def exact_query(text: str) -> Query:
    """Matches the documents whose title, alias or id is ``text``."""
    return Term("exact", fold_name(text.strip().strip('"')), boost=EXACT)


def terms_of(reading: Reading) -> frozenset[str]:
    """Index terms a plain query looks for (its words and the other names'), to highlight."""
    out = {w.term for w in reading.words}
    for name in reading.also:
        out.update(_terms(name, reading.analyser))
    return frozenset(out)
