"""The one place studykb keeps what it derives from the notes between commands.

Every derived thing (reading-plan tables, the related-documents features, text vectors
and the matrices made from them, what the search index holds) is one named entry of
``.studykb/cache.sqlite``:

    name   what it is (a row of :data:`MADE_BY`)
    key    a digest of the code that makes it and of the inputs it is made from
    value  msgpack: plain data only, so loading an entry can never run code

An entry is used only when its key matches, so nothing is ever invalidated by hand:
changing the code listed for a name (a new front-matter field read by the parser, a new
feature in the related ranking) changes its code version, and changing the notes
changes the inputs. :data:`MADE_BY` says what invalidates the entries not yet
ported to :mod:`studykb.vault.derived`; a derived structure's code version is computed
from its own declarations (its modules and its inputs').

The state database (``state.sqlite``) follows the same rule for its ``state`` entry:
it is rebuilt when the code that parses and stores the notes changes.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import msgpack

from studykb import __version__
from studykb.runtime import process
from studykb.vault import damage
from studykb.vault.cache_pack import packed_pieces, packed_size, write_packed

#: The modules that read a clone's files for check (what each file and commit says).
_REPO_READER = (
    "studykb.repos.symbols",
    "studykb.repos.git",
    "studykb.repos.check",
    "studykb.repos.cached",
)
#: What each derived thing is made by: the modules (or packages) whose code decides it.
#: Its code version is a digest of their source, so editing them invalidates it.
MADE_BY: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        # the state database: files parsed into documents, references and problems
        "state": (
            "studykb.model",
            "studykb.parse",
            "studykb.vault.state",
            "studykb.vault.rows",
            "studykb.vault.resolve",
            "studykb.vault.checks",
            "studykb.vault.bulk",
            "studykb.vault.kept_edges",  # the edges a first build keeps for the graph
            "studykb.vault.scan",
            "studykb.vault.refresh",
            "studykb.vault.saying",  # whether a refresh reads a repository's notes
            "studykb.vault.racy",  # when a first build's racy files count as confirmed
            "studykb.vault.update",
            "studykb.vault.outside",  # how a repository's notes are parsed and named
            "studykb.vault.includes",  # the headings included pages add, missing includes
            "studykb.graph",  # the prerequisite loops
        ),
        "search-segments": ("studykb.text.segment",),
        # links into code: each file's lines and symbols by blob id; each commit's files
        # and its index of symbol names (studykb.repos.cached)
        "repo-files": _REPO_READER,
        "repo-commits": _REPO_READER,
        # the engine a static site was last made with, and each page's list digest
        "site-lists": ("studykb.related",),
    }
)
CACHE_FILE = "cache.sqlite"


@process.memo(maxsize=None)
def code_version(name: str) -> str:
    """A digest of the source of everything :data:`MADE_BY` lists for ``name``."""
    digest = hashlib.blake2b(f"{__version__}:{name}".encode(), digest_size=12)
    digest.update(modules_version(MADE_BY[name]).encode())
    return digest.hexdigest()


@process.memo(maxsize=None)
def modules_version(modules: tuple[str, ...]) -> str:
    """A digest of the source of ``modules`` (a package: all of its modules) and of
    studykb's version (a derived structure's code version is made of these:
    :func:`studykb.vault.derived.code_version`)."""
    digest = hashlib.blake2b(__version__.encode(), digest_size=12)
    for module in modules:
        for source in _sources(module):
            digest.update(source.encode())
            with contextlib.suppress(OSError):
                digest.update(Path(source).read_bytes())
    return digest.hexdigest()


def _sources(module: str) -> list[str]:
    """Source files of a module, or of every module of a package."""
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        return []
    if spec.submodule_search_locations:  # a package: all of its modules
        out: list[str] = []
        for folder in spec.submodule_search_locations:
            out.extend(sorted(str(p) for p in Path(folder).rglob("*.py")))
        return out
    return [spec.origin]


def key(name: str, *inputs: object) -> str:
    """The key of ``name`` made from ``inputs`` by this code."""
    digest = hashlib.blake2b(code_version(name).encode(), digest_size=16)
    for item in inputs:
        digest.update(b"\x1f" + str(item).encode())
    return digest.hexdigest()


#: Entries from this size up are written into their row in place (:func:`_write_in_place`).
WRITTEN_IN_PLACE = 1 << 20


def _write_in_place(
    db: sqlite3.Connection, name: str, entry_key: str, value: Any, size: int
) -> None:
    """Store a large entry without a whole copy of it: neither the packed entry in one
    string (it is packed and written a stretch at a time, :func:`write_packed`) nor
    SQLite's copy of a parameter (at 50k documents the engine's entry is 64 MB, the
    text vectors' 55 MB). The row is made with room for the value (``size``, from
    :func:`packed_size`), which is then written into it (one transaction: a reader sees
    the old entry or the new one)."""
    from studykb.vault.state.store import atomic  # deferred: the state imports this module

    with atomic(db):
        row = db.execute(
            "INSERT OR REPLACE INTO entries VALUES (?,?,zeroblob(?))", (name, entry_key, size)
        ).lastrowid
        if row is None:
            raise sqlite3.OperationalError("the cache entry's row was not made")
        with db.blobopen("entries", "value", row) as blob:
            if write_packed(blob.write, value) != size:
                raise sqlite3.OperationalError("the cache entry changed while written")


#: Entries from this size up are read through incremental blob I/O (:func:`_read_value`).
READ_IN_PLACE = 1 << 20


def _read_value(db: sqlite3.Connection, name: str, entry_key: str) -> Any | None:
    """The stored value of ``name`` under ``entry_key`` as SQLite gives it, or None.

    A large one (a blob from :data:`READ_IN_PLACE` up) is read through SQLite's
    incremental blob I/O, which walks the row's overflow pages at a quarter of the CPU
    a column's value costs (the kept related structures, 16 MB at 10k documents: 24 ms
    of CPU as a column, 6.6 ms so). Both reads are one snapshot (a read transaction): an
    entry replaced in between by another process is never read in part."""
    begun = not db.in_transaction
    if begun:
        db.execute("BEGIN")
    try:
        found = db.execute(
            "SELECT rowid, typeof(value), length(value) FROM entries WHERE name=? AND key=?",
            (name, entry_key),
        ).fetchone()
        if found is None:
            return None
        rowid, kind, size = found
        if kind != "blob" or size < READ_IN_PLACE:
            return db.execute("SELECT value FROM entries WHERE rowid=?", (rowid,)).fetchone()[0]
        with db.blobopen("entries", "value", rowid, readonly=True) as blob:
            return blob.read()
    finally:
        if begun and db.in_transaction:
            db.execute("COMMIT")


def pack(value: Any) -> bytes:
    return msgpack.packb(value, use_bin_type=True)


def unpack(data: bytes) -> Any:
    # strict: plain maps, arrays, strings, bytes and numbers; no extension types
    return msgpack.unpackb(
        data, raw=False, strict_map_key=False, use_list=True, ext_hook=_no_extensions
    )


def unpack_inner(data: bytes) -> Any:
    """A value a structure packed (:func:`pack`) into its own entry, to decode on use:
    as :func:`unpack` reads it, a ``ValueError`` when it is not one."""
    try:
        return unpack(data)
    except (TypeError, msgpack.UnpackException) as exc:
        raise ValueError("not a packed value") from exc


def _no_extensions(code: int, data: bytes) -> Any:
    raise ValueError(f"unexpected msgpack extension type {code}")


class Cache:
    """The derived entries of one vault (``.studykb/cache.sqlite``).

    Reads and writes never raise for a missing, damaged or read-only file: a cache
    that cannot be used only makes the next command slower.
    """

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / CACHE_FILE
        self._db: sqlite3.Connection | None = None
        self._memo: dict[str, tuple[str, Any]] = {}

    def _conn(self) -> sqlite3.Connection | None:
        if self._db is None:
            try:
                self._db = self._connect()
            except sqlite3.Error as exc:
                if not self._damaged(exc):
                    return None
                try:  # the damaged file is gone: start an empty one
                    self._db = self._connect()
                except sqlite3.Error:
                    return None
        return self._db

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=10, isolation_level=None, check_same_thread=False)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS entries(name TEXT PRIMARY KEY, key TEXT, value BLOB)"
            )
        except BaseException:
            db.close()
            raise
        return db

    def _damaged(self, exc: sqlite3.Error) -> bool:
        """When SQLite proves the file damaged (or its table is not ours): delete it, so
        the next use starts an empty cache, instead of every command going without."""
        if not (damage.corrupt(exc) or damage.foreign_table(exc)):
            return False
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None
        damage.discard(self.path)
        return True

    def reconnect(self) -> None:
        """Open a connection of this process's own on next use, in a process forked
        from one that had the cache open (the inherited one stays open, unused: see
        :meth:`studykb.vault.state.Store.reconnect`)."""
        from studykb.vault.state import inherited  # deferred: the state imports this module

        if self._db is not None:
            inherited().append(self._db)
            self._db = None

    def get(self, name: str, entry_key: str, keep: bool = True) -> Any | None:
        """The value stored for ``name`` under ``entry_key``, or None; ``keep``: also in
        memory for the next ``get`` (off for a value its reader changes in place)."""
        memo = self._memo.get(name)
        if memo is not None and memo[0] == entry_key:
            return memo[1]
        db = self._conn()
        if db is None:
            return None
        try:
            data = _read_value(db, name, entry_key)
            value = unpack(data) if data is not None else None
        except sqlite3.Error as exc:
            self._damaged(exc)
            return None
        except (ValueError, TypeError, msgpack.UnpackException):
            return None
        if value is not None and keep:
            self._memo[name] = (entry_key, value)
        return value

    def holds(self, name: str) -> bool:
        """Whether an entry named ``name`` is kept, under any key (without reading it)."""
        if name in self._memo:
            return True
        db = self._conn()
        if db is None:
            return False
        try:
            return db.execute("SELECT 1 FROM entries WHERE name=?", (name,)).fetchone() is not None
        except sqlite3.Error:
            return False

    def put(self, name: str, entry_key: str, value: Any, keep: bool = True) -> None:
        """Store ``value`` for ``name`` under ``entry_key`` (replacing the older one):
        a name of :data:`MADE_BY`, or of a derived structure
        (:class:`studykb.vault.derived.Derived`, which passes ``keep=False``)."""
        if keep:
            self._memo[name] = (entry_key, value)
        else:
            self._memo.pop(name, None)
        db = self._conn()
        if db is None:
            return
        try:
            size = packed_size(value)
            if size < WRITTEN_IN_PLACE:
                data = b"".join(packed_pieces(value))
                db.execute("INSERT OR REPLACE INTO entries VALUES (?,?,?)", (name, entry_key, data))
            else:
                _write_in_place(db, name, entry_key, value, size)
        except sqlite3.Error as exc:
            self._damaged(exc)

    def forget(self, names: Iterable[str] = ()) -> None:
        """Drop entries (all of them without ``names``)."""
        names = list(names)
        for name in names or list(self._memo):
            self._memo.pop(name, None)
        db = self._conn()
        if db is None:
            return
        with contextlib.suppress(sqlite3.Error):
            if names:
                db.executemany("DELETE FROM entries WHERE name=?", [(n,) for n in names])
            else:
                db.execute("DELETE FROM entries")

    def prune(self, derived: Iterable[str]) -> None:
        """Drop the entries that no code makes any more: named neither in :data:`MADE_BY`
        nor in ``derived`` (the names of every derived structure,
        :func:`studykb.structures.names`), such as those of an older version."""
        keep = sorted({*MADE_BY, *derived})
        for name in [n for n in self._memo if n not in keep]:
            self._memo.pop(name, None)
        db = self._conn()
        if db is None:
            return
        marks = ",".join("?" * len(keep))
        with contextlib.suppress(sqlite3.Error):
            db.execute(f"DELETE FROM entries WHERE name NOT IN ({marks})", keep)  # noqa: S608

    def close(self) -> None:
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None
