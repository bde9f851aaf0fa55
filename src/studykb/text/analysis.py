"""How studykb reads text into terms, for the search index and for related documents.

Text is split into runs of Han characters and runs of everything else. Only the Han
runs are segmented (:mod:`studykb.text.segment`: rjieba, and the cuts remembered
between updates); other runs are split into words, lowercased, English stop words
dropped, and stemmed (Porter2, PyStemmer). Positions are consecutive across runs, so
phrases work in both languages and across their seams (``PostgreSQL的VACUUM``).

The analysis is a value, an :class:`Analyser`: the words its stemmer leaves alone (see
:mod:`studykb.text.terms`; a vault's come from its topic table,
:meth:`studykb.vault.topics.TopicTable.analyser`) and the stems it has worked out. Two
analysers with different protected words live side by side in one process; nothing here
is set process-wide (the Chinese cuts, which depend on rjieba alone, are the process's:
:func:`studykb.text.segment.segments`).

Two ways to read the same text, giving the same terms at the same positions:
:meth:`Analyser.tokens` (every term with its characters, for queries and snippets) and
:meth:`Analyser.term_positions` (term -> positions, the fast path that fills the index);
and :meth:`Analyser.term_counts`, the counts of :meth:`~Analyser.tokens`' terms without
the positions (the fast path of related documents' term vectors).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import Stemmer

from studykb.text import segment
from studykb.text.terms import TECH_TERMS, digest, light_stem, one_word_names

_TOKENS = re.compile(rf"([{segment.HAN}]+)|\d+(?:[.,]\d+)+|[^\W{segment.HAN}]+")

#: English words too common to say anything about a text (not indexed).
STOP_WORDS: frozenset[str] = frozenset(
    (
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "for",
        "from",
        "have",
        "if",
        "in",
        "is",
        "it",
        "may",
        "not",
        "of",
        "on",
        "or",
        "tbd",
        "that",
        "the",
        "this",
        "to",
        "us",
        "we",
        "when",
        "will",
        "with",
        "yet",
        "you",
        "your",
    )
)
#: Stems an analyser remembers; a long-lived process starts over past this many.
STEMS_MAX = 200_000


class Term(NamedTuple):
    """One term read from a text."""

    text: str
    """The term as indexed (a stem, or a Chinese word)."""
    pos: int
    """Its position: words count, stop words and the shorter words inside a Chinese word
    (at their word's position) do not."""
    start: int
    """Offset of its first character in the text."""
    end: int
    """Offset after its last character."""
    original: str
    """The word as written."""
    stopped: bool = False
    """An English stop word (given only with ``keep_stops``)."""


@dataclass(frozen=True)
class Analyser:
    """How text is read into terms: which words the stemmer leaves alone, and the stems
    worked out so far (a cache of this value, not part of it: two analysers with the
    same protected words are equal)."""

    protected: frozenset[str] = TECH_TERMS
    """The words the stemmer leaves alone (see :mod:`studykb.text.terms`)."""
    cuts: segment.Segments | None = field(default=None, repr=False, compare=False)
    """Where Chinese cuts are remembered: the process's (:func:`segment.segments`) unless
    given (a test's own)."""
    _stems: dict[str, str] = field(default_factory=dict, init=False, repr=False, compare=False)
    _stemmer: Any = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_stemmer", Stemmer.Stemmer("english"))

    def __reduce__(self) -> tuple[Any, ...]:  # to a worker: the words, not the caches
        return (Analyser, (self.protected,))

    @classmethod
    def of_names(cls, names: Iterable[str]) -> Analyser:
        """:data:`~studykb.text.terms.TECH_TERMS` plus the one-word names among ``names``
        (topic ids, titles, aliases) protected."""
        return cls(TECH_TERMS | one_word_names(names))

    @property
    def digest(self) -> str:
        """A short fingerprint of the protected words (what an index read with them
        records)."""
        return digest(self.protected)

    def stem(self, word: str) -> str:
        """The index term of a lowercased non-Han word: a protected term without its
        plural ``s``, else its Porter2 stem when it is plain ASCII letters, else the word
        itself (``3.5``, ``café``)."""
        stems = self._stems
        got = stems.get(word)
        if got is None:
            if word.isascii() and word.isalpha():
                got = light_stem(word, self.protected) or self._stemmer.stemWord(word)
            else:
                got = word
            if len(stems) > STEMS_MAX:
                stems.clear()
            stems[word] = got
        return got

    def tokens(
        self, text: str, *, pieces: bool = True, keep_stops: bool = False, start_pos: int = 0
    ) -> Iterator[Term]:
        """Every term of ``text`` in order.

        ``pieces``: also give, at its position, the shorter dictionary words inside a long
        Chinese word (``数据并行`` gives ``并行``), as the index holds them; a query leaves
        them out. ``keep_stops``: give stop words too, marked (they take no position).
        """
        pos = start_pos
        for m in _TOKENS.finditer(text):
            run = m.group(1)
            if run is None:
                word = m.group()
                lower = word.lower()
                if lower in STOP_WORDS:
                    if keep_stops:
                        yield Term(self.stem(lower), pos, m.start(), m.end(), word, True)
                    continue
                yield Term(self.stem(lower), pos, m.start(), m.end(), word)
                pos += 1
                continue
            base = m.start()
            for word, start, end in segment.jieba().tokenize(run):
                yield Term(word, pos, base + start, base + end, word)
                if pieces and end - start > 2:
                    for piece, at in segment.pieces(word):
                        first = base + start + at
                        yield Term(piece, pos, first, first + len(piece), piece)
                pos += 1

    def term_positions(
        self, text: str, start: int = 0, poses: dict[str, list[int]] | None = None
    ) -> dict[str, list[int]]:
        """term -> positions, as :meth:`tokens` reads ``text`` (the fast path of indexing).

        The same terms and positions, without building a :class:`Term` per word: this is
        where most of the indexing time went. Positions start at ``start``; terms are added
        to ``poses`` when given.
        """
        poses = {} if poses is None else poses
        pos = start
        stems = self._stems
        cuts = self.cuts or segment.segments()
        remembered = cuts.runs
        for m in _TOKENS.finditer(text):
            run = m.group(1)
            if run is None:
                word = m.group().lower()
                if word in STOP_WORDS:
                    continue
                term = stems.get(word) or self.stem(word)
                got = poses.get(term)
                if got is None:
                    poses[term] = [pos]
                else:
                    got.append(pos)
                pos += 1
                continue
            cut = remembered.get(run) or cuts.cut(run)
            for word, inner in cut:
                got = poses.get(word)
                if got is None:
                    poses[word] = [pos]
                else:
                    got.append(pos)
                for piece in inner:
                    got = poses.get(piece)
                    if got is None:
                        poses[piece] = [pos]
                    elif got[-1] != pos:
                        got.append(pos)
                pos += 1
        return poses

    def term_counts(self, text: str) -> tuple[Counter[str], dict[str, str]]:
        """(term -> how often :meth:`tokens` gives it, term -> its first written form),
        without building a :class:`Term` per word; both in the order terms first occur. The
        written form is lowercased when it is ASCII."""
        counts: Counter[str] = Counter()
        written: dict[str, str] = {}
        stems = self._stems
        cuts = self.cuts or segment.segments()
        remembered = cuts.runs
        for m in _TOKENS.finditer(text):
            run = m.group(1)
            if run is None:
                word = m.group()
                lower = word.lower()
                if lower in STOP_WORDS:
                    continue
                term = stems.get(lower) or self.stem(lower)
                counts[term] += 1
                if term not in written:
                    written[term] = lower if word.isascii() else word
                continue
            for cut, inner in remembered.get(run) or cuts.cut(run):
                counts[cut] += 1
                written.setdefault(cut, cut)
                for piece in inner:
                    counts[piece] += 1
                    written.setdefault(piece, piece)
        return counts, written

    def analyze(self, text: str, mode: str = "query") -> list[str]:
        """The terms of ``text`` (``mode="index"`` adds the pieces of long Chinese words)."""
        return [t.text for t in self.tokens(text, pieces=mode != "query")]

    def spans(self, text: str) -> list[tuple[str, int, int]]:
        """(term, start, end) of every indexed term in ``text``, stop words left out."""
        return [(t.text, t.start, t.end) for t in self.tokens(text)]

    def find_terms(self, text: str, terms: frozenset[str] | set[str]) -> list[tuple[str, int, int]]:
        """(term, start, end) of the places in ``text`` that hold one of ``terms``, without
        segmenting: English words are stemmed, Chinese terms are found as substrings (a
        Chinese term is written as it is indexed). For snippets; no overlaps, in order."""
        han = sorted((t for t in terms if t and segment.is_han(t[0])), key=len, reverse=True)
        found: list[tuple[str, int, int]] = []
        for m in _TOKENS.finditer(text):
            run = m.group(1)
            if run is None:
                word = m.group().lower()
                if word not in STOP_WORDS and self.stem(word) in terms:
                    found.append((self.stem(word), m.start(), m.end()))
                continue
            taken: list[tuple[int, int]] = []
            for term in han:
                at = run.find(term)
                while at >= 0:
                    first, last = m.start() + at, m.start() + at + len(term)
                    if all(last <= s or first >= e for s, e in taken):
                        taken.append((first, last))
                        found.append((term, first, last))
                    at = run.find(term, at + len(term))
        found.sort(key=lambda f: f[1])
        return found

    def rough_terms(self, text: str) -> frozenset[str]:
        """Terms of ``text`` without cutting its Chinese (and so without loading the
        dictionary): English words as indexed, and each run of Han characters whole. Good
        for :meth:`find_terms`, which finds a Chinese term as a substring."""
        out: set[str] = set()
        for m in _TOKENS.finditer(text):
            run = m.group(1)
            if run is not None:
                out.add(run)
            elif (word := m.group().lower()) not in STOP_WORDS:
                out.add(self.stem(word))
        return frozenset(out)

    def surface_forms(self, text: str) -> dict[str, str]:
        """term -> the first word of ``text`` that gave it (``decod`` -> ``decoding``)."""
        out: dict[str, str] = {}
        for t in self.tokens(text):
            out.setdefault(t.text, t.original.lower() if t.original.isascii() else t.original)
        return out


def fold_name(name: str) -> str:
    """A name as exact-name lookups compare it: casefolded, spaces squeezed, no commas."""
    return " ".join(name.replace(",", " ").split()).casefold()
