"""The state database in ``.studykb/state.sqlite``.

SQLite gives the atomicity the build needs: every refresh is one transaction, so a
process killed at any moment leaves the old state or the new one. The state is made
anew (in one transaction: if that fails, the old one stays) when the code that parses
and stores the notes changed (:func:`studykb.vault.cache.code_version`), and the file
is deleted only when SQLite proves it corrupt. A full disk or an I/O error is reported,
never taken for damage.

Every column holds text, numbers or JSON; nothing read from this file can run code.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from studykb.errors import DiskFull, StudyError, VaultError  # noqa: F401
from studykb.model import Document, Problem
from studykb.runtime import process
from studykb.runtime.background import Later
from studykb.vault import damage, statedir
from studykb.vault.cache import code_version
from studykb.vault.schema import (
    DOC_FIELDS,
    SCHEMA,
    Edge,
    doc_from_blob,
    secondary_indexes,
)

#: What :meth:`Store._version` says of a state whose tables are not studykb's.
_NOT_OURS = "\0not-ours"
_FULL_CODE = 13  # SQLITE_FULL


def _chunks(items: list[str], size: int = 400) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def reader(path: Path) -> Store:
    """A store on an existing state file, for reading only (an index worker process)."""
    store = Store.__new__(Store)
    store.path = path
    store.fresh = False
    store.notice = None
    store._later = Later()
    store.db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30, isolation_level=None)
    return store


def schema_version() -> str:
    """The version of the state: the code that parses and stores the notes, and the schema."""
    return code_version("state")


def inherited() -> list[object]:
    """Connections inherited from the process this one was forked from, kept referenced
    and unused (see :meth:`Store.reconnect`): this process's own."""
    return process.once("vault.inherited-connections", list)


class Store:
    """A thin layer over the SQLite file; every write goes through :meth:`transaction`."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / "state.sqlite"
        self.fresh = False
        self.notice: str | None = statedir.prepare(state_dir)
        self._later = Later()
        """Work finishing a first build in the background (see :meth:`finish_later`)."""
        self.db = self._open()

    def _open(self) -> sqlite3.Connection:
        version = schema_version()
        try:
            db = self._connect()
            found = self._version(db)
        except sqlite3.DatabaseError as exc:
            if not damage.corrupt(exc):
                raise _state_error(self.path, exc) from None
            self.notice = f"state was damaged ({exc}); rebuilding {self.path.parent.name}/"
            damage.discard(self.path)
            try:
                db = self._connect()
            except sqlite3.DatabaseError as again:
                raise _state_error(self.path, again) from None
            found = None
        if found == version:
            self._ensure_indexes(db)
            return db
        if found == _NOT_OURS:
            self.notice = self.notice or (
                f"state was damaged (its tables are not studykb's); rebuilding "
                f"{self.path.parent.name}/"
            )
        elif found is not None:
            self.notice = self.notice or (
                f"state was made by another studykb version; rebuilding {self.path.parent.name}/"
            )
        try:
            self._create(db, version)
        except sqlite3.DatabaseError as exc:
            with contextlib.suppress(sqlite3.Error):
                db.close()
            raise _state_error(self.path, exc) from None
        self.fresh = True
        return db

    @staticmethod
    def _version(db: sqlite3.Connection) -> str | None:
        """The version the state was made by; None for a file without tables,
        :data:`_NOT_OURS` when its tables are not the ones studykb makes (changed by
        something else: the version cannot be trusted)."""
        tables = damage.tables_match(db, SCHEMA)
        if tables is None:
            return None
        if not damage.meta_matches(db, SCHEMA):
            return _NOT_OURS
        row = db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        found = row[0] if row else ""
        if not tables and found == schema_version():
            return _NOT_OURS  # this version's tables are known: some were changed
        return str(found)

    @staticmethod
    def _create(db: sqlite3.Connection, version: str) -> None:
        """Replace every table by an empty one of this schema, in one transaction (on a
        full disk the old state stays as it was)."""
        db.execute("BEGIN IMMEDIATE")
        try:
            for kind, name in db.execute(
                "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'index')"
                " AND name NOT LIKE 'sqlite_%'"
            ).fetchall():
                if kind == "table":
                    db.execute(f'DROP TABLE IF EXISTS "{name}"')
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute("INSERT OR REPLACE INTO meta VALUES('schema', ?)", (version,))
            # which state this is: a state made anew never takes an old one's fingerprint
            db.execute("INSERT OR REPLACE INTO meta VALUES('instance', ?)", (os.urandom(8).hex(),))
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def reconnect(self) -> None:
        """A connection of this process's own, in a process forked from one that had
        the state open. The inherited connection stays referenced, unused and open:
        closing it here could checkpoint the other process's log from under it."""
        inherited().append(self.db)
        self.db = self._connect()

    def _connect(self) -> sqlite3.Connection:
        # check_same_thread off: ``studykb watch`` answers commands from a second thread,
        # one at a time under its lock (serve.py)
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.DatabaseError:
            db.close()
            raise
        return db

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write: all of it or nothing. A full disk rolls back and says so."""
        try:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield self.db
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            if self.db.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    self.db.execute("ROLLBACK")
            raise _state_error(self.path, exc) from None

    def finish_later(self, indexes: list[tuple[str, str]]) -> None:
        """Build ``indexes`` and copy the write-ahead log into the database file, in
        background threads.

        After a bulk load the log holds the whole state (~85 MB at 10k notes) and the
        secondary indexes are still to be built: ~0.8 s that would keep the caller
        waiting. Both run in SQLite's C code, without the GIL, while the caller goes on
        with the committed state: one thread builds the indexes while another copies
        the load into the database file (a passive checkpoint runs beside a writer),
        then copies the indexes' pages too. Closing the store, or the end of the
        process, waits for both. A process killed first leaves a valid log, which
        SQLite reads and copies at the next commit or close, and no indexes, which the
        next :class:`Store` to open the file builds (:meth:`_ensure_indexes`).
        """

        def connect() -> sqlite3.Connection:
            return sqlite3.connect(
                self.path, timeout=30, isolation_level=None, check_same_thread=False
            )

        def build() -> None:
            with contextlib.suppress(sqlite3.Error):
                db = connect()
                try:
                    db.execute("PRAGMA wal_autocheckpoint=0")  # copying is the other's job
                    if indexes:
                        db.execute("BEGIN IMMEDIATE")
                        for _name, sql in indexes:
                            db.execute(sql)
                        db.execute("COMMIT")
                finally:
                    db.close()

        def copy() -> None:
            with contextlib.suppress(sqlite3.Error):
                db = connect()
                try:
                    db.execute("PRAGMA wal_checkpoint(PASSIVE)")  # the load
                    builder.join()
                    db.execute("PRAGMA wal_checkpoint(PASSIVE)")  # the indexes
                finally:
                    db.close()

        builder = self._later.start(build, "studykb-indexes")
        # the copier waits for the builder: joining both waits for the whole work
        self._later.start(copy, "studykb-checkpoint")

    def _ensure_indexes(self, db: sqlite3.Connection) -> None:
        """Build the secondary indexes a process that ended early left unbuilt."""
        have = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type='index'")}
        missing = [sql for name, sql in secondary_indexes() if name not in have]
        if not missing:
            return
        with contextlib.suppress(sqlite3.Error):  # a read-only vault: slower queries
            db.execute("BEGIN IMMEDIATE")
            try:
                for sql in missing:
                    db.execute(sql)
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def close(self) -> None:
        self._later.join()
        self.db.close()

    # -- reads ---------------------------------------------------------------
    def files(self) -> dict[str, tuple[int, int, str]]:
        rows = self.db.execute("SELECT path, mtime_ns, size, hash FROM files")
        return {p: (m, s, h) for p, m, s, h in rows}

    def documents(self) -> list[Document]:
        return [doc_from_blob(d) for (d,) in self.db.execute("SELECT data FROM docs")]

    def covering(self) -> list[Document]:
        """The documents (units too) whose ``covers`` names something: SQLite's JSON
        functions pick them out, so ``check`` does not decode every document."""
        at = DOC_FIELDS.index("covers")
        sql = f"SELECT data FROM docs WHERE json_array_length(CAST(data AS TEXT), '$[{at}]') > 0"
        try:
            return [doc_from_blob(d) for (d,) in self.db.execute(sql)]
        except sqlite3.OperationalError:  # an SQLite without JSON functions
            return [d for d in self.documents() if d.covers]

    def documents_for(self, keys: list[str]) -> list[Document]:
        out: list[Document] = []
        for i in range(0, len(keys), 400):
            chunk = keys[i : i + 400]
            out.extend(
                doc_from_blob(d)
                for (d,) in self.db.execute(
                    f"SELECT data FROM docs WHERE key IN ({','.join('?' * len(chunk))})", chunk
                )
            )
        return out

    def document(self, key: str) -> Document | None:
        row = self.db.execute("SELECT data FROM docs WHERE key=?", (key,)).fetchone()
        return doc_from_blob(row[0]) if row else None

    def name_rows(self) -> list[tuple[str, str, str, str, str, str, str | None]]:
        """(key, path, id, title, type, aliases json, url) of every document."""
        return self.db.execute("SELECT key, path, id, title, type, names, url FROM docs").fetchall()

    def refs(self, where: str = "", args: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
        sql = (
            "SELECT source, path, line, kind, text, target, style, anchor, reason, optional,"
            " target_key, state, note, n FROM refs "
        )
        return self.db.execute(sql + where, tuple(args)).fetchall()

    def problems(self) -> list[Problem]:
        rows = self.db.execute(
            "SELECT path, line, severity, code, message FROM problems"
        ).fetchall()
        return [Problem(*r) for r in rows]

    def text(self, path: str) -> tuple[str, list[str]]:
        row = self.db.execute("SELECT body, headings FROM texts WHERE path=?", (path,)).fetchone()
        return (row[0], json.loads(row[1])) if row else ("", [])

    def outline(self, path: str) -> str | None:
        """The outline (JSON) of the file at ``path``, or None when there is no such file."""
        row = self.db.execute("SELECT outline FROM texts WHERE path=?", (path,)).fetchone()
        return row[0] if row else None

    # -- typed reads for the features (all the SQL they need lives here) -----------------
    def names_at(self, levels: Iterable[int]) -> list[str]:
        """Every distinct (folded) name at these levels of the name table."""
        marks = ",".join(str(int(level)) for level in levels)
        return [
            n
            for (n,) in self.db.execute(f"SELECT DISTINCT name FROM names WHERE level IN ({marks})")
        ]

    def file_rows(self) -> list[tuple[str, int, str]]:
        """(path, mtime_ns, content hash) of every file, by path."""
        return self.db.execute("SELECT path, mtime_ns, hash FROM files ORDER BY path").fetchall()

    def file_hashes(self, paths: Iterable[str] | None = None) -> dict[str, str]:
        """path -> content hash of every file, or of those of ``paths`` that exist (half
        the time of :meth:`file_rows`)."""
        if paths is None:
            return dict(self.db.execute("SELECT path, hash FROM files"))
        out: dict[str, str] = {}
        for chunk in _chunks(sorted(set(paths))):
            out.update(
                self.db.execute(
                    f"SELECT path, hash FROM files WHERE path IN ({','.join('?' * len(chunk))})",
                    chunk,
                )
            )
        return out

    def generation(self) -> tuple[str, int]:
        """(the state's name, how many of its writes added, removed or changed a file)."""
        rows = dict(
            self.db.execute("SELECT key, value FROM meta WHERE key IN ('instance', 'generation')")
        )
        return str(rows.get("instance", "")), int(rows.get("generation", 0))

    def changed_since(self, generation: int, now: int) -> set[str] | None:
        """The files that came, went or changed after write ``generation`` up to write
        ``now``; None when the journal does not go back that far (or a write read the
        whole vault, which it does not list)."""
        rows = self.db.execute(
            "SELECT generation, paths FROM journal WHERE generation > ? AND generation <= ?",
            (generation, now),
        ).fetchall()
        if len(rows) != now - generation:
            return None
        out: set[str] = set()
        for _generation, paths in rows:
            out.update(json.loads(paths))
        return out

    def course_sources(self) -> set[str]:
        """The files holding a ``course`` reference (whatever it resolves to)."""
        return {path for (path,) in self.db.execute("SELECT path FROM refs WHERE kind='course'")}

    def edges(self, kind: str | None = None, order: str = "n") -> list[Edge]:
        """Resolved references as edges; only ``kind`` ones when given. ``order``:
        ``n`` (the order they were written in the files), ``line`` (by file and line) or
        ``source`` (by source, then line)."""
        by = {"n": "n", "line": "path, line, n", "source": "source, line, n"}[order]
        where = "target_key IS NOT NULL" + (" AND kind = ?" if kind else "")
        rows = self.db.execute(
            f"SELECT source, target_key, kind, path, line, reason FROM refs WHERE {where}"
            f" ORDER BY {by}",
            (kind,) if kind else (),
        )
        return [Edge(*row) for row in rows]

    def edges_in(self, paths: Iterable[str]) -> list[Edge]:
        """Resolved references written in ``paths``, by file and line (what the related
        features read again for the files an edit changed)."""
        out: list[Edge] = []
        for chunk in _chunks(sorted(set(paths))):
            out.extend(
                Edge(*row)
                for row in self.db.execute(
                    "SELECT source, target_key, kind, path, line, reason FROM refs WHERE "
                    f"target_key IS NOT NULL AND path IN ({','.join('?' * len(chunk))}) "
                    "ORDER BY path, line, n",
                    chunk,
                )
            )
        return out

    def texts(self, paths: Iterable[str] | None = None) -> dict[str, tuple[str, list[str]]]:
        """path -> (plain text of the body, headings) of ``paths`` (all without)."""
        sql = "SELECT path, body, headings FROM texts"
        if paths is None:
            return {p: (b or "", json.loads(h or "[]")) for p, b, h in self.db.execute(sql)}
        out: dict[str, tuple[str, list[str]]] = {}
        for chunk in _chunks(sorted(set(paths))):
            out.update(
                (p, (b or "", json.loads(h or "[]")))
                for p, b, h in self.db.execute(
                    f"{sql} WHERE path IN ({','.join('?' * len(chunk))})", chunk
                )
            )
        return out

    def keys_in(self, paths: Iterable[str]) -> list[str]:
        """Keys of the documents in these files (a file and its course units)."""
        keys: list[str] = []
        for chunk in _chunks(sorted(set(paths))):
            keys.extend(
                k
                for (k,) in self.db.execute(
                    f"SELECT key FROM docs WHERE path IN ({','.join('?' * len(chunk))})", chunk
                )
            )
        return keys

    def documents_in(self, paths: Iterable[str]) -> dict[str, list[Document]]:
        """path -> its documents (a file and its course units), for ``paths``."""
        out: dict[str, list[Document]] = {}
        for chunk in _chunks(sorted(set(paths))):
            for (blob,) in self.db.execute(
                f"SELECT data FROM docs WHERE path IN ({','.join('?' * len(chunk))})", chunk
            ):
                doc = doc_from_blob(blob)
                out.setdefault(doc.path, []).append(doc)
        return out

    def course_links(self, paths: Iterable[str] | None = None) -> dict[str, set[str]]:
        """Source key -> keys of the courses its ``course`` references name (a unit named
        counts as its course), for the files in ``paths`` (all without)."""
        # joined, not `target_key IN (...)`: with a list of paths that form crossed every
        # path with every course (170 ms for 1,000 paths at 10k notes, 3 ms joined)
        sql = (
            "SELECT r.source, r.target_key FROM refs AS r JOIN docs AS d ON d.key = r.target_key"
            " WHERE r.kind = 'course' AND d.type IN ('course', 'unit')"
        )
        out: dict[str, set[str]] = {}
        chunks = [None] if paths is None else list(_chunks(sorted(set(paths))))
        for chunk in chunks:
            rows = (
                self.db.execute(sql)
                if chunk is None
                else self.db.execute(sql + f" AND r.path IN ({','.join('?' * len(chunk))})", chunk)
            )
            for source, target in rows:
                out.setdefault(source, set()).add(target.split("#", 1)[0])
        return out

    def topic_rows(self) -> list[tuple[str, str, str, str]]:
        """(key, id, title, aliases as JSON) of every topic, by key."""
        return self.db.execute(
            "SELECT key, id, title, names FROM docs WHERE type='topic' ORDER BY key"
        ).fetchall()

    def get_meta(self, key: str) -> str | None:  # noqa: D102
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None


def _no_space(folder: Path) -> bool:
    """Whether the disk holding ``folder`` is (nearly) full: SQLite reports a failed
    write to its log or shared memory as a plain "disk I/O error"."""
    try:
        st = os.statvfs(folder)
    except (OSError, AttributeError):
        return False
    return st.f_bavail * st.f_frsize < 256 * 1024


def _state_error(path: Path, exc: sqlite3.Error) -> StudyError:
    """The user's message for an SQLite error on the state (the state is kept)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code == _FULL_CODE or "disk is full" in str(exc) or _no_space(path.parent):
        return DiskFull(f"disk full: cannot update {path}; the previous state is kept.")
    if damage.corrupt(exc):
        return damage.StateDamaged(
            f"the state {path} is damaged ({exc}).",
            str(exc),
            hint=f"Delete {path.parent}: it only holds what studykb can rebuild.",
        )
    return VaultError(
        f"cannot use the state {path}: {exc}.",
        hint=f"Delete {path.parent} if this persists: it only holds what studykb can rebuild.",
    )
