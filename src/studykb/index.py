"""The full-text index and its analyzer (the only module that imports whoosh and rjieba).

One whoosh index in ``<vault>/.studykb/index/`` holds every document (and every course
unit, as its own document keyed ``path#unit``). It is a cache of the vault state:
:func:`sync` compares what the index holds (per file: content hash plus the course the
file belongs to) with the state database and re-indexes only what changed.

Analysis (:class:`MixedTokenizer`): text is split into runs of Han characters and
runs of everything else. Only the Han runs are segmented, by rjieba (the Rust port of
jieba, same dictionary and tokens); other runs are split into words, lowercased, English
stop words dropped, and Porter-stemmed. Positions are consecutive across runs, so
phrases work in both languages and across their seams (``PostgreSQL的VACUUM``). At index
time a long Chinese word also yields, at its own position, the dictionary words inside
it (``数据并行`` gives ``并行``), and a word that is not in the dictionary yields its
two-character pieces (``时幻读`` gives ``幻读``), so short queries find longer words.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import rjieba
from whoosh import index as windex
from whoosh import query as wq
from whoosh.analysis import STOP_WORDS, IDTokenizer, LowercaseFilter, Token, Tokenizer
from whoosh.filedb.filestore import FileStorage
from whoosh.fields import ID, KEYWORD, STORED, TEXT, Schema
from whoosh.lang.porter2 import stem as _porter
from whoosh.qparser import MultifieldParser
from whoosh.writing import CLEAR, LockError

from .errors import UsageError

if TYPE_CHECKING:
    from .model import Document
    from .vault import Vault

#: Bumped whenever the analyzer or the schema changes; an index of another version is rebuilt.
INDEX_VERSION = 1
INDEX_DIR = "index"
SYNC_FILE = "studykb-sync.json"
#: Re-index everything (both cores, several segments) when at least this many files changed
#: and they are most of the vault.
FULL_REBUILD_MIN = 400
#: Use the two-process writer for a full rebuild of at least this many documents.
PARALLEL_MIN = 1500
#: Seconds a query waits for another process's writer before answering from the last index.
QUERY_LOCK_WAIT = 1.0
#: Seconds ``build`` (or a first build, when there is no index to answer from) waits.
BUILD_LOCK_WAIT = 300.0

#: Fields searched by default and their weights: names weigh more than the body.
FIELD_BOOSTS = {"title": 4.0, "aliases": 3.0, "tags": 2.0, "headings": 1.5, "body": 1.0,
                "meta": 1.0}
#: Fields holding exact values (filters, and ``field:value`` in a query).
EXACT_FIELDS = ("type", "tag", "course", "status", "level", "kind", "date", "id", "path", "key")

# -- analysis ------------------------------------------------------------------------

_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ebef\U00030000-\U0003134f"
_TOKENS = re.compile(rf"([{_HAN}]+)|\d+(?:[.,]\d+)+|[^\W{_HAN}]+")
_STOP = frozenset(STOP_WORDS)
_STEMS: dict[str, str] = {}
_HAS_WORD: dict[str, bool] = {}


def _stem(word: str) -> str:
    got = _STEMS.get(word)
    if got is None:
        got = _porter(word) if word.isascii() and word.isalpha() else word
        if len(_STEMS) < 200_000:
            _STEMS[word] = got
    return got


def _in_dict(word: str) -> bool:
    got = _HAS_WORD.get(word)
    if got is None:
        got = _HAS_WORD[word] = bool(rjieba.has_word(word))
    return got


def _pieces(word: str) -> list[tuple[str, int]]:
    """Shorter words inside a long Chinese word, indexed at the same position."""
    n = len(word)
    if n < 3:
        return []
    known = _in_dict(word)
    out = []
    for size in (2, 3):
        if size >= n:
            break
        for i in range(n - size + 1):
            piece = word[i:i + size]
            if (not known and size == 2) or _in_dict(piece):
                out.append((piece, i))
    return out


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
            for word, start, end in rjieba.tokenize(run):
                t.text = word
                if keeporiginal:
                    t.original = word
                if positions:
                    t.pos = pos
                if chars:
                    t.startchar, t.endchar = base + start, base + end
                yield t
                if expand and end - start > 2:
                    for piece, at in _pieces(word):
                        t.text = piece
                        if keeporiginal:
                            t.original = piece
                        if chars:
                            t.startchar = base + start + at
                            t.endchar = t.startchar + len(piece)
                        yield t
                pos += 1


ANALYZER = MixedTokenizer()


def analyze(text: str, mode: str = "query") -> list[str]:
    """The index terms of ``text`` (``mode="index"`` adds the pieces of long Chinese words)."""
    return [t.text for t in ANALYZER(text, mode=mode)]


def spans(text: str) -> list[tuple[str, int, int]]:
    """(term, start, end) of every indexed term in ``text``, stop words left out."""
    return [(t.text, t.startchar, t.endchar) for t in ANALYZER(text, chars=True, mode="index")]


def surface_forms(text: str) -> dict[str, str]:
    """term -> the first word of ``text`` that gave it (``decod`` -> ``decoding``)."""
    out: dict[str, str] = {}
    t: Any
    for t in ANALYZER(text, keeporiginal=True, mode="index"):
        out.setdefault(t.text, t.original.lower() if t.original.isascii() else t.original)
    return out


def _lower() -> Any:
    return IDTokenizer() | LowercaseFilter()


def make_schema() -> Schema:
    text = {"analyzer": MixedTokenizer(), "phrase": True}
    return Schema(
        key=ID(stored=True, unique=True, sortable=True),
        path=ID(stored=True),
        sig=STORED(),
        id=ID(stored=True, analyzer=_lower()),
        type=ID(stored=True),
        title=TEXT(stored=True, **text),  # type: ignore[arg-type]
        aliases=TEXT(**text),  # type: ignore[arg-type]
        tags=TEXT(**text),  # type: ignore[arg-type]
        headings=TEXT(**text),  # type: ignore[arg-type]
        body=TEXT(**text),  # type: ignore[arg-type]
        meta=TEXT(**text),  # type: ignore[arg-type]
        tag=KEYWORD(stored=True, lowercase=True, commas=True),
        course=KEYWORD(stored=True, commas=True),
        status=ID(stored=True),
        level=ID(stored=True),
        kind=ID(stored=True, analyzer=_lower()),
        date=ID(stored=True),
    )


# -- the index on disk ------------------------------------------------------------------


@dataclass
class SyncStats:
    """What one :func:`sync` did."""

    added: int = 0
    updated: int = 0
    removed: int = 0
    documents: int = 0
    rebuilt: bool = False
    """The whole index was written again (first build, many changes, or a damaged index)."""
    stale: bool = False
    """Another process held the index; queries answer from the last complete index."""
    seconds: float = 0.0
    notice: str | None = None
    paths: list[str] = field(default_factory=list)
    """Files re-indexed or removed."""

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)


#: Exceptions that mean "the index on disk cannot be used": rebuild it.
_BROKEN = (windex.IndexError, EOFError, OSError, ValueError, KeyError, TypeError,
           AttributeError, ImportError, IndexError, AssertionError, MemoryError,
           __import__("pickle").UnpicklingError, __import__("struct").error)


def index_dir(vault: Vault) -> Path:
    return Path(vault.config.state_dir) / INDEX_DIR


def _notify(message: str) -> None:
    """One line on stderr (the contract: a rebuilt or stale index is said once, briefly)."""
    print(f"studykb: {message}", file=sys.stderr)


def _compatible(ix: Any) -> bool:
    schema = ix.schema
    if sorted(schema.names()) != sorted(make_schema().names()):
        return False
    analyzer = getattr(schema["body"], "analyzer", None)
    return isinstance(analyzer, MixedTokenizer) and getattr(analyzer, "version", 0) == INDEX_VERSION


def _storage(folder: Path) -> Any:
    # No mmap: a segment file cut short under a reader would kill it with SIGBUS.
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
    try:
        ix = _open_dir(folder)
        if _compatible(ix):
            with ix.reader() as reader:
                reader.doc_count_all()
            return ix, None
        reason = "made by another studykb version"
    except _BROKEN as exc:
        reason = f"damaged ({type(exc).__name__})"
    _discard(folder)
    return _create(folder), (f"search index was {reason}; rebuilding "
                             f"{folder.parent.name}/{folder.name}/")


def _discard(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    if folder.exists():  # a file where the folder should be, or undeletable leftovers
        with contextlib.suppress(OSError):
            folder.unlink()


# -- what the vault holds -----------------------------------------------------------------


class Topics:
    """The vault's topics: a tag or ``covers`` entry naming one makes the document carry
    the topic's id, title and aliases in its ``tags`` field (so 投机解码 finds an English
    note tagged ``speculative-decoding``)."""

    def __init__(self, vault: Vault) -> None:
        from .vault.store import doc_from_blob

        self.names: dict[str, str] = {}
        self.texts: dict[str, str] = {}
        self.ids: dict[str, str] = {}
        topics = [doc_from_blob(blob) for (blob,) in vault.store.db.execute(
            "SELECT data FROM docs WHERE type='topic' ORDER BY key")]
        for doc in topics:  # ids win over titles and aliases, as in the graph
            for name in (doc.title, *doc.aliases):
                self.names.setdefault(name.casefold(), doc.key)
        for doc in topics:
            self.names[doc.id.casefold()] = doc.key
            self.ids[doc.key] = doc.id
            self.texts[doc.key] = "\n".join(dict.fromkeys((doc.id, doc.title, *doc.aliases)))
        h = hashlib.blake2b(digest_size=16)
        for name in sorted(self.names):
            h.update(f"{name}\0{self.texts[self.names[name]]}\n".encode())
        self.digest = h.hexdigest()

    def covered(self, doc: Document) -> list[str]:
        """Keys of the topics ``doc`` names in its tags and ``covers``."""
        out: dict[str, None] = {}
        for tag in (*doc.covers, *doc.tags):
            key = self.names.get(tag.casefold())
            if key and key != doc.key:
                out[key] = None
        return list(out)

    def sig(self, docs: Iterable[Document]) -> str:
        """Fingerprint of the topic names the documents of one file carry."""
        keys = sorted({key for doc in docs for key in self.covered(doc)})
        if not keys:
            return ""
        return hashlib.blake2b("\0".join(self.texts[k] for k in keys).encode(),
                               digest_size=8).hexdigest()


def _wanted(vault: Vault) -> dict[str, str]:
    """path -> signature of the file as the index should hold it (content and course)."""
    db = vault.store.db
    courses: dict[str, set[str]] = {}
    for path, target in db.execute(
            "SELECT path, target_key FROM refs WHERE kind='course' AND target_key IS NOT NULL"):
        courses.setdefault(path, set()).add(target.split("#", 1)[0])
    out = {}
    for path, digest in db.execute("SELECT path, hash FROM files"):
        extra = courses.get(path)
        out[path] = f"{digest}:{','.join(sorted(extra))}" if extra else digest
    return out


def _topic_sigs(vault: Vault, topics: Topics) -> dict[str, str]:
    """path -> topic fingerprint of every file (reads every document: when topics changed)."""
    by_path: dict[str, list[Document]] = {}
    for doc in vault.documents().values():
        by_path.setdefault(doc.path, []).append(doc)
    return {path: topics.sig(docs) for path, docs in by_path.items()}


def _digest(wanted: dict[str, str]) -> str:
    h = hashlib.blake2b(digest_size=16)
    for path in sorted(wanted):
        h.update(f"{path}\0{wanted[path]}\n".encode())
    return h.hexdigest()


def _read_cache(folder: Path, generation: int) -> dict[str, Any] | None:
    try:
        data = json.loads((folder / SYNC_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if (not isinstance(data, dict) or data.get("version") != INDEX_VERSION
            or data.get("generation") != generation or not isinstance(data.get("held"), dict)):
        return None
    return data


def _write_cache(folder: Path, generation: int, held: dict[str, list[str]], digest: str,
                 topics: str) -> None:
    """Remember what generation ``generation`` holds, so the next query skips reading it."""
    tmp = folder / f"{SYNC_FILE}.{os.getpid()}.tmp"
    with contextlib.suppress(OSError):
        tmp.write_text(json.dumps({"version": INDEX_VERSION, "generation": generation,
                                   "digest": digest, "topics": topics, "held": held}),
                       encoding="utf-8")
        os.replace(tmp, folder / SYNC_FILE)


def _held(reader: Any) -> dict[str, list[str]]:
    """path -> [file signature, topic fingerprint], from the stored fields of the index."""
    out = {}
    with reader:
        for fields in reader.all_stored_fields():
            sig = fields.get("sig") or ["", ""]
            out[fields["path"]] = list(sig)
    return out


def _records(vault: Vault, paths: list[str], wanted: dict[str, str], topics: Topics,
             done: dict[str, list[str]]) -> Iterator[dict[str, Any]]:
    """The whoosh documents of the files in ``paths`` (a course's units included).

    ``done`` receives path -> [file signature, topic fingerprint] of what was written.
    """
    from .vault.store import doc_from_blob

    db = vault.store.db
    for chunk in _chunks(sorted(paths)):
        marks = ",".join("?" * len(chunk))
        texts = {p: (b or "", h) for p, b, h in db.execute(
            f"SELECT path, body, headings FROM texts WHERE path IN ({marks})", chunk)}
        courses: dict[str, set[str]] = {}
        for source, target in db.execute(
                f"SELECT source, target_key FROM refs WHERE kind='course' AND target_key IS NOT"
                f" NULL AND path IN ({marks})", chunk):
            courses.setdefault(source, set()).add(target.split("#", 1)[0])
        by_path: dict[str, list[Document]] = {}
        for (blob,) in db.execute(f"SELECT data FROM docs WHERE path IN ({marks})", chunk):
            doc = doc_from_blob(blob)
            by_path.setdefault(doc.path, []).append(doc)
        for path, docs in by_path.items():
            sig = [wanted.get(path, ""), topics.sig(docs)]
            done[path] = sig
            body, headings = texts.get(path, ("", "[]"))
            for doc in docs:
                yield _record(doc, body, headings, courses.get(doc.key, set()), topics, sig)


def _record(doc: Document, body: str, headings: str, courses: set[str], topics: Topics,
            sig: list[str]) -> dict[str, Any]:
    if doc.type == "unit":
        body, heads = "", ""
        courses = {doc.parent or doc.path}
    else:
        heads = "\n".join(json.loads(headings or "[]"))
        if doc.type == "course":
            courses = courses | {doc.key}
    covered = topics.covered(doc)
    tags = list(dict.fromkeys((*doc.tags, *doc.covers)))
    return {
        "key": doc.key, "path": doc.path, "sig": sig, "id": doc.id, "type": doc.type,
        "title": doc.title, "aliases": "\n".join((*doc.aliases, doc.id)),
        "tags": "\n".join((*tags, *(topics.texts[k] for k in covered))),
        "headings": heads, "body": body, "meta": _meta_text(doc.meta),
        "tag": ",".join(t.replace(",", " ").casefold() for t in
                        dict.fromkeys((*tags, *(topics.ids[k] for k in covered)))),
        "course": ",".join(sorted(courses)), "status": doc.status or "",
        "level": str(doc.level) if doc.level else "", "kind": doc.kind or "",
        "date": str(doc.date or ""),
    }


#: Front-matter keys indexed in fields of their own, or naming other documents.
_OWN_KEYS = {"id", "title", "aliases", "tags", "covers", "type", "status", "level", "date",
             "units", "requires", "refs", "related", "items", "course", "kind"}


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
        yield items[i: i + size]


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
    folder = index_dir(vault)
    ix, stats.notice = _open(folder)
    wanted = _wanted(vault)
    digest = _digest(wanted)
    topics = Topics(vault)
    generation = ix.latest_generation()
    cache = _read_cache(folder, generation)
    same_topics = cache is not None and cache.get("topics") == topics.digest
    if cache is not None and same_topics and cache.get("digest") == digest:
        stats.documents = ix.doc_count()
        return _done(stats, started, quiet)
    try:
        held = cache["held"] if cache is not None else _held(ix.reader())
    except _BROKEN as exc:
        _discard(folder)
        ix = _create(folder)
        held = {}
        stats.notice = (f"search index was damaged ({type(exc).__name__}); rebuilding "
                        f"{folder.parent.name}/{folder.name}/")
    tsigs = None if same_topics else _topic_sigs(vault, topics)
    changed, removed = _diff(held, wanted, tsigs)
    if changed or removed:
        full = _full(held, changed, wanted)
        if wait is None:
            wait = BUILD_LOCK_WAIT if not held else QUERY_LOCK_WAIT
        try:
            writer = _writer(ix, full, len(changed), wait)
        except LockError:
            stats.stale = True
            stats.notice = stats.notice or ("the search index is being updated by another "
                                            "studykb process; results may miss the latest edits")
            stats.documents = ix.doc_count()
            return _done(stats, started, quiet)
        written: dict[str, list[str]] = {}
        try:
            if writer.generation - 1 != generation:  # someone else wrote while we waited
                held = _held(writer.reader())
                tsigs = tsigs if tsigs is not None else _topic_sigs(vault, topics)
                changed, removed = _diff(held, wanted, tsigs)
                full = full and _full(held, changed, wanted)
            if changed or removed:
                _fill(vault, writer, wanted, topics, changed, removed, full, written)
                writer.commit(mergetype=CLEAR if full else None)
            else:
                writer.cancel()
        except BaseException:
            with contextlib.suppress(Exception):
                writer.cancel()
            raise
        generation = writer.generation if (changed or removed) else generation
        stats.rebuilt = full and bool(changed or removed)
        stats.added = sum(p not in held for p in changed)
        stats.updated = len(changed) - stats.added
        stats.removed = len(removed)
        stats.paths = sorted(changed + removed)
        if not full:
            written = {**{p: v for p, v in held.items() if p not in removed}, **written}
        held = written
        ix = _open_dir(folder)
    _write_cache(folder, generation, held, digest, topics.digest)
    stats.documents = ix.doc_count()
    return _done(stats, started, quiet)


def _diff(held: dict[str, list[str]], wanted: dict[str, str], tsigs: dict[str, str] | None
          ) -> tuple[list[str], list[str]]:
    """(files to (re-)index, files to drop); ``tsigs`` also compares topic fingerprints."""
    changed = []
    for path, sig in wanted.items():
        have = held.get(path)
        if (have is None or have[0] != sig
                or (tsigs is not None and have[1] != tsigs.get(path, ""))):
            changed.append(path)
    return changed, [p for p in held if p not in wanted]


def _full(held: dict[str, list[str]], changed: list[str], wanted: dict[str, str]) -> bool:
    """Whether to write the index again from scratch rather than patch it."""
    return not held or (len(changed) >= FULL_REBUILD_MIN and len(changed) * 2 >= len(wanted))


def _done(stats: SyncStats, started: float, quiet: bool) -> SyncStats:
    stats.seconds = time.perf_counter() - started
    if stats.notice and not quiet:
        _notify(stats.notice)
    return stats


def _writer(ix: Any, full: bool, count: int, wait: float) -> Any:
    """A writer holding the index lock; two processes for a large full build."""
    if full and count >= PARALLEL_MIN and (os.cpu_count() or 1) > 1:
        return ix.writer(procs=2, multisegment=True, timeout=wait, delay=0.05, limitmb=128)
    return ix.writer(timeout=wait, delay=0.05, limitmb=128)


def _fill(vault: Vault, writer: Any, wanted: dict[str, str], topics: Topics,
          changed: list[str], removed: list[str], full: bool,
          written: dict[str, list[str]]) -> None:
    if full:  # the commit clears the index: every file goes in again
        changed = list(wanted)
    else:
        for path in removed + changed:
            writer.delete_by_term("path", path)
    for record in _records(vault, changed, wanted, topics, written):
        writer.add_document(**record)


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
    total: int
    terms: frozenset[str]
    """Terms of the text fields the query asked for (to highlight in a snippet)."""
    empty: bool = False
    """The query had nothing to look for (only stop words or punctuation)."""


_TEXT_FIELDS = tuple(FIELD_BOOSTS)
_searchers: dict[str, Any] = {}
_parsers: dict[int, Any] = {}


def _parser(schema: Any) -> Any:
    parser = _parsers.get(id(schema))
    if parser is None:
        _parsers.clear()
        parser = _parsers[id(schema)] = MultifieldParser(list(FIELD_BOOSTS), schema,
                                                         fieldboosts=FIELD_BOOSTS)
    return parser


def _searcher(vault: Vault) -> Any:
    """A searcher on the latest complete index (kept open between queries of one process)."""
    folder = str(index_dir(vault))
    searcher = _searchers.get(folder)
    if searcher is not None:
        fresh = searcher.refresh()
        if fresh is not searcher:
            _searchers[folder] = searcher = fresh
        return searcher
    ix, notice = _open(Path(folder))
    if notice:
        _notify(notice)
    searcher = _searchers[folder] = ix.searcher()
    return searcher


def close(vault: Vault | None = None) -> None:
    """Close the searchers kept open by :func:`query` (all of them without ``vault``)."""
    folders = [str(index_dir(vault))] if vault is not None else list(_searchers)
    for folder in folders:
        searcher = _searchers.pop(folder, None)
        if searcher is not None:
            with contextlib.suppress(Exception):
                searcher.close()


def _retrying(vault: Vault, action: Any) -> Any:
    """Run ``action(searcher)``; a damaged index is rebuilt (with a notice) and tried again."""
    try:
        return action(_searcher(vault))
    except _BROKEN as exc:
        if isinstance(exc, UsageError):
            raise
        close(vault)
        _notify(f"search index was damaged ({type(exc).__name__}); rebuilding "
                f"{index_dir(vault).parent.name}/{INDEX_DIR}/")
        rebuild(vault)
        return action(_searcher(vault))


def parse_query(text: str) -> Any:
    """The whoosh query for ``text``; a syntax error raises UsageError."""
    parser = _parser(_schema())
    q = parser.parse(text)
    error = _first_error(q)
    if error:
        raise UsageError(f"Cannot read the query {text!r}: {error}.",
                         hint=QUERY_HELP)
    return q


def _phrase(name: str) -> Any:
    """``name`` as a phrase in every text field, at half weight."""
    words = name.replace('"', " ").strip()
    q = _parser(_schema()).parse(f'"{words}"') if words else wq.NullQuery
    if not isinstance(q, type(wq.NullQuery)):
        q = q.with_boost(0.5) if hasattr(q, "with_boost") else q
    return q


def _schema() -> Schema:
    global _SCHEMA
    if _SCHEMA is None:
        _SCHEMA = make_schema()
    return _SCHEMA


_SCHEMA: Schema | None = None
QUERY_HELP = ('Query syntax: words (all must match), OR, NOT, "a phrase", field:value '
              '(title, aliases, body, tags, type, course, status, level, kind, id, path), '
              'prefix*, and parentheses.')


def _first_error(q: Any) -> str | None:
    error = getattr(q, "error", None)
    if error:
        return str(error)
    for child in q.children() if hasattr(q, "children") else ():
        found = _first_error(child)
        if found:
            return found
    return None


def query(vault: Vault, text: str, filters: list[list[tuple[str, str]]] | None = None,
          limit: int = 10, expansions: Iterable[str] = ()) -> Answer:
    """Run ``text`` (whoosh query language; empty: every document, in path order).

    ``filters``: groups of (field, exact value); a document must match one pair of
    every group. ``expansions``: other phrasings (a topic's names in the other language)
    that also match, at a lower weight.
    """
    q = parse_query(text) if text.strip() else wq.Every()
    if isinstance(q, type(wq.NullQuery)):
        return Answer([], 0, frozenset(), empty=True)
    extra = [_phrase(name) for name in expansions]
    extra = [e for e in extra if not isinstance(e, type(wq.NullQuery))]
    if extra:
        q = wq.Or([q, *extra])
    conditions = [wq.Or([wq.Term(name, value) for name, value in group])
                  for group in (filters or []) if group]
    mask = wq.And(conditions) if conditions else None
    sort = isinstance(q, wq.Every)

    def run(searcher: Any) -> Answer:
        results = searcher.search(q, limit=max(1, limit), filter=mask,
                                  sortedby="key" if sort else None)
        hits = [Found(hit["key"], 0.0 if sort else float(hit.score or 0.0),
                      dict(hit.fields())) for hit in results]
        terms = frozenset() if sort else _text_terms(q, searcher.reader())
        return Answer(hits, results.estimated_length() if hits else 0, terms)

    return _retrying(vault, run)


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


#: Chinese function words: indexed (phrases need them) but never a reason for similarity.
_ZH_STOP = frozenset("""的 了 是 在 和 与 也 就 都 而 及 或 一个 我们 你 我 他 她 它 这 那 这个 那个 个 上
下 中 为 对 把 被 让 会 能 可以 没有 不 有 就是 还 但 并 等 以 于 之 其 时 后 前 要 所以 因为 如果 一 二
两 多 很 更 最 再 又 才 从 到 由 用 做 来 去 说 看 里 吗 呢 吧 啊 着 过 得 地 每 各 所 该 此 如 即 则 将
已 已经 一些 这些 那些 什么 怎么 如何 通过 进行 使用 之后 之前 然后 以及 但是 而且 或者 一样 一次 一般
""".split())


def _telling(term: str) -> bool:
    """Whether a term says something about a text (not a function word, number or letter)."""
    return len(term) > 1 and term not in _ZH_STOP and not term.replace(".", "").isdigit()


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
    body, headings = vault.text(doc.path) if doc.type != "unit" else ("", [])
    text = "\n".join([doc.title, *doc.aliases, *headings, body])

    def run(searcher: Any) -> list[tuple[str, float, list[str]]]:
        terms = [(t, w) for t, w in searcher.key_terms_from_text(
            "body", text, numterms=40, normalize=False) if _telling(t)][:25]
        if not terms:
            return []
        weight = dict(terms)
        q = wq.Or([wq.Term("body", word, boost=w) for word, w in terms])
        results = searcher.search(q, limit=limit, mask=wq.Term("key", key), terms=True)
        words = surface_forms(text)
        out = []
        for hit in results:
            shared = [t.decode("utf-8") if isinstance(t, bytes) else t
                      for _f, t in hit.matched_terms()]
            shared.sort(key=lambda t: -weight.get(t, 0.0))
            out.append((hit["key"], round(float(hit.score or 0.0), 4),
                        [words.get(t, t) for t in shared[:8]]))
        return out

    return _retrying(vault, run)
