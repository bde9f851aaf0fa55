"""How an incremental commit lays out the index's segments.

Each edit's commit writes one small segment. A query opens every segment (about 5 ms
each at 10k notes in a fresh process), so small segments are folded together: two
holding at most :data:`REFOLD_MAX` files between them by indexing those files again
from the state (:func:`refolded`), larger ones, once three pile up, by copying their
postings (:func:`merge_small`). The full build's large segments are left alone. After
a commit, :func:`reopened` gives a searcher that keeps the readers of the segments the
commit left as they were.
"""

from __future__ import annotations

import contextlib
from typing import Any

from studykb.search.scoring import BM25FTable
from studykb.search.store import FIELD_B

#: Segments with fewer documents are merged once three of them pile up.
SMALL_SEGMENT = 1000
#: Fold the segments edits leave by indexing their files again, up to this many files.
REFOLD_MAX = 8


def policy(folded: list[tuple[str, list[str]]]) -> Any:
    """The merge policy of an incremental commit: drop the segments ``folded`` (their
    files were indexed again into the new one), else :func:`merge_small`."""
    return _without({seg_id for seg_id, _paths in folded}) if folded else merge_small


def reopened(ix: Any, old: Any) -> Any:
    """A searcher on the generation just committed, keeping the segment readers of
    ``old`` whose segment the commit left as it was (same documents, same deletions).

    The query that follows an edit then opens only the new segment and the one the
    edited note was deleted from (~1.5 ms each at 10k notes) instead of every segment.
    Unlike ``Searcher.refresh()`` (see :func:`current`), a reader is reused only when
    its deletions are still the segment's.
    """
    # deferred: whoosh loads in ~0.1 s; only searching needs it
    from whoosh.reading import MultiReader, SegmentReader

    # deferred: whoosh loads in ~0.1 s; only searching needs it
    from whoosh.searching import Searcher

    toc = ix._read_toc()  # noqa: SLF001
    spare = {r.segment().segment_id(): r for r, _base in old.reader().leaf_readers()}
    readers = []
    for seg in toc.segments:
        reader = spare.get(seg.segment_id())
        if (
            reader is not None
            and len(toc.segments) > 1
            and set(reader.segment().deleted_docs()) == set(seg.deleted_docs())
        ):
            del spare[seg.segment_id()]
        else:
            reader = SegmentReader(ix.storage, toc.schema, seg, generation=toc.generation)
        readers.append(reader)
    for reader in spare.values():
        with contextlib.suppress(Exception):
            reader.close()
    # a lone reader was opened afresh above: it carries the new generation
    combined = readers[0] if len(readers) == 1 else MultiReader(readers, generation=toc.generation)
    return Searcher(combined, weighting=BM25FTable(**FIELD_B), fromindex=ix)


def refolded(writer: Any, removed: set[str]) -> list[tuple[str, list[str]]]:
    """The segments earlier edits left holding a few files, to fold into the new one:
    (segment id, the files it still holds) of each, once there are two, together at
    most :data:`REFOLD_MAX` files. Those files are indexed again from the state (about
    2.5 ms each; their Chinese cuts were remembered when they were edited), which costs
    less than copying the segments' postings term by term (~30 ms at 10k notes, however
    few documents they hold). Otherwise none: see :func:`merge_small`. The first
    segment (a build's, small in a small vault) is never folded this way."""
    tiny = []
    for seg in writer.segments[1:]:
        if seg.doc_count_all() - seg.deleted_count() <= REFOLD_MAX:  # documents >= files
            paths = sorted(_live_paths(writer, seg) - removed)
            if len(paths) <= REFOLD_MAX:
                tiny.append((seg.segment_id(), paths))
    tiny.sort(key=lambda item: len(item[1]))
    out: list[tuple[str, list[str]]] = []
    for seg_id, paths in tiny:
        if sum(len(p) for _id, p in out) + len(paths) > REFOLD_MAX:
            break
        out.append((seg_id, paths))
    return out if len(out) >= 2 else []


def _live_paths(writer: Any, seg: Any) -> set[str]:
    """The files whose documents segment ``seg`` holds and this writer has not deleted."""
    # deferred: whoosh loads in ~0.1 s; only searching needs it
    from whoosh.reading import SegmentReader

    reader = SegmentReader(writer.storage, writer.schema, seg)
    try:
        return {
            fields["path"] for docnum, fields in reader.iter_docs() if not seg.is_deleted(docnum)
        }
    finally:
        reader.close()


def _without(folded: set[str]) -> Any:
    """The merge policy dropping the segments ``folded`` (their files are in the new one)."""

    def policy(_writer: Any, segments: list[Any]) -> list[Any]:
        return [seg for seg in segments if seg.segment_id() not in folded]

    return policy


def merge_small(writer: Any, segments: list[Any]) -> list[Any]:
    """Merge policy of an incremental commit: fold the small segments earlier edits left
    into the new one once there are a few, so a search opens few segments (each costs
    ~5 ms to open); the large segments of a full build are left alone."""
    # deferred: whoosh loads in ~0.1 s; only searching needs it
    from whoosh.reading import SegmentReader

    small = [seg for seg in segments if seg.doc_count_all() < SMALL_SEGMENT]
    if len(small) < 3:
        return segments
    for seg in small:
        reader = SegmentReader(writer.storage, writer.schema, seg)
        writer.add_reader(reader)
        reader.close()
    return [seg for seg in segments if seg not in small]
