"""The first build of a vault (no state yet): parse everything, write it in one pass.

An incremental refresh inserts the rows of changed files, then re-resolves the
references a change can affect with ``UPDATE``s. A first build can do better, and
on a 10k-note vault that is the difference between beating a plain markdown-it
pass over the files or not:

* workers read and hash the files themselves (the parent sends only paths);
* rows are inserted while the workers are still parsing (``imap`` streams them),
  so the parent's SQLite work overlaps the parse instead of following it;
* references are resolved in memory once every document is known, and inserted
  with their resolution: no ``UPDATE`` of 100k rows;
* secondary indexes are dropped during the inserts and rebuilt once at the end.

It all happens in one transaction, like every other write: a process killed at any
moment leaves the old (empty) state or the new one.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple, NoReturn

import msgpack

from studykb.parse.reading import GITHUB, Reading
from studykb.runtime import background, pools
from studykb.vault import checks, files
from studykb.vault.checks import missing_anchors, wants_anchor_check
from studykb.vault.includes import Includes, pending_rows
from studykb.vault.kept_edges import KeptEdges
from studykb.vault.resolve import Names, Resolution, table_rows
from studykb.vault.rows import parse_rows, unread_rows
from studykb.vault.state import Store, Tables
from studykb.vault.state.rows import (
    Anchored,
    DocNames,
    DocRow,
    FileRow,
    ParsedRows,
    ProblemRow,
    RefRow,
    StoredProblem,
    TextRow,
)
from studykb.vault.state.schema import Index

#: Parse in worker processes when at least this many files are to be read.
PARALLEL_THRESHOLD = 64
#: A first build of at least this many files leaves its indexes and WAL checkpoint to a
#: thread.
BACKGROUND_FINISH = 2000

Progress = Callable[[int, int], None]
#: What reading a file the scan found raises when it is gone since (the next refresh
#: sees that); any other failure is an ``unreadable`` problem on the file.


class SentRows(NamedTuple):
    """:class:`ParsedRows` as a first build's parse hands them on: the references packed
    (:func:`packed_refs`)."""

    path: str
    mtime_ns: int
    size: int
    digest: str
    docs: list[DocRow]
    refs: bytes
    problems: list[ProblemRow]
    text: TextRow


def read_rows(item: tuple[str, str, Reading]) -> SentRows | None:
    """(absolute path, vault path, reading rules) -> the rows of ``parse_rows``; None when
    unreadable now.

    Reads and hashes the file where it is parsed (in a worker, for a parallel build). A
    file that vanished since the scan is left for the next refresh to notice.
    """
    abs_path, path, reading = item
    try:
        raw, st = files.read_note(abs_path)
    except OSError as exc:
        if exc.errno in files.VANISHED:
            return None
        return sent(unread_rows(path, exc.strerror or str(exc)))
    digest = hashlib.blake2b(raw, digest_size=16).hexdigest()
    return sent(parse_rows((path, raw, digest, st.st_mtime_ns, st.st_size, reading)))


def sent(rows: ParsedRows) -> SentRows:
    path, mtime, size, digest, docs, refs, problems, text = rows
    return SentRows(path, mtime, size, digest, docs, packed_refs(refs), problems, text)


def packed_refs(refs: list[RefRow]) -> bytes:
    """A file's parsed references as one msgpack string, held so until they are resolved:
    less than half the room of the tuples (the largest part of what a first build holds
    while the files are parsed: at 10k documents 41 MB as tuples, 18 MB packed)."""
    return msgpack.packb(refs, use_bin_type=True)


def unpacked_refs(data: bytes) -> tuple[RefRow, ...]:
    """:func:`packed_refs` back (plain strings and numbers: no extension types)."""
    return msgpack.unpackb(data, raw=False, use_list=False, ext_hook=_no_extensions)  # type: ignore[no-any-return]


def _no_extensions(code: int, data: bytes) -> NoReturn:
    raise ValueError(f"unexpected msgpack extension {code}")


def parse_stream(
    root: Path,
    paths: list[str],
    workers: int,
    progress: Progress | None = None,
    reading: Reading = GITHUB,
) -> Iterator[SentRows | None]:
    """Rows of every file in ``paths`` order, as soon as each is parsed."""
    items = [(str(root / p), p, reading) for p in paths]
    yield from pools.imap(read_rows, items, workers, progress, at_least=PARALLEL_THRESHOLD)


def write_all(
    store: Store,
    rows: Iterable[SentRows | None],
    scan_rows: list[StoredProblem],
    root: Path,
    expected: int = 0,
    reading: Reading = GITHUB,
    finish: Callable[[Tables], None] | None = None,
) -> tuple[list[str], KeptEdges, list[tuple[str, str]], Counter[str]]:
    """Replace the whole state with ``rows`` (consumed as they come).

    Returns the paths read, the resolved references as graph edges (source, target key,
    kind, path, line, reason, in ``refs`` order), the documents as stored (key, blob,
    in ``docs`` order) and how many references ended in each resolution state.
    ``expected``: how many rows are coming (a large load finishes in a thread);
    ``finish``: more writes for the same transaction, made last.
    """
    # The commit leaves the whole new state (~8 KB a note) in the write-ahead log; for a
    # large vault, building the references' indexes and copying the log into the
    # database file are left to background threads (see Store.finish_later).
    later = expected >= BACKGROUND_FINISH
    if later:
        store.defer_checkpoints(True)
    with store.transaction() as state:
        indexes = state.empty()
        loaded = _load(state, rows)
        table = Names(loaded.names, reading.content_dirs)
        state.names.insert(table_rows(table))
        # Every table but refs is complete: SQLite indexes them in a thread (C code,
        # without the GIL) while this one resolves the references (Python).
        early = [(n, sql) for n, sql in indexes if not n.startswith("refs_")] if later else []
        edges, states = _write_refs(state, table, loaded, early, reading, root)
        state.problems.insert(scan_rows)
        if not later:
            state.build_indexes(indexes)
        checks.vault_problems(state, root, recompute_cycles=True)
        if finish is not None:
            finish(state)
    if later:
        store.defer_checkpoints(False)
        store.finish_later([index for index in indexes if index not in early])
    return loaded.paths, edges, loaded.blobs, states


def _write_refs(
    state: Tables,
    table: Names,
    loaded: _Loaded,
    early: list[Index],
    reading: Reading,
    root: Path,
) -> tuple[KeptEdges, Counter[str]]:
    """Resolve the references (while SQLite builds the ``early`` indexes in a thread) and
    insert them, and the ``[[note#heading]]`` ones whose heading is missing; the graph
    edges and the count of each resolution state."""
    building = (
        background.beside(lambda: state.build_indexes(early), "studykb-early-indexes")
        if early
        else contextlib.nullcontext()
    )
    with building:
        resolved, anchored, edges, states = _resolve(table, _each_ref(loaded.refs))
    # each row and its resolution joined as they are inserted (never a list of them all)
    joined = zip(_each_ref(loaded.refs), resolved, strict=True)
    state.refs.insert_resolved(row + got for row, got in joined)
    del resolved
    loaded.refs.clear()  # the parsed references: nothing after needs them
    including = [(p, o) for p, o in loaded.outlines.items() if o and '"inc"' in o]
    includes = Includes(root, reading) if including else None
    found = missing_anchors(anchored, loaded.outlines.get, reading, includes)
    if includes is not None:
        found += pending_rows(including, includes)
    state.anchors.insert(found)
    return edges, states


@dataclass
class _Loaded:
    """What streaming the parsed files into the state kept for what comes after."""

    paths: list[str] = field(default_factory=list)
    names: list[DocNames] = field(default_factory=list)
    blobs: list[tuple[str, str]] = field(default_factory=list)
    """(key, stored document) of every document, in ``docs`` order."""
    refs: list[bytes] = field(default_factory=list)
    """Each file's references, packed (:func:`packed_refs`), in ``paths`` order."""
    outlines: dict[str, str] = field(default_factory=dict)
    """path -> outline (JSON), for ``[[note#heading]]`` checks."""


def _each_ref(packed: list[bytes]) -> Iterator[RefRow]:
    """Every reference of the files, in order, unpacked a file at a time; the strings
    every row of a reference's file repeats (source, path, kind) shared, as they were
    before packing (each edge keeps them until the graph is built)."""
    shared: dict[str, str] = {}
    for data in packed:
        for row in unpacked_refs(data):
            source, path, line, kind, *rest = row
            shared_source = shared.setdefault(source, source)
            yield (
                shared_source,
                shared.setdefault(path, path),
                line,
                shared.setdefault(kind, kind),
                *rest,
            )  # type: ignore[misc]


def _load(state: Tables, rows: Iterable[SentRows | None]) -> _Loaded:
    """Insert the files, documents, problems and texts as the rows come (in batches);
    keep what resolving the references needs."""
    out = _Loaded()
    batch: tuple[list[FileRow], list[DocRow], list[ProblemRow], list[TextRow]] = ([], [], [], [])

    def flush() -> None:
        files, docs, problems, texts = batch
        state.files.insert(files)
        state.docs.insert(docs)
        state.problems.insert_parsed(problems)
        state.texts.insert(texts)
        for part in batch:
            part.clear()

    for row in rows:
        if row is None:
            continue
        path, mtime, size, digest, doc_rows, refs, problem_rows, text_row = row
        out.paths.append(path)
        batch[0].append((path, mtime, size, digest))
        batch[1].extend(doc_rows)
        batch[2].extend(problem_rows)
        batch[3].append(text_row)
        out.outlines[path] = text_row[3]
        if len(batch[0]) >= 256:
            flush()
        for key, p, did, title, dtype, _e, aliases, url, data in doc_rows:
            out.names.append(DocNames(key, p, did, title, dtype, aliases, url))
            out.blobs.append((key, data))
        out.refs.append(refs)
    flush()
    return out


def _resolve(
    table: Names, ref_rows: Iterable[RefRow]
) -> tuple[list[Resolution], list[Anchored], KeptEdges, Counter[str]]:
    """The resolution of each reference, in order (what its ``refs`` row ends with);
    also the ``[[note#heading]]`` ones to check, the graph edges of the resolved ones
    and the count of each resolution state."""
    resolve = table.resolve
    anchored: list[Anchored] = []
    edges = KeptEdges()
    add_edge = edges.add
    states: Counter[str] = Counter()
    out: list[Resolution] = []
    same: dict[Resolution, Resolution] = {}
    for row in ref_rows:
        source, path, line, kind, text, target, style, anchor, reason, optional, *_ = row
        got = resolve(source, path, target, style, anchor, bool(optional), text)
        key = got[0]
        if key is not None:
            add_edge(source, key, kind, path, line, reason)
            if anchor and wants_anchor_check(anchor, key):
                anchored.append(Anchored(path, line, text, anchor, table.paths[key]))
        states[got[1]] += 1
        out.append(same.setdefault(got, got))  # one tuple for each resolution met
    return out, anchored, edges.done(), states
