"""The full-text index on disk: keeping it in line with the vault, and querying it.

One whoosh index in ``<vault>/.studykb/index/`` holds every document (and every course
unit, as its own document keyed ``path#unit``). It is a cache of the vault state:
:func:`sync` compares what the index holds (per file: its content hash, the course it
belongs to and the names of the topics it is tagged with; see ``index_state.py``) with
the state database and re-indexes only what changed. How text is analysed, and the
schema, are in ``schema.py``; the search package is the only code that imports whoosh.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from whoosh import index as windex
from whoosh import query as wq
from whoosh.fields import Schema
from whoosh.filedb.filestore import FileStorage
from whoosh.qparser import QueryParser
from whoosh.writing import CLEAR, LockError

from studykb.errors import UsageError
from studykb.search.coverage import Coverage
from studykb.search.schema import ANALYZER, MixedTokenizer, make_schema  # noqa: F401
from studykb.search.scoring import BM25FTable
from studykb.search.state import (
    INDEX_DIR,
    INDEX_NAME,
    INDEX_VERSION,
    TEXT_FIELDS,
    SyncStats,
    check,
    diff_held,
    index_dir,
    latest_generation,
    read_held,
    read_record,
    rebuild_whole,
    topic_signatures,
    wanted_signatures,
    write_record,
)
from studykb.text import segment, terms
from studykb.text.analysis import fold_name, surface_forms, term_positions
from studykb.vault.topics import TopicTable

if TYPE_CHECKING:
    from studykb.model import Document
    from studykb.vault import Vault
    from studykb.vault.store import Store

#: A full build of at least this many files uses both cores (worker processes).
PARALLEL_MIN = 1500
#: Files per segment in a parallel full build (a worker's memory grows with it: ~150 MB
#: for 2,500 files, ~110 MB for 1,700).
SLICE_FILES = 1700
#: Segments with fewer documents are merged once three of them pile up.
SMALL_SEGMENT = 1000
#: Memory (MB) each writer process may use for postings before spilling them to disk.
POOL_MB = 256
#: Seconds a query waits for another process's writer before answering from the last index.
QUERY_LOCK_WAIT = 1.0
#: Seconds ``build`` (or a first build, when there is no index to answer from) waits.
BUILD_LOCK_WAIT = 300.0

#: Words are looked up in ``body``, which also holds a document's names and tags, each
#: occurrence there counting this many times (one posting list per word keeps queries fast).
NAME_WEIGHT = 5.0
TAG_WEIGHT = 2.0
#: Distinctive terms of a document that :func:`similar` looks for in the others.
SIMILAR_TERMS = 15
#: BM25 length normalisation per field: a topic with many aliases is not penalised for them.
FIELD_B = {"body_B": 0.5, "tags_B": 0.3, "title_B": 0.5}

# -- the index on disk ------------------------------------------------------------------


#: What whoosh raises when the files of an index are damaged: a table of contents that is
#: not one (whoosh's own IndexError, a pickle cut short), a segment file cut short,
#: missing or overwritten (EOFError, struct.error, zlib.error, OSError ENOENT/EINVAL).
#: These, and only these, make studykb rebuild the index; anything else is a bug or an
#: error to report, and never destroys it.
_DAMAGE = (
    windex.IndexError,
    EOFError,
    __import__("pickle").UnpicklingError,
    __import__("struct").error,
    __import__("zlib").error,
    OSError,
)
_DAMAGE_ERRNOS = {errno.ENOENT, errno.EINVAL, errno.ENOTDIR, errno.EISDIR}


def _damaged(exc: BaseException) -> bool:
    """Whether ``exc`` shows damage of the index files (see :data:`_DAMAGE`)."""
    if not isinstance(exc, _DAMAGE):
        return False
    if isinstance(exc, OSError) and not isinstance(exc, EOFError):
        return exc.errno in _DAMAGE_ERRNOS
    return True


def _foreign(exc: BaseException) -> bool:
    """Whether opening the index failed because its table of contents names classes of
    another studykb version (a module since moved or renamed): that index is replaced."""
    if isinstance(exc, ImportError):
        return (exc.name or "").split(".")[0] == "studykb"
    return isinstance(exc, AttributeError) and "studykb" in str(exc)


def _notify(message: str) -> None:
    """One line on stderr (the contract: a rebuilt or stale index is said once, briefly)."""
    print(f"studykb: {message}", file=sys.stderr)


def _compatible(ix: Any) -> bool:
    schema = ix.schema
    if sorted(schema.names()) != sorted(_schema().names()):
        return False
    analyzer = getattr(schema["body"], "analyzer", None)
    return isinstance(analyzer, MixedTokenizer) and getattr(analyzer, "version", 0) == INDEX_VERSION


def _storage(folder: Path) -> Any:
    # Plain file reads, not memory maps: with a map, whoosh copies every part of a
    # compound segment into memory when it opens it (~35 ms per search at 10k notes,
    # against ~8 ms); queries on an open searcher are ~10 % slower without one.
    return FileStorage(str(folder), supports_mmap=False)


def _create(folder: Path) -> Any:
    if folder.exists() and not folder.is_dir():
        folder.unlink()
    folder.mkdir(parents=True, exist_ok=True)
    return _storage(folder).create_index(make_schema())


def _open_dir(folder: Path) -> Any:
    return _storage(folder).open_index()


def _open(folder: Path) -> tuple[Any, str | None]:
    """Open the index, creating it; a damaged or foreign one is replaced (with a notice)."""
    if not folder.exists() or (folder.is_dir() and not any(folder.glob("*.toc"))):
        return _create(folder), None
    try:  # damage inside the segments shows when they are read: see _retrying
        ix = _open_dir(folder)
        if _compatible(ix):
            return ix, None
        reason = "made by another studykb version"
    except Exception as exc:
        if _foreign(exc):
            reason = "made by another studykb version"
        elif _damaged(exc):
            reason = f"damaged ({type(exc).__name__})"
        else:
            raise
    _discard(folder)
    return _create(folder), (
        f"search index was {reason}; rebuilding {folder.parent.name}/{folder.name}/"
    )


def _discard(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    if folder.exists():  # a file where the folder should be, or undeletable leftovers
        with contextlib.suppress(OSError):
            folder.unlink()


# -- what the vault holds -----------------------------------------------------------------


def _held(reader: Any) -> dict[str, list[str]]:
    """path -> [file signature, topic fingerprint], from the stored fields of the index."""
    out = {}
    with reader:
        for fields in reader.all_stored_fields():
            sig = fields.get("sig") or ["", ""]
            out[fields["path"]] = list(sig)
    return out


def _records(
    store: Store,
    paths: list[str],
    wanted: dict[str, str],
    topics: TopicTable,
    done: dict[str, list[str]],
) -> Iterator[dict[str, Any]]:
    """The whoosh documents of the files in ``paths`` (a course's units included), read
    from the state. Empty fields are left out (they cost time).

    ``done`` receives path -> [file signature, topic fingerprint] of what was written.
    """
    for chunk in _chunks(sorted(paths)):
        texts = {path: body for path, (body, _headings) in store.texts(chunk).items()}
        courses = store.course_links(chunk)
        by_path = store.documents_in(chunk)
        for path, docs in by_path.items():
            sig = [wanted.get(path, ""), topics.sig(docs)]
            done[path] = sig
            body = texts.get(path) or ""
            for doc in docs:
                record = _record(doc, body, courses.get(doc.key, set()), topics, sig)
                yield {k: v for k, v in record.items() if v}


def _record(
    doc: Document, body: str, courses: set[str], topics: TopicTable, sig: list[str]
) -> dict[str, Any]:
    if doc.type == "unit":
        body = ""
        courses = {doc.parent or doc.path}
    else:
        if doc.type == "course":
            courses = courses | {doc.key}
    covered = topics.about(doc)
    tags = list(dict.fromkeys((*doc.tags, *doc.covers)))
    return {
        "key": doc.key,
        "path": doc.path,
        "sig": sig,
        "id": doc.id,
        "type": doc.type,
        "exact": ",".join(dict.fromkeys(fold_name(n) for n in (doc.title, *doc.aliases, doc.id))),
        "title": doc.title,
        "aliases": "\n".join(doc.aliases),
        "tags": "\n".join((*tags, *(topics.texts[k] for k in covered))),
        "body": _weighted_body(doc, body, topics),
        "tag": ",".join(
            t.replace(",", " ").casefold()
            for t in dict.fromkeys((*tags, *(topics.ids[k] for k in covered)))
        ),
        "course": ",".join(sorted(courses)),
        "status": doc.status or "",
        "level": str(doc.level) if doc.level else "",
        "kind": doc.kind or "",
        "date": str(doc.date or ""),
    }


def _weighted_body(doc: Document, body: str, topics: TopicTable) -> tuple[tuple[str, float], ...]:
    """The ``body`` field's parts and their weights (see :class:`FastPositions`)."""
    tags = dict.fromkeys((*doc.tags, *doc.covers))
    named = (topics.texts[k] for k in topics.about(doc))
    return (
        ("\n".join((doc.title, *doc.aliases, doc.id)), NAME_WEIGHT),
        ("\n".join((*tags, *named)), TAG_WEIGHT),
        ("\n".join((body, _meta_text(doc.meta))), 1.0),
    )


def _body_text(doc: Document, body: str, topics: TopicTable) -> str:
    """What the ``body`` field holds: names, tags and covered topics' names, the body, and
    every other front-matter value (unknown keys are searchable too)."""
    tags = dict.fromkeys((*doc.tags, *doc.covers))
    named = (topics.texts[k] for k in topics.about(doc))
    return "\n".join((doc.title, *doc.aliases, *tags, *named, body, _meta_text(doc.meta)))


#: Front-matter keys indexed in fields of their own, or naming other documents.
_OWN_KEYS = {
    "id",
    "title",
    "aliases",
    "tags",
    "covers",
    "type",
    "status",
    "level",
    "date",
    "units",
    "requires",
    "refs",
    "related",
    "items",
    "course",
    "kind",
}


def _meta_text(meta: dict[str, Any]) -> str:
    """Every other front-matter value as text: unknown keys are searchable too."""
    out: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out.append(str(value))
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, (list, tuple)):
            for item in value:
                walk(item)

    for key, value in (meta or {}).items():
        if key not in _OWN_KEYS:
            walk(value)
    return "\n".join(out)


def _chunks(items: list[str], size: int = 400) -> Iterable[list[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


# -- sync ----------------------------------------------------------------------------------


def sync(vault: Vault, wait: float | None = None, quiet: bool = False) -> SyncStats:
    """Bring the index in line with the vault state; re-index only changed files.

    ``wait``: seconds to wait for another process that holds the index (default: a short
    wait when there is a complete index to answer from, a long one when there is none).
    Notices (a rebuilt or stale index) go to stderr unless ``quiet``; they are also in
    the returned stats.
    """
    started = time.perf_counter()
    stats = SyncStats()
    record, state = check(vault)
    if record is not None:  # the common case: nothing to open
        stats.documents = int(record.get("documents") or 0)
        return _done(stats, started, quiet)
    folder = index_dir(vault)
    ix, stats.notice = _open(folder)
    generation = ix.latest_generation()
    cache = read_record(folder, generation)
    if cache is not None and cache.get("state") == state:
        stats.documents = int(cache.get("documents") or 0)
        return _done(stats, started, quiet)
    wanted = wanted_signatures(vault)
    topics = vault.topics()
    words = use_vocabulary(topics)
    try:
        held = read_held(vault, folder, generation) if cache is not None else None
        if held is None:
            held = _held(ix.reader())
        restem = _restemmed(ix, held, cache, words)
    except Exception as exc:
        if not _damaged(exc):
            raise
        _discard(folder)
        ix, held, cache, restem = _create(folder), {}, None, set()
        stats.notice = (
            f"search index was damaged ({type(exc).__name__}); rebuilding "
            f"{folder.parent.name}/{folder.name}/"
        )
    same_topics = cache is not None and cache.get("topics") == topics.digest
    tsigs = None if same_topics else topic_signatures(vault, topics)
    held = {p: (["", ""] if p in restem else sig) for p, sig in held.items()}
    changed, removed = diff_held(held, wanted, tsigs)
    if changed or removed:
        if wait is None:
            wait = BUILD_LOCK_WAIT if not held else QUERY_LOCK_WAIT
        done = _apply(vault, ix, wanted, topics, held, tsigs, wait, generation, stats)
        if done is None:
            return _done(stats, started, quiet)
        generation, held = done
        ix = _open_dir(folder)
    stats.documents = _doc_count(ix)
    write_record(vault, folder, generation, held, state, topics.digest, stats.documents, words)
    return _done(stats, started, quiet)


_VOCABULARY: dict[str, list[str]] = {}


def use_vocabulary(topics: TopicTable) -> list[str]:
    """Protect the vault's one-word topic names from the stemmer (see
    :mod:`studykb.text.terms`); those names, sorted (remembered per topic table)."""
    words = _VOCABULARY.get(topics.digest)
    if words is None:
        names = [n for text in topics.texts.values() for n in text.split("\n")]
        words = sorted(terms.one_word_names(names) - terms.TECH_TERMS)
        _VOCABULARY.clear()
        _VOCABULARY[topics.digest] = words
    terms.protect(words)
    return words


def _restemmed(
    ix: Any, held: dict[str, list[str]], record: dict[str, Any] | None, words: list[str]
) -> set[str]:
    """Files to index again because a word they hold is protected now, or no longer (an
    index whose record does not say had only :data:`terms.TECH_TERMS` protected)."""
    before = record.get("protected") if record is not None else None
    if not held or before == words:
        return set()
    look = terms.affected_terms(before if isinstance(before, list) else (), words)
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
    wanted: dict[str, str],
    topics: TopicTable,
    held: dict[str, list[str]],
    tsigs: dict[str, str] | None,
    wait: float,
    generation: int,
    stats: SyncStats,
) -> tuple[int, dict[str, list[str]]] | None:
    """Take the lock and write the difference; (new generation, what it holds), or None
    when another process kept the lock (the last complete index still answers)."""
    try:
        writer = _writer(ix, wait)
    except LockError:
        stats.stale = True
        stats.notice = stats.notice or (
            "the search index is being updated by another "
            "studykb process; results may miss the latest edits"
        )
        stats.documents = _doc_count(ix)
        return None
    written: dict[str, list[str]] = {}
    try:
        if writer.generation - 1 != generation:  # someone else wrote while we waited
            held = _held(writer.reader())
            tsigs = tsigs if tsigs is not None else topic_signatures(vault, topics)
        changed, removed = diff_held(held, wanted, tsigs)
        full = rebuild_whole(held, changed, wanted)
        if not changed and not removed:
            writer.cancel()
            return writer.generation - 1, held
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
        _notify(stats.notice)
    return stats


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
    if full and len(wanted) >= PARALLEL_MIN and (os.cpu_count() or 1) > 1:
        segments = _build_parallel(vault, wanted, topics, written)
        writer.commit(mergetype=lambda _writer, _old: segments)
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
        segment.SEGMENTS.load(vault.cache, _segments_entry())
    for record in _records(vault.store, changed, wanted, topics, written):
        writer.add_document(**record)
    writer.commit(mergetype=CLEAR if full else _merge_small)
    if not full:
        segment.SEGMENTS.save(vault.cache, _segments_entry())
        if searcher is not None:
            folder = str(index_dir(vault))
            try:
                _searchers[folder] = _reopened(ix, searcher)
            except Exception as exc:
                if not _damaged(exc):
                    raise
                _searchers.pop(folder, None)  # the next query opens the index afresh


def _segments_entry() -> str:
    """The cache key of the remembered Chinese cuts: this analysis code, this rjieba."""
    from studykb.vault.cache import key

    return key(segment.SEGMENTS_ENTRY, *segment.stamp())


def _base_searcher(vault: Vault, ix: Any, writer: Any) -> Any:
    """A searcher on the generation ``writer`` starts from, or None.

    It finds the documents to delete (whoosh would open a searcher of its own for each
    writer), and in a long-lived process it is the one kept open for queries until the
    next commit.
    """
    folder = str(index_dir(vault))
    searcher = _current(folder)
    try:
        if searcher is None:
            searcher = _searchers[folder] = ix.searcher(weighting=BM25FTable(**FIELD_B))
    except Exception as exc:
        if not _damaged(exc):
            raise
        return None
    return searcher if searcher.reader().generation() == writer.generation - 1 else None


def _current(folder: str) -> Any:
    """The searcher kept open on ``folder`` if it still shows the latest generation.

    Not ``Searcher.refresh()``: in whoosh3 3.54 it reuses the open segment readers
    (with their old deletions) and keeps segments the new generation merged away, so
    an edited note could be found in its old version, or twice.
    """
    searcher = _searchers.get(folder)
    if searcher is None:
        return None
    try:
        if searcher.reader().generation() == latest_generation(Path(folder)):
            return searcher
    except Exception as exc:
        if not _damaged(exc):
            raise
    del _searchers[folder]
    with contextlib.suppress(Exception):
        searcher.close()
    return None


def _reopened(ix: Any, old: Any) -> Any:
    """A searcher on the generation just committed, keeping the segment readers of
    ``old`` whose segment the commit left as it was (same documents, same deletions).

    The query that follows an edit then opens only the new segment and the one the
    edited note was deleted from (~1.5 ms each at 10k notes) instead of every segment.
    Unlike ``Searcher.refresh()`` (see :func:`_current`), a reader is reused only when
    its deletions are still the segment's.
    """
    from whoosh.reading import MultiReader, SegmentReader
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


def _merge_small(writer: Any, segments: list[Any]) -> list[Any]:
    """Merge policy of an incremental commit: fold the small segments earlier edits left
    into the new one once there are a few, so a search opens few segments (each costs
    ~5 ms to open); the large segments of a full build are left alone."""
    from whoosh.reading import SegmentReader

    small = [seg for seg in segments if seg.doc_count_all() < SMALL_SEGMENT]
    if len(small) < 3:
        return segments
    for seg in small:
        reader = SegmentReader(writer.storage, writer.schema, seg)
        writer.add_reader(reader)
        reader.close()
    return [seg for seg in segments if seg not in small]


def _doc_count(ix: Any) -> int:
    """Documents in the latest generation, from its table of contents (no segment opened)."""
    return sum(seg.doc_count() for seg in ix._segments())  # noqa: SLF001


def _build_parallel(
    vault: Vault, wanted: dict[str, str], topics: TopicTable, written: dict[str, list[str]]
) -> list[Any]:
    """Index every file in worker processes, two at a time, a segment per slice of files.

    Slices of about :data:`SLICE_FILES` files keep each worker's postings in memory
    (no spilling to disk, which doubled the time) while bounding its size; the caller,
    which holds the lock, commits the segments in one new generation. Each worker is a
    fresh interpreter (:func:`studykb.runtime.pools.python_workers`); its job and its
    answer are JSON files in whoosh's temporary folder.
    """
    import json
    from collections import defaultdict

    from whoosh.codec.whoosh3 import W3Codec, W3Segment

    from studykb.runtime.pools import python_workers

    paths = sorted(wanted)
    count = max(2, round(len(paths) / SLICE_FILES))
    size = -(-len(paths) // count)
    folder = index_dir(vault)
    work = folder / f"{INDEX_NAME}.tmp"  # whoosh's temporary folder for this index's writers
    work.mkdir(exist_ok=True)
    jobs: list[tuple[str, str]] = []
    for n in range(-(-len(paths) // size)):
        job_file = work / f"job-{os.getpid()}-{n}.json"
        out_file = work / f"out-{os.getpid()}-{n}.json"
        part = paths[n * size : (n + 1) * size]
        job_file.write_text(
            json.dumps(
                {
                    "folder": str(folder),
                    "state": str(vault.store.path),
                    "paths": part,
                    "wanted": {p: wanted[p] for p in part},
                    "topics": topics.to_data(),
                }
            ),
            encoding="utf-8",
        )
        jobs.append((str(job_file), str(out_file)))
    segments = []
    try:
        python_workers(f"{__name__}:_segment_main", jobs, workers=2)
        for _job, out in jobs:
            result = json.loads(Path(out).read_text(encoding="utf-8"))
            written.update(result["done"])
            made = result["segment"]
            if made is None:
                continue
            seg = W3Segment(W3Codec(), INDEX_NAME, int(made["doccount"]), str(made["segid"]))
            seg.compound = bool(made["compound"])
            # the field lengths BM25 averages over travel on the segment object (whoosh3
            # 3.54, pinned; what pickling the segment used to carry)
            seg._fieldlengths = defaultdict(int, made["fieldlengths"])  # noqa: SLF001
            segments.append(seg)
    finally:
        for job, out in jobs:
            for temp in (job, out):
                with contextlib.suppress(OSError):
                    os.unlink(temp)
    return segments


def _segment_main() -> None:
    """Entry point of an index worker: ``python -c ... JOB OUT`` (see _build_parallel).

    The job and the answer are JSON files: the segment the worker wrote travels back as
    its id, document count and whether it is compound.
    """
    import json

    job, out = sys.argv[1], sys.argv[2]
    segment.SEGMENTS.keep = False  # a worker's cuts are never saved: do not hold them (memory)
    with open(job, encoding="utf-8") as fh:
        seg, done = _segment_job(json.load(fh))
    made = (
        None
        if seg is None
        else {
            "segid": seg.segid,
            "doccount": seg.doc_count_all(),
            "compound": bool(seg.compound),
            "fieldlengths": dict(seg._fieldlengths),
        }
    )  # noqa: SLF001 - see _build_parallel
    with open(out, "w", encoding="utf-8") as fh:
        json.dump({"segment": made, "done": done}, fh)


def _segment_job(job: dict[str, Any]) -> tuple[Any, dict[str, list[str]]]:
    """In a worker: write one segment holding the files of ``job``; return it unlisted."""
    from whoosh.writing import SegmentWriter

    from studykb.vault.store import reader

    topics = TopicTable.from_data(job["topics"])
    use_vocabulary(topics)
    store = reader(Path(job["state"]))
    try:
        writer = SegmentWriter(_open_dir(Path(job["folder"])), _lk=False, limitmb=POOL_MB)
        done: dict[str, list[str]] = {}
        for record in _records(store, job["paths"], job["wanted"], topics, done):
            writer.add_document(**record)
        if not writer._added:  # noqa: SLF001 - whoosh's own multi-process writer does this
            writer._close_segment()
            return None, done
        return writer._finalize_segment(), done
    finally:
        store.close()


def rebuild(vault: Vault, quiet: bool = True) -> SyncStats:
    """Throw the index away and build it again."""
    _discard(index_dir(vault))
    return sync(vault, wait=BUILD_LOCK_WAIT, quiet=quiet)


# -- queries -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Found:
    """One document that matched, with its stored fields."""

    key: str
    score: float
    fields: dict[str, Any]


@dataclass(frozen=True)
class Answer:
    """The documents a query found and the index terms it matched (for highlighting)."""

    hits: list[Found]
    terms: frozenset[str]
    """Terms of the text fields the query asked for (to highlight in a snippet)."""
    empty: bool = False
    """The query had nothing to look for (only stop words or punctuation)."""


_TEXT_FIELDS = TEXT_FIELDS
_searchers: dict[str, Any] = {}
_parsers: dict[int, Any] = {}


def _parser(schema: Any) -> Any:
    parser = _parsers.get(id(schema))
    if parser is None:
        _parsers.clear()
        parser = _parsers[id(schema)] = QueryParser("body", schema)
    return parser


def _searcher(vault: Vault) -> Any:
    """A searcher on the latest complete index (kept open between queries of one process)."""
    folder = str(index_dir(vault))
    searcher = _current(folder)
    if searcher is not None:
        return searcher
    ix, notice = _open(Path(folder))
    if notice:  # replaced by an empty index: fill it (sync skipped opening it when current)
        _notify(notice)
        sync(vault, wait=BUILD_LOCK_WAIT, quiet=True)
        ix = _open_dir(Path(folder))
    searcher = _searchers[folder] = ix.searcher(weighting=BM25FTable(**FIELD_B))
    return searcher


def close(vault: Vault | None = None) -> None:
    """Close the searchers kept open by :func:`query` (all of them without ``vault``)."""
    folders = [str(index_dir(vault))] if vault is not None else list(_searchers)
    for folder in folders:
        searcher = _searchers.pop(folder, None)
        if searcher is not None:
            with contextlib.suppress(Exception):
                searcher.close()


_T = TypeVar("_T")


def _retrying(vault: Vault, action: Callable[[Any], _T]) -> _T:
    """Run ``action(searcher)``; a damaged index is rebuilt (with a notice) and tried again."""
    try:
        return action(_searcher(vault))
    except Exception as exc:
        if not _damaged(exc):
            raise
        close(vault)
        _notify(
            f"search index was damaged ({type(exc).__name__}); rebuilding "
            f"{index_dir(vault).parent.name}/{INDEX_DIR}/"
        )
        rebuild(vault)
        return action(_searcher(vault))


def parse_query(text: str) -> Any:
    """The whoosh query for ``text``; a syntax error raises UsageError."""
    parser = _parser(_schema())
    q = parser.parse(text)
    error = _first_error(q)
    if error:
        raise UsageError(f"Cannot read the query {text!r}: {error}.", hint=QUERY_HELP)
    return q


def _top(searcher: Any, q: Any, limit: int, allow: Any = None, block: Any = None) -> Any:
    """The best ``limit`` hits of ``q``, scoring every match.

    whoosh's collector periodically "replaces" the matcher tree with a cheaper one once
    a clause can no longer lift a document into the top N (a union becomes an
    intersection or an and-maybe). With a union nested in another compound (``(a OR b
    OR c) OR d``, ``(a OR b) AND (c OR d)``, ``a ANDMAYBE (b OR c OR d)``) that rewrite
    drops real top hits: on random queries of those shapes the top 5 was wrong in 20 %
    to 95 % of cases, in whoosh 2.7.4 and whoosh3 3.54.0 alike. Replacement is turned
    off here (block-quality skipping alone was checked and is right).
    """
    from whoosh import collectors

    collector: Any = collectors.TopCollector(max(1, limit), usequality=True, replace=0)
    if allow is not None or block is not None:
        collector = collectors.FilterCollector(collector, allow, block)
    searcher.search_with_collector(q, collector)
    return collector.results()


#: Documents a plain query's first pass (BM25F over its words and names) hands to the
#: ranking of :mod:`studykb.search.ranking`, which scores each of them in Python.
RERANK = 30


def _reranked(searcher: Any, q: Coverage, limit: int, mask: Any) -> list[Found]:
    """The best ``limit`` documents by ``q``, among the best :data:`RERANK` (or ``limit``)
    by its words and names alone (whoosh's fast, block-skipping union). The first pass
    does not depend on ``limit`` below :data:`RERANK`, so a short list is the top of a
    long one. The second scores only those documents, skipping to each."""
    fast = q.first if q.first is not None else wq.Or([*q.slots, q.exact])
    first = _top(searcher, fast, max(RERANK, limit), allow=mask)
    wanted = sorted(hit.docnum for hit in first)
    scored: list[tuple[float, int]] = []
    for sub, offset in searcher.leaf_searchers():
        size = sub.reader().doc_count_all()
        mine = [d - offset for d in wanted if offset <= d < offset + size]
        if not mine:
            continue
        m = q.matcher(sub)
        for d in mine:
            m.skip_to(d)
            if m.is_active() and m.id() == d:
                scored.append((m.score(), d + offset))
    scored.sort(key=lambda sd: (-sd[0], sd[1]))
    stored = searcher.reader().stored_fields
    return [
        Found(fields["key"], score, fields)
        for score, docnum in scored[:limit]
        for fields in (stored(docnum),)
    ]


def _schema() -> Schema:
    global _SCHEMA
    if _SCHEMA is None:
        _SCHEMA = make_schema()
    return _SCHEMA


_SCHEMA: Schema | None = None
QUERY_HELP = (
    'Query syntax: words (all must match), OR, NOT, "a phrase", field:value '
    "(title, aliases, tags, body, type, tag, course, status, level, kind, id, "
    "path), prefix*, and parentheses."
)


def _first_error(q: Any) -> str | None:
    error = getattr(q, "error", None)
    if error:
        return str(error)
    for child in q.children() if hasattr(q, "children") else ():
        found = _first_error(child)
        if found:
            return found
    return None


def query(
    vault: Vault,
    text: str,
    filters: list[list[tuple[str, str]]] | None = None,
    limit: int = 10,
    expansions: Iterable[str] = (),
) -> Answer:
    """Run ``text`` (whoosh query language; empty: every document, in path order).

    ``filters``: groups of (field, exact value); a document must match one pair of
    every group. ``expansions``: other phrasings (a topic's names in the other language)
    that also match, at a lower weight.
    """
    from studykb.search.ranking import OTHER_NAMES, exact_query, name_query

    q = parse_query(text) if text.strip() else wq.Every()
    if isinstance(q, type(wq.NullQuery)):
        return Answer([], frozenset(), empty=True)
    extra = [name_query(name, OTHER_NAMES) for name in expansions]
    extra = [e for e in extra if e is not None]
    if extra:
        q = wq.Or([q, *extra])
    if not isinstance(q, wq.Every):
        q = wq.AndMaybe(q, exact_query(text))
    return run(vault, q, filters, limit)


def run(
    vault: Vault,
    q: Any,
    filters: list[list[tuple[str, str]]] | None = None,
    limit: int = 10,
    highlight: frozenset[str] | None = None,
) -> Answer:
    """The best ``limit`` documents for the whoosh query ``q`` (see :func:`query`);
    ``highlight``: the terms to show in snippets (default: those of ``q``)."""
    conditions = [
        wq.Or([wq.Term(name, value) for name, value in group]) for group in (filters or []) if group
    ]
    mask = wq.And(conditions) if conditions else None
    sort = isinstance(q, wq.Every)

    def answer(searcher: Any) -> Answer:
        if sort:
            results = searcher.search(q, limit=max(1, limit), filter=mask, sortedby="key")
        elif isinstance(q, Coverage):
            return Answer(
                _reranked(searcher, q, limit, mask),
                highlight if highlight is not None else frozenset(),
            )
        else:
            results = _top(searcher, q, limit, allow=mask)
        hits = [
            Found(hit["key"], 0.0 if sort else float(hit.score or 0.0), dict(hit.fields()))
            for hit in results
        ]
        if sort:
            terms_found: frozenset[str] = frozenset()
        else:
            terms_found = highlight if highlight is not None else _text_terms(q, searcher.reader())
        return Answer(hits, terms_found)

    return _retrying(vault, answer)


def _text_terms(q: Any, reader: Any) -> frozenset[str]:
    """Terms of the text fields the query looks for, prefixes and wildcards expanded.

    (whoosh's ``Query.existing_terms`` stops after the first field: its loop variable
    shadows the ``fieldname`` argument, so it is not used here.)
    """
    out: set[str] = set()
    for leaf in _positive_leaves(q):
        if leaf.field() not in _TEXT_FIELDS:
            continue
        try:
            terms = list(leaf.expanded_terms(reader))[:200]
        except Exception:  # noqa: BLE001 - highlighting is best effort
            continue
        for _field, term in terms:
            out.add(term.decode("utf-8") if isinstance(term, bytes) else term)
    return frozenset(out)


def _positive_leaves(q: Any) -> Iterator[Any]:
    if isinstance(q, wq.Not):
        return
    if isinstance(q, wq.AndNot):
        yield from _positive_leaves(q.a)
    elif q.is_leaf():
        yield q
    else:
        for child in q.children():
            yield from _positive_leaves(child)


def _telling(term: str) -> bool:
    """Whether a term says something about a text (not a function word, number or letter)."""
    return len(term) > 1 and not terms.is_filler(term) and not term.replace(".", "").isdigit()


def similar(vault: Vault, key: str, limit: int = 20) -> list[tuple[str, float, list[str]]]:
    """Documents whose body shares the most distinctive terms with ``key``'s (BM25).

    Returns (doc key, score, top shared words) best first, ``key`` itself left out. The
    index is brought up to date first. The shared words are shown as written in ``key``'s
    text (``decoding``, not the stem ``decod``).
    """
    doc = vault.document(key)
    if doc is None:
        return []
    sync(vault)
    topics = vault.topics()
    text = _body_text(doc, vault.text(doc.path)[0] if doc.type != "unit" else "", topics)

    def run(searcher: Any) -> list[tuple[str, float, list[str]]]:
        terms = [
            (t, w)
            for t, w in searcher.key_terms_from_text("body", text, numterms=40, normalize=False)
            if _telling(t)
        ][:SIMILAR_TERMS]
        if not terms:
            return []
        q = wq.Or([wq.Term("body", word, boost=w) for word, w in terms])
        q.matcher_type = wq.Or.ARRAY_MATCHER  # flat: preloading is right, and 2.5x faster
        results = _top(searcher, q, limit, block=wq.Term("key", key))
        words = surface_forms(text)
        out = []
        for hit in results:
            have = _terms_of(vault, hit["key"], topics)
            shared = [t for t, _w in terms if t in have][:8]
            out.append(
                (hit["key"], round(float(hit.score or 0.0), 4), [words.get(t, t) for t in shared])
            )
        return out

    return _retrying(vault, run)


def _terms_of(vault: Vault, key: str, topics: TopicTable) -> set[str]:
    """The body terms of a document (analysed again: the index keeps no term vectors)."""
    doc = vault.document(key)
    if doc is None:
        return set()
    body = vault.text(doc.path)[0] if doc.type != "unit" else ""
    return set(term_positions(_body_text(doc, body, topics)))
