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
from typing import Any
from weakref import WeakKeyDictionary

from whoosh.codec.whoosh3 import LENGTHS_COLUMN
from whoosh.columns import NumericColumn
from whoosh.reading import SegmentReader
from whoosh.scoring import BM25F, BM25FScorer
from whoosh.util.numeric import byte_to_length

#: A term in at least this many documents of a segment has its field's lengths read
#: whole (reading them costs about what scoring this many postings the plain way does).
MANY = 1000

#: A stored byte -> the field length whoosh returns for it (0: no length, as whoosh3's
#: ``doc_field_length`` answers for a document without the field).
_DECODE: list[int | None] = [None, *(byte_to_length(b) for b in range(1, 256))]

#: segment reader -> field -> lengths by document number (None: the field has none).
_tables: WeakKeyDictionary[Any, dict[str, list[int | None] | None]] = WeakKeyDictionary()


class BM25FTable(BM25F):
    """BM25F reading the lengths of a frequent term's field from one list per segment."""

    def scorer(self, searcher: Any, fieldname: str, text: str, qf: int = 1) -> Any:
        scorer = super().scorer(searcher, fieldname, text, qf)
        if isinstance(scorer, BM25FScorer) and searcher.doc_frequency(fieldname, text) >= MANY:
            lengths = field_lengths(searcher.reader(), fieldname)
            if lengths is not None:
                scorer.dfl = lengths.__getitem__
        return scorer


def field_lengths(reader: Any, fieldname: str) -> list[int | None] | None:
    """Every document's length in ``fieldname`` as whoosh stores it, read once per reader."""
    try:
        per_field = _tables.setdefault(reader, {})
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
