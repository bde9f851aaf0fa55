"""The search index's schema, and the text analysis of :mod:`studykb.text.analysis` in
the shape whoosh wants (a ``Tokenizer``, a positions format).

Pickled with the schema into the index's table of contents, so the classes here are
part of an index's format (its version is the code's: see :mod:`studykb.vault.cache`).
The analysis is not pickled: a schema is bound to an :class:`~studykb.text.analysis.Analyser`
(the vault's, from its topic table) when it is made (:func:`make_schema`), or, read
back from an index, by :func:`bind` where a writer or searcher is about to analyse text;
an unbound tokenizer refuses to run rather than guess.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator
from itertools import accumulate
from typing import Any

from whoosh.analysis import IDTokenizer, LowercaseFilter, Token, Tokenizer
from whoosh.fields import ID, KEYWORD, STORED, TEXT, Schema
from whoosh.formats import Positions
from whoosh.system import _INT_SIZE as _UINT
from whoosh.system import pack_uint

from studykb.search.state import INDEX_VERSION
from studykb.text.analysis import Analyser, fold_name

__all__ = ("FIELD_NAMES", "FastPositions", "MixedTokenizer", "bind", "fold_name", "make_schema")


class MixedTokenizer(Tokenizer):
    """Chinese/English tokenizer: :func:`studykb.text.analysis.tokens` as whoosh tokens.

    One ``Token`` object is reused for every word, as whoosh's own tokenizers do. Its
    :class:`Analyser` is never pickled (see :func:`bind`).
    """

    def __init__(self, analyser: Analyser | None = None) -> None:
        self.version = INDEX_VERSION  # pickled with the schema: tells an old index apart
        self.analyser = analyser

    def __getstate__(self) -> dict[str, Any]:
        return {"version": self.version}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.analyser = None

    def bound(self) -> Analyser:
        """The analyser this tokenizer reads with (an error when it has none)."""
        if self.analyser is None:
            raise RuntimeError(
                "studykb: a search schema read from an index was used before it was bound "
                "to an analyser (studykb.search.schema.bind)"
            )
        return self.analyser

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self))

    def __call__(
        self,
        value: str,
        positions: bool = False,
        chars: bool = False,
        keeporiginal: bool = False,
        removestops: bool = True,
        start_pos: int = 0,
        start_char: int = 0,
        tokenize: bool = True,
        mode: str = "",
        **kwargs: Any,
    ) -> Iterator[Token]:
        analyser = self.bound()
        t: Any = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        t.boost = 1.0
        t.stopped = False
        if not tokenize:  # wildcard and prefix terms: lowercase, stem a plain word
            text = value.lower()
            t.original = value
            t.text = analyser.stem(text)
            if positions:
                t.pos = start_pos
            if chars:
                t.startchar, t.endchar = start_char, start_char + len(value)
            yield t
            return
        for term in analyser.tokens(
            value, pieces=mode != "query", keep_stops=not removestops, start_pos=start_pos
        ):
            t.text = term.text
            t.stopped = term.stopped
            if keeporiginal:
                t.original = term.original
            if positions:
                t.pos = term.pos
            if chars:
                t.startchar, t.endchar = start_char + term.start, start_char + term.end
            yield t


class FastPositions(Positions):
    """whoosh's ``Positions`` format, fed by :meth:`Analyser.term_positions` and stored as packed
    integers instead of a pickle (both cheaper per posting).

    A value may also be a tuple of ``(text, weight)`` parts, indexed one after the other
    (consecutive positions): a word in a part of weight 5 counts as five occurrences for
    scoring. That is how a document's names weigh more than its body with a single
    posting list per word, which keeps queries fast (separate boosted name fields made
    every query three times slower).
    """

    def word_values(
        self,
        value: Any,
        analyzer: Any,
        **kwargs: Any,
    ) -> Iterable[tuple[Any, int, float, bytes]]:
        if not isinstance(analyzer, MixedTokenizer):
            yield from super().word_values(value, analyzer, **kwargs)
            return
        fb = self.field_boost
        term_positions = analyzer.bound().term_positions
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
        head: bytes = pack_uint(len(deltas))
        return head + deltas.tobytes()

    def decode_positions(self, valuestring: bytes) -> list[int]:
        deltas = array("I")
        deltas.frombytes(valuestring[_UINT:])
        return list(accumulate(deltas))


def _lower() -> Any:
    return IDTokenizer() | LowercaseFilter()


def _text(analyser: Analyser | None, stored: bool = False) -> Any:
    analyzer: Any = MixedTokenizer(analyser)
    field = TEXT(analyzer=analyzer, phrase=True, stored=stored)
    field.format = FastPositions()
    return field


def make_schema(analyser: Analyser | None = None) -> Schema:
    """The index's schema, its text fields read with ``analyser`` (None: unbound, as a
    schema read back from an index is until :func:`bind`)."""
    return Schema(
        key=ID(stored=True, unique=True, sortable=True),
        path=ID(stored=True),
        sig=STORED(),
        id=ID(stored=True, analyzer=_lower()),
        exact=KEYWORD(commas=True),
        type=ID(stored=True),
        title=_text(analyser, stored=True),
        aliases=_text(analyser),
        tags=_text(analyser),
        body=_text(analyser),
        tag=KEYWORD(stored=True, lowercase=True, commas=True),
        course=KEYWORD(stored=True, commas=True),
        status=ID(stored=True),
        level=ID(stored=True),
        kind=ID(stored=True, analyzer=_lower()),
        date=ID(stored=True),
    )


def bind(schema: Any, analyser: Analyser) -> Any:
    """``schema`` (read from an index: its own objects) with its text fields reading with
    ``analyser``; the schema itself."""
    for name in schema.names():
        tokenizer = getattr(schema[name], "analyzer", None)
        if isinstance(tokenizer, MixedTokenizer):
            tokenizer.analyser = analyser
    return schema


#: The names of the index's fields (an index with others is another version's).
FIELD_NAMES = tuple(sorted(make_schema().names()))
