"""BM25F with each field's lengths read once per segment: the speed seam of scoring.

whoosh's BM25F scorer asks the segment reader for a document's field length at every
posting it scores: a column lookup, a file read and a byte decoding each time, about
40 % of a common word's query at 10k documents. :class:`BM25FTable` scores exactly as
:class:`whoosh.scoring.BM25F` does, but for a term found in at least :data:`MANY`
documents it reads the field's length column once (one byte per document, decoded
through the same ``byte_to_length`` whoosh uses) and keeps the lengths with the segment
reader, so a long-lived searcher (``serve``, ``watch``, the language server) reads each
column once, and a query that scores thousands of postings looks each length up in a
list. A test compares every score with whoosh's own BM25F.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from math import log
from typing import Any
from weakref import WeakKeyDictionary

from whoosh.codec.whoosh3 import LENGTHS_COLUMN
from whoosh.columns import NumericColumn
from whoosh.reading import SegmentReader
from whoosh.scoring import BM25F, BM25FScorer
from whoosh.util.numeric import byte_to_length

from studykb.runtime import process

#: A term in at least this many documents of a segment has its field's lengths read
#: whole (reading them costs about what scoring this many postings the plain way does).
MANY = 1000

#: A stored byte -> the field length whoosh returns for it (0: no length, as whoosh3's
#: ``doc_field_length`` answers for a document without the field).
_DECODE: tuple[int | None, ...] = (None, *(byte_to_length(b) for b in range(1, 256)))


@dataclass
class _Kept:
    """What is kept with one segment reader, by field."""

    lengths: dict[str, list[int | None] | None] = field(default_factory=dict)
    """Lengths by document number (None: the field has none)."""
    totals: dict[str, int] = field(default_factory=dict)
    """The sum of the live documents' stored lengths."""


def _tables() -> WeakKeyDictionary[Any, _Kept]:
    """segment reader -> what this process keeps with it (as long as it lives)."""
    return process.once("search.reader-tables", WeakKeyDictionary)


class BM25FTable(BM25F):
    """BM25F over the documents a query can find, reading the lengths of a frequent
    term's field from one list per segment.

    whoosh's statistics count the documents an edit deleted but that stay in their
    segment until it is merged (the count, each term's document frequency, the total
    field length), so scores drift from those of a clean build with every edit, and so
    can the order. Here they are of the live documents only: their count, the live
    documents holding the term, and the average of their field lengths as each document
    stores it (one byte, so a merge that copies it keeps it): the same numbers whatever
    edits led to the index, hence the same scores as a clean build.
    """

    def idf(self, searcher: Any, fieldname: str, text: str) -> float:
        parent = searcher.get_parent()
        return log(parent.doc_count() / (live_frequency(parent, fieldname, text) + 1)) + 1

    def scorer(self, searcher: Any, fieldname: str, text: str, qf: int = 1) -> Any:
        if not searcher.schema[fieldname].scorable:
            return super().scorer(searcher, fieldname, text, qf)
        B = self._field_B.get(fieldname, self.B)  # noqa: N806 - BM25's name
        scorer = _LiveScorer(searcher, fieldname, text, B, self.K1, qf=qf)
        if searcher.doc_frequency(fieldname, text) >= MANY:
            lengths = field_lengths(searcher.reader(), fieldname)
            if lengths is not None:
                scorer.dfl = lengths.__getitem__
        return scorer


class _LiveScorer(BM25FScorer):
    """whoosh's BM25F scorer with the average field length of the live documents."""

    def __init__(
        self, searcher: Any, fieldname: str, text: str, B: float, K1: float, qf: int = 1
    ) -> None:
        parent = searcher.get_parent()
        self.idf = parent.idf(fieldname, text)
        self.avgfl = live_average(parent, fieldname) or 1
        self.B, self.K1, self.qf = B, K1, qf
        self.setup(searcher, fieldname, text)


def live_frequency(searcher: Any, fieldname: str, text: str) -> int:
    """How many live documents hold the term: whoosh's count (which includes deleted
    documents) less the deleted ones among its postings."""
    n = int(searcher.doc_frequency(fieldname, text))
    for reader, _base in searcher.reader().leaf_readers():
        deleted = sorted(reader.deleted_docs_set) if reader.has_deletions() else []
        if not deleted or (fieldname, text) not in reader:
            continue
        postings = reader.postings(fieldname, text)
        postings = getattr(postings, "child", postings)  # under the filter of the deleted,
        postings.reset()  # which moved it past the deleted documents it starts with
        for docnum in deleted:
            if not postings.is_active():
                break
            if postings.id() < docnum:
                postings.skip_to(docnum)
            if postings.is_active() and postings.id() == docnum:
                n -= 1
    return n


def live_average(searcher: Any, fieldname: str) -> float:
    """The average length of ``fieldname`` over the live documents, each as stored."""
    total = sum(_live_total(reader, fieldname) for reader, _b in searcher.reader().leaf_readers())
    return total / (searcher.doc_count() or 1)


def _live_total(reader: Any, fieldname: str) -> int:
    """The sum of the stored lengths of ``fieldname`` of a segment's live documents."""
    try:
        per_field = _tables().setdefault(reader, _Kept()).totals
    except TypeError:  # a reader that cannot be weakly referenced: no cache
        per_field = {}
    if fieldname not in per_field:
        lengths = field_lengths(reader, fieldname)
        if lengths is None:
            lengths = [
                reader.doc_field_length(d, fieldname, 0) for d in range(reader.doc_count_all())
            ]  # noqa: E501
        deleted = reader.deleted_docs_set if reader.has_deletions() else frozenset()
        per_field[fieldname] = sum(n for d, n in enumerate(lengths) if n and d not in deleted)
    return per_field[fieldname]


def field_lengths(reader: Any, fieldname: str) -> list[int | None] | None:
    """Every document's length in ``fieldname`` as whoosh stores it, read once per reader."""
    try:
        per_field = _tables().setdefault(reader, _Kept()).lengths
    except TypeError:  # a reader that cannot be weakly referenced: no table
        return None
    if fieldname not in per_field:
        per_field[fieldname] = _read_lengths(reader, fieldname)
    return per_field[fieldname]


def _read_lengths(reader: Any, fieldname: str) -> list[int | None] | None:
    """The segment's length column of ``fieldname`` through a per-document reader of its
    own (the codec's public API), or None for a reader of several segments."""
    if not isinstance(reader, SegmentReader):
        return None  # its segments' readers are the ones a query scores with
    column = f"_{fieldname}_len"  # whoosh3's name for a field's length column
    perdoc = reader.codec().per_document_reader(reader.storage(), reader.segment())
    try:
        if not perdoc.has_column(column):
            return None
        lengths = [_DECODE[b] for b in _stored(perdoc.column_reader(column, LENGTHS_COLUMN))]
    finally:
        perdoc.close()
    return lengths if len(lengths) == reader.doc_count_all() else None


def _stored(column: Any) -> Iterable[int]:
    """The values of a column of one-byte numbers, every document's, in one read.

    whoosh3 3.54's reader (pinned) reads them a byte at a time, a file read and a struct
    unpacking each: 11 ms for the body lengths of 10k documents, at every fresh process's
    first common word. Here its file's bytes are read at once; a column stored any other
    way is read through the reader's own iteration.
    """
    values: Iterable[int] = column
    if not isinstance(column, NumericColumn.Reader) or column._typecode != "B":  # noqa: SLF001
        return values
    stored: bytes = column._dbfile.get(column._basepos, column._count)  # noqa: SLF001
    default: int = column._default  # noqa: SLF001 - what the documents past the stored ones have
    return [*stored, *[default] * (column._doccount - column._count)]  # noqa: SLF001
