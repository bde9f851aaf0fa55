"""Keeping the search index in line with the vault state: :func:`sync` re-indexes only
what changed.

The index is a cache of the vault state: :func:`sync` compares what the index holds
(per file: its content hash, the course it belongs to and the names of the topics it is
tagged with; see ``state.py``) with the state database and re-indexes only what changed,
under whoosh's lock. Later edits go into small segments, folded together once a few
pile up; a full build of a large vault runs in worker interpreters (``parallel.py``).
"""

from __future__ import annotations

import contextlib
import os
import time
from typing import TYPE_CHECKING, Any

from whoosh import query as wq

from studykb.search import segments
from studykb.search.parallel import build_parallel
from studykb.search.records import held_in, records
from studykb.search.schema import bind
from studykb.search.scoring import BM25FTable
from studykb.search.state import (
    Held,
    IndexBusy,
    SearchIndex,
    SyncStats,
    diff_held,
    generation_id,
    index_dir,
    keep_held,
    may_differ,
    read_held,
    rebuild_whole,
    topic_signatures,
    wanted_signatures,
)
from studykb.search.store import (
    FIELD_B,
    POOL_MB,
    compatible,
    create,
    current,
    damaged,
    discard,
    doc_count,
    notify,
    open_dir,
    open_index,
    searchers,
)
from studykb.text import segment, terms
from studykb.vault.cache import key
from studykb.vault.topics import TopicTable

if TYPE_CHECKING:
    from pathlib import Path

    from studykb.vault import Vault
    from studykb.vault.derived import Change

#: A full build of at least this many files uses both cores (worker processes).
PARALLEL_MIN = 1500


#: Seconds a query waits for another process's writer before answering from the last index.
QUERY_LOCK_WAIT = 1.0
#: Seconds ``build`` (or a first build, when there is no index to answer from) waits.
BUILD_LOCK_WAIT = 300.0


def sync(vault: Vault, wait: float | None = None, quiet: bool = False) -> SyncStats:
    """Bring the index in line with the vault state; re-index only changed files.

    The index is the vault's derived structure :class:`SearchIndex`: the vault's
    structures say whether it is current and, when not, which files changed since
    (:func:`sync_index` does the work). ``wait``: seconds to wait for another process
    that holds the index (default: a short wait when there is a complete index to answer
    from, a long one when there is none). Notices (a rebuilt or stale index) go to stderr
    unless ``quiet``; they are also in the returned stats.
    """
    started = time.perf_counter()
    stats = SyncStats()
    spec = SearchIndex(index_dir(vault), wait, stats)
    value = vault.structures.held(spec)
    if value is not None and not spec.names_index(value):
        vault.structures.forget([spec])  # another process committed, or the index went
    try:
        value = vault.structures.get(spec)
        if not stats.documents:
            stats.documents = value.documents
    except IndexBusy:
        pass
    return _done(stats, started, quiet)


def sync_index(vault: Vault, spec: SearchIndex, value: Held | None, change: Change | None) -> Held:
    """Make the index hold the vault as it is, from ``value`` (what it held when
    ``change`` began) or, without it, by comparing every file; what it holds then.
    Raises :class:`IndexBusy` when another process kept the lock (nothing is written;
    the last complete index answers)."""
    stats = spec.stats if spec.stats is not None else SyncStats()
    folder = index_dir(vault)
    unchanged = change is not None and not change.paths and not change.inputs
    if value is not None and unchanged and spec.names_index(value):
        return value  # writes that changed no file
    ix, stats.notice = open_index(folder)
    generation = ix.latest_generation()
    record = value if value is not None and value.generation == generation else None
    if record is not None and not spec.names_index(record):
        record = None
    topics = vault.topics()
    words = topics.vocabulary()
    ix, held, record, restem = _held(vault, folder, ix, generation, record, words, stats)
    same_topics = record is not None and record.topics == topics.digest
    tsigs = None if same_topics else topic_signatures(vault, topics)
    held = {p: (["", ""] if p in restem else sig) for p, sig in held.items()}
    # with the topics as they were, only the files the state's journal names may differ
    some = may_differ(vault, change, held) | restem if same_topics and change is not None else None
    wanted = wanted_signatures(vault, some)
    changed, removed = diff_held(held, wanted, tsigs, some)
    if changed or removed:
        wait = spec.wait
        if wait is None:
            wait = BUILD_LOCK_WAIT if not held else QUERY_LOCK_WAIT
        diff = (changed, removed)
        want = Wanted(wanted, some is None)
        done = _apply(vault, ix, want, topics, held, tsigs, diff, wait, generation, stats)
        if done is None:
            raise IndexBusy
        generation, held = done
        ix = open_dir(folder)
    stats.documents = doc_count(ix)
    ident = generation_id(folder, generation)
    kept = keep_held(vault, ident, held, record)
    return Held(ident, generation, topics.digest, stats.documents, tuple(words), kept)


class Wanted:
    """The signatures the index should hold: of every file (``complete``), or of the
    files that may differ only, completed when a sync needs them all."""

    def __init__(self, signatures: dict[str, str], complete: bool) -> None:
        self.signatures = signatures
        self.complete = complete

    def all(self, vault: Vault) -> dict[str, str]:
        if not self.complete:
            self.signatures, self.complete = wanted_signatures(vault), True
        return self.signatures


def warm(vault: Vault) -> None:
    """Open what the next sync and query of ``vault`` read from the index: a searcher
    (kept, see :func:`~studykb.search.store.current`), the index's value and the
    signatures it holds (kept by the vault's cache) and the topic table it was made
    with. Only the index and the cache are read, never the state: a fresh command does
    this while its refresh runs beside it. A missing, damaged or foreign index is left
    as it is, for :func:`sync` to deal with and say so."""
    folder = index_dir(vault)
    try:
        if not any(folder.glob("*.toc")):
            return
        ix = open_dir(folder)
        if not compatible(ix):
            return
        spec = SearchIndex(folder)
        vault.structures.preload(spec)
        value = vault.structures.held(spec)
        if value is not None:
            read_held(vault, value)
            vault.preload_topics(value.topics)
        searchers()[str(folder)] = ix.searcher(weighting=BM25FTable(**FIELD_B))
    except Exception as exc:
        if not (damaged(exc) or isinstance(exc, OSError)):
            raise


def _held(
    vault: Vault,
    folder: Path,
    ix: Any,
    generation: int,
    record: Held | None,
    words: list[str],
    stats: SyncStats,
) -> tuple[Any, dict[str, list[str]], Held | None, set[str]]:
    """(index, the signatures it holds, its record, the files to index again for the
    protected words); a recognisably damaged index is set aside and started afresh,
    saying so in ``stats.notice``."""
    try:
        held = read_held(vault, record) if record is not None else None
        if held is None:
            held = held_in(ix.reader())
        return ix, held, record, _restemmed(ix, held, record, words)
    except Exception as exc:
        if not damaged(exc):
            raise
        discard(folder)
        stats.notice = (
            f"search index was damaged ({type(exc).__name__}); rebuilding "
            f"{folder.parent.name}/{folder.name}/"
        )
        return create(folder), {}, None, set()


def _restemmed(
    ix: Any, held: dict[str, list[str]], record: Held | None, words: list[str]
) -> set[str]:
    """Files to index again because a word they hold is protected now, or no longer (an
    index whose value does not say had only :data:`terms.TECH_TERMS` protected)."""
    before = list(record.protected) if record is not None else None
    if not held or before == words:
        return set()
    look = terms.affected_terms(before or (), words)
    paths: set[str] = set()
    with ix.reader() as reader:
        for term in sorted(look):
            if ("body", term) in reader:
                for docnum in reader.postings("body", term).all_ids():
                    paths.add(reader.stored_fields(docnum)["path"])
    return paths


def _apply(
    vault: Vault,
    ix: Any,
    want: Wanted,
    topics: TopicTable,
    held: dict[str, list[str]],
    tsigs: dict[str, str] | None,
    diff: tuple[list[str], list[str]],
    wait: float,
    generation: int,
    stats: SyncStats,
) -> tuple[int, dict[str, list[str]]] | None:
    """Take the lock and write ``diff`` (files to index, files to drop), found against
    generation ``generation``; (new generation, what it holds), or None when another
    process kept the lock (the last complete index still answers)."""
    from whoosh.writing import LockError  # a command whose index is current never writes

    try:
        writer = bind_writer(_writer(ix, wait), topics)
    except LockError:
        stats.stale = True
        stats.notice = stats.notice or (
            "the search index is being updated by another "
            "studykb process; results may miss the latest edits"
        )
        stats.documents = doc_count(ix)
        return None
    written: dict[str, list[str]] = {}
    changed, removed = diff
    try:
        if writer.generation - 1 != generation:  # someone else wrote while we waited
            held = held_in(writer.reader())
            tsigs = tsigs if tsigs is not None else topic_signatures(vault, topics)
            changed, removed = diff_held(held, want.all(vault), tsigs)
        full = rebuild_whole(held, changed, len(want.signatures) if want.complete else len(held))
        if not changed and not removed:
            writer.cancel()
            return writer.generation - 1, held
        wanted = want.all(vault) if full else want.signatures
        _fill(vault, ix, writer, wanted, topics, changed, removed, full, written)
    except BaseException:
        with contextlib.suppress(Exception):
            writer.cancel()
        raise
    stats.rebuilt = full
    stats.added = sum(p not in held for p in changed)
    stats.updated = len(changed) - stats.added
    stats.removed = len(removed)
    stats.paths = sorted(changed + removed)
    if not full:
        written = {**{p: v for p, v in held.items() if p not in removed}, **written}
    return writer.generation, written


def _done(stats: SyncStats, started: float, quiet: bool) -> SyncStats:
    stats.seconds = time.perf_counter() - started
    if stats.notice and not quiet:
        notify(stats.notice)
    return stats


def bind_writer(writer: Any, topics: TopicTable) -> Any:
    """``writer`` reading the documents it is given with the topic table's analyser."""
    bind(writer.schema, topics.analyser())
    return writer


def _writer(ix: Any, wait: float) -> Any:
    """A writer holding the index lock (LockError after ``wait`` seconds)."""
    return ix.writer(timeout=wait, delay=0.05, limitmb=POOL_MB)


def _fill(
    vault: Vault,
    ix: Any,
    writer: Any,
    wanted: dict[str, str],
    topics: TopicTable,
    changed: list[str],
    removed: list[str],
    full: bool,
    written: dict[str, list[str]],
) -> None:
    """Write the changes and commit (a full build replaces every segment)."""
    # deferred: whoosh loads in ~0.1 s; only searching needs it
    from whoosh.writing import CLEAR

    if full and len(wanted) >= PARALLEL_MIN and (os.cpu_count() or 1) > 1:
        built = build_parallel(vault, wanted, topics, written)
        writer.commit(mergetype=lambda _writer, _old: built)
        return
    searcher = None
    if full:  # the commit clears the index: every file goes in again
        changed = list(wanted)
    else:
        searcher = _base_searcher(vault, ix, writer)
        for path in removed + changed:
            if searcher is None:
                writer.delete_by_term("path", path)
            else:
                writer.delete_by_query(wq.Term("path", path), searcher=searcher)
        segment.segments().load(vault.cache, _segments_entry())
    folded = [] if full else segments.refolded(writer, set(removed))
    again = sorted({path for seg in folded for path in seg[1]} - set(changed))
    missing = {path for path in again if path not in wanted}  # unchanged: not compared
    if missing:
        wanted = {**wanted, **wanted_signatures(vault, missing)}
    for record in records(vault.store, changed + again, wanted, topics, written):
        writer.add_document(**record)
    writer.commit(mergetype=CLEAR if full else segments.policy(folded))
    if not full:
        segment.segments().save(vault.cache, _segments_entry())
        if searcher is not None:
            folder = str(index_dir(vault))
            try:
                searchers()[folder] = segments.reopened(ix, searcher)
            except Exception as exc:
                if not damaged(exc):
                    raise
                searchers().pop(folder, None)  # the next query opens the index afresh


def _segments_entry() -> str:
    """The cache key of the remembered Chinese cuts: this analysis code, this rjieba."""
    return key(segment.SEGMENTS_ENTRY, *segment.stamp())


def _base_searcher(vault: Vault, ix: Any, writer: Any) -> Any:
    """A searcher on the generation ``writer`` starts from, or None.

    It finds the documents to delete (whoosh would open a searcher of its own for each
    writer), and in a long-lived process it is the one kept open for queries until the
    next commit.
    """
    folder = str(index_dir(vault))
    searcher = current(folder)
    try:
        if searcher is None:
            searcher = searchers()[folder] = ix.searcher(weighting=BM25FTable(**FIELD_B))
    except Exception as exc:
        if not damaged(exc):
            raise
        return None
    return searcher if searcher.reader().generation() == writer.generation - 1 else None


def rebuild(vault: Vault, quiet: bool = True) -> SyncStats:
    """Throw the index away and build it again."""
    discard(index_dir(vault))
    return sync(vault, wait=BUILD_LOCK_WAIT, quiet=quiet)
