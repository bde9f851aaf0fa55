"""How the full-text index reads text: the analyzer, its fast indexing path and the schema.

Text is split into runs of Han characters and runs of everything else. Only the Han
runs are segmented (``segment.py``: rjieba, and the cuts remembered between updates);
other runs are split into words, lowercased, English stop words dropped, and stemmed
(Porter2). Positions are consecutive across runs, so phrases work in both languages and
across their seams (``PostgreSQL的VACUUM``). The same analysis serves queries, snippets
(:func:`find_terms`) and related documents. Pickled with the schema, so the classes
here are part of an index's format (``INDEX_VERSION``).
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterable, Iterator
from itertools import accumulate
from typing import Any

from whoosh.analysis import STOP_WORDS, IDTokenizer, LowercaseFilter, Token, Tokenizer
from whoosh.fields import ID, KEYWORD, STORED, TEXT, Schema
from whoosh.formats import Positions
from whoosh.lang.porter2 import stem as _porter
from whoosh.system import _INT_SIZE as _UINT
from whoosh.system import pack_uint

from studykb.search.state import INDEX_VERSION
from studykb.text import segment

_TOKENS = re.compile(rf"([{segment.HAN}]+)|\d+(?:[.,]\d+)+|[^\W{segment.HAN}]+")
_STOP = frozenset(STOP_WORDS)
_STEMS: dict[str, str] = {}


def _stem(word: str) -> str:
    got = _STEMS.get(word)
    if got is None:
        got = _porter(word) if word.isascii() and word.isalpha() else word
        if len(_STEMS) < 200_000:
            _STEMS[word] = got
    return got


class MixedTokenizer(Tokenizer):
    """Chinese/English tokenizer: segments Han runs with jieba, stems the rest.

    It does the whole analysis itself (lowercase, stop words, stemming) so that one
    ``Token`` object is reused for every word, which is what keeps indexing fast.
    """

    def __init__(self) -> None:
        self.version = INDEX_VERSION  # pickled with the schema: tells an old index apart

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self))

    def __call__(self, value: str, positions: bool = False, chars: bool = False,  # type: ignore[override]
                 keeporiginal: bool = False, removestops: bool = True, start_pos: int = 0,
                 start_char: int = 0, tokenize: bool = True, mode: str = "",
                 **kwargs: Any) -> Iterator[Token]:
        t: Any = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        t.boost = 1.0
        t.stopped = False
        if not tokenize:  # wildcard and prefix terms: lowercase, stem a plain word
            text = value.lower()
            t.original = value
            t.text = _stem(text) if text.isascii() and text.isalpha() else text
            if positions:
                t.pos = start_pos
            if chars:
                t.startchar, t.endchar = start_char, start_char + len(value)
            yield t
            return
        expand = mode != "query"
        pos = start_pos
        for m in _TOKENS.finditer(value):
            run = m.group(1)
            if run is None:
                word = m.group().lower()
                if word in _STOP:
                    if removestops:
                        continue
                    t.stopped = True
                else:
                    t.stopped = False
                t.text = _stem(word)
                if keeporiginal:
                    t.original = m.group()
                if positions:
                    t.pos = pos
                if chars:
                    t.startchar = start_char + m.start()
                    t.endchar = start_char + m.end()
                yield t
                if not t.stopped:
                    pos += 1
                continue
            t.stopped = False
            base = start_char + m.start()
            for word, start, end in segment.jieba().tokenize(run):
                t.text = word
                if keeporiginal:
                    t.original = word
                if positions:
                    t.pos = pos
                if chars:
                    t.startchar, t.endchar = base + start, base + end
                yield t
                if expand and end - start > 2:
                    for piece, at in segment.pieces(word):
                        t.text = piece
                        if keeporiginal:
                            t.original = piece
                        if chars:
                            t.startchar = base + start + at
                            t.endchar = t.startchar + len(piece)
                        yield t
                pos += 1


ANALYZER = MixedTokenizer()


def term_positions(text: str, start: int = 0,
                   poses: dict[str, list[int]] | None = None) -> dict[str, list[int]]:
    """term -> positions, as :class:`MixedTokenizer` indexes ``text`` (the fast path).

    The same words and positions as the tokenizer in ``index`` mode, without building a
    ``Token`` per word: this is where most of the indexing time went. Positions start at
    ``start``; terms are added to ``poses`` when given.
    """
    poses = {} if poses is None else poses
    pos = start
    stems = _STEMS
    segments = segment.SEGMENTS.runs
    for m in _TOKENS.finditer(text):
        run = m.group(1)
        if run is None:
            word = m.group().lower()
            if word in _STOP:
                continue
            term = stems.get(word) or _stem(word)
            got = poses.get(term)
            if got is None:
                poses[term] = [pos]
            else:
                got.append(pos)
            pos += 1
            continue
        cut = segments.get(run) or segment.SEGMENTS.cut(run)
        for word, pieces in cut:
            got = poses.get(word)
            if got is None:
                poses[word] = [pos]
            else:
                got.append(pos)
            for piece in pieces:
                got = poses.get(piece)
                if got is None:
                    poses[piece] = [pos]
                elif got[-1] != pos:
                    got.append(pos)
            pos += 1
    return poses


class FastPositions(Positions):
    """whoosh's ``Positions`` format, fed by :func:`term_positions` and stored as packed
    integers instead of a pickle (both cheaper per posting).

    A value may also be a tuple of ``(text, weight)`` parts, indexed one after the other
    (consecutive positions): a word in a part of weight 5 counts as five occurrences for
    scoring. That is how a document's names weigh more than its body with a single
    posting list per word, which keeps queries fast (separate boosted name fields made
    every query three times slower).
    """

    def word_values(self, value: Any, analyzer: Any,  # type: ignore[override]
                    **kwargs: Any) -> Iterable[tuple[Any, int, float, bytes]]:
        if not isinstance(analyzer, MixedTokenizer):
            yield from super().word_values(value, analyzer, **kwargs)
            return
        fb = self.field_boost
        if isinstance(value, str):
            for term, poslist in term_positions(value).items():
                yield term, len(poslist), len(poslist) * fb, self.encode(poslist)
            return
        poses: dict[str, list[int]] = {}
        weights: dict[str, float] = {}
        pos = 0
        for text, weight in value:
            part = term_positions(text, pos)
            for term, poslist in part.items():
                pos = max(pos, poslist[-1] + 1)
                weights[term] = weights.get(term, 0.0) + weight * len(poslist)
                got = poses.get(term)
                if got is None:
                    poses[term] = poslist
                else:
                    got.extend(poslist)
        for term, poslist in poses.items():
            yield term, len(poslist), weights[term] * fb, self.encode(poslist)

    def encode(self, poslist: Any) -> bytes:
        deltas = array("I", poslist)
        for i in range(len(deltas) - 1, 0, -1):
            deltas[i] -= deltas[i - 1]
        return pack_uint(len(deltas)) + deltas.tobytes()

    def decode_positions(self, valuestring: bytes) -> list[int]:
        deltas = array("I")
        deltas.frombytes(valuestring[_UINT:])
        return list(accumulate(deltas))


def analyze(text: str, mode: str = "query") -> list[str]:
    """The index terms of ``text`` (``mode="index"`` adds the pieces of long Chinese words)."""
    return [t.text for t in ANALYZER(text, mode=mode)]


def spans(text: str) -> list[tuple[str, int, int]]:
    """(term, start, end) of every indexed term in ``text``, stop words left out."""
    return [(t.text, t.startchar, t.endchar) for t in ANALYZER(text, chars=True, mode="index")]


def find_terms(text: str, terms: frozenset[str] | set[str]) -> list[tuple[str, int, int]]:
    """(term, start, end) of the places in ``text`` that hold one of ``terms``, without
    segmenting: English words are stemmed, Chinese terms are found as substrings (a
    Chinese term is written as it is indexed). For snippets; no overlaps, in order."""
    han = sorted((t for t in terms if segment.HAN_RUN.match(t)), key=len, reverse=True)
    found: list[tuple[str, int, int]] = []
    for m in _TOKENS.finditer(text):
        run = m.group(1)
        if run is None:
            word = m.group().lower()
            if word not in _STOP and _stem(word) in terms:
                found.append((_stem(word), m.start(), m.end()))
            continue
        taken: list[tuple[int, int]] = []
        for term in han:
            at = run.find(term)
            while at >= 0:
                start, end = m.start() + at, m.start() + at + len(term)
                if all(end <= s or start >= e for s, e in taken):
                    taken.append((start, end))
                    found.append((term, start, end))
                at = run.find(term, at + len(term))
    found.sort(key=lambda f: f[1])
    return found


def surface_forms(text: str) -> dict[str, str]:
    """term -> the first word of ``text`` that gave it (``decod`` -> ``decoding``)."""
    out: dict[str, str] = {}
    t: Any
    for t in ANALYZER(text, keeporiginal=True, mode="index"):
        out.setdefault(t.text, t.original.lower() if t.original.isascii() else t.original)
    return out


def _lower() -> Any:
    return IDTokenizer() | LowercaseFilter()


def _text(stored: bool = False) -> Any:
    analyzer: Any = MixedTokenizer()
    field = TEXT(analyzer=analyzer, phrase=True, stored=stored)
    field.format = FastPositions()
    return field


def fold_name(name: str) -> str:
    """A name as the ``exact`` field holds it: casefolded, spaces squeezed, no commas."""
    return " ".join(name.replace(",", " ").split()).casefold()


def make_schema() -> Schema:
    return Schema(
        key=ID(stored=True, unique=True, sortable=True),
        path=ID(stored=True),
        sig=STORED(),
        id=ID(stored=True, analyzer=_lower()),
        exact=KEYWORD(commas=True),
        type=ID(stored=True),
        title=_text(stored=True),
        aliases=_text(),
        tags=_text(),
        body=_text(),
        tag=KEYWORD(stored=True, lowercase=True, commas=True),
        course=KEYWORD(stored=True, commas=True),
        status=ID(stored=True),
        level=ID(stored=True),
        kind=ID(stored=True, analyzer=_lower()),
        date=ID(stored=True),
    )
