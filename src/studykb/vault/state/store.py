"""The state database in ``.studykb/state.sqlite``: its connection, its making, and the
one write path (:meth:`Store.transaction`, through :func:`atomic`).

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
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from studykb.errors import DiskFull, StudyError, VaultError  # noqa: F401
from studykb.runtime import process
from studykb.runtime.background import Later
from studykb.vault import damage, statedir
from studykb.vault.cache import code_version
from studykb.vault.state.anchors import Anchors
from studykb.vault.state.docs import Docs
from studykb.vault.state.files import Files
from studykb.vault.state.meta import Journal, Meta
from studykb.vault.state.names import NameTable
from studykb.vault.state.problems import Problems
from studykb.vault.state.refs import Refs
from studykb.vault.state.schema import (
    Index,
    meta_matches,
    secondary_indexes,
    statements,
    tables_match,
)
from studykb.vault.state.tables import Tables
from studykb.vault.state.texts import Texts

#: What :meth:`Store._version` says of a state whose tables are not studykb's.
_NOT_OURS = "\0not-ours"
_FULL_CODE = 13  # SQLITE_FULL


def reader(path: Path) -> Store:
    """A store on an existing state file, for reading only (an index worker process)."""
    store = Store.__new__(Store)
    store.path = path
    store.fresh = False
    store.notice = None
    store._later = Later()
    store.db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30, isolation_level=None)
    return store


@contextlib.contextmanager
def atomic(db: sqlite3.Connection) -> Iterator[None]:
    """One transaction on ``db``: all of it or nothing. Every write to the state goes
    through here (:meth:`Store.transaction`, and the making of the tables and their
    indexes); a table's write methods refuse to run outside it."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def schema_version() -> str:
    """The version of the state: the code that parses and stores the notes, and the schema."""
    return code_version("state")


def inherited() -> list[object]:
    """Connections inherited from the process this one was forked from, kept referenced
    and unused (see :meth:`Store.reconnect`): this process's own."""
    return process.once("vault.inherited-connections", list)


class Store:
    """The SQLite file: reads through its tables (:attr:`files`, :attr:`docs`, ...), every
    write through :meth:`transaction`."""

    _db: sqlite3.Connection
    tables: Tables
    """Every table on the connection (see :mod:`studykb.vault.state.tables`)."""

    @property
    def db(self) -> sqlite3.Connection:
        """The connection (the tables follow when it is replaced)."""
        return self._db

    @db.setter
    def db(self, db: sqlite3.Connection) -> None:
        self._db = db
        self.tables = Tables(db)

    # the tables, for reading (writes: the ones :meth:`transaction` gives)
    @property
    def files(self) -> Files:
        return self.tables.files

    @property
    def docs(self) -> Docs:
        return self.tables.docs

    @property
    def refs(self) -> Refs:
        return self.tables.refs

    @property
    def problems(self) -> Problems:
        return self.tables.problems

    @property
    def texts(self) -> Texts:
        return self.tables.texts

    @property
    def anchors(self) -> Anchors:
        return self.tables.anchors

    @property
    def names(self) -> NameTable:
        return self.tables.names

    @property
    def meta(self) -> Meta:
        return self.tables.meta

    @property
    def journal(self) -> Journal:
        return self.tables.journal

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
        tables = tables_match(db)
        if tables is None:
            return None
        if not meta_matches(db):
            return _NOT_OURS
        found = Meta(db).get("schema") or ""
        if not tables and found == schema_version():
            return _NOT_OURS  # this version's tables are known: some were changed
        return str(found)

    @staticmethod
    def _create(db: sqlite3.Connection, version: str) -> None:
        """Replace every table by an empty one of this schema, in one transaction (on a
        full disk the old state stays as it was)."""
        with atomic(db):
            for kind, name in db.execute(
                "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'index')"
                " AND name NOT LIKE 'sqlite_%'"
            ).fetchall():
                if kind == "table":
                    db.execute(f'DROP TABLE IF EXISTS "{name}"')
            for statement in statements():
                db.execute(statement)
            Meta(db).made(version)

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
    def transaction(self) -> Iterator[Tables]:
        """One write: all of it or nothing, through the tables it gives. A full disk
        rolls back and says so."""
        try:
            with atomic(self.db):
                yield self.tables
        except sqlite3.DatabaseError as exc:
            if self.db.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    self.db.execute("ROLLBACK")
            raise _state_error(self.path, exc) from None

    def defer_checkpoints(self, deferred: bool) -> None:
        """Stop (or start again) copying the write-ahead log into the database file at
        each commit: a bulk load leaves that to :meth:`finish_later`."""
        self.db.execute(f"PRAGMA wal_autocheckpoint={0 if deferred else 1000}")

    def finish_later(self, indexes: list[Index]) -> None:
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
                        with atomic(db):
                            Tables(db).build_indexes(indexes)
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
        missing = [(name, sql) for name, sql in secondary_indexes() if name not in have]
        if not missing:
            return
        with contextlib.suppress(sqlite3.Error), atomic(db):  # read-only: slower queries
            Tables(db).build_indexes(missing)

    def close(self) -> None:
        self._later.join()
        self.db.close()


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
