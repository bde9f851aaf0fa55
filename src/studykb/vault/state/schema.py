"""The state database's tables (their DDL), and what every table class shares: the
connection, the rule that writes happen only inside the write path
(:meth:`studykb.vault.state.Store.transaction`), and lists of paths read in chunks."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sized

from studykb.runtime import process

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS journal(generation INTEGER PRIMARY KEY, paths TEXT);
CREATE TABLE IF NOT EXISTS files(
    path TEXT PRIMARY KEY, mtime_ns INTEGER, size INTEGER, hash TEXT);
CREATE TABLE IF NOT EXISTS docs(
    key TEXT PRIMARY KEY, path TEXT, id TEXT, title TEXT, type TEXT, explicit INTEGER,
    names TEXT, url TEXT, data BLOB);
CREATE INDEX IF NOT EXISTS docs_path ON docs(path);
CREATE INDEX IF NOT EXISTS docs_ids ON docs(lower(id), path) WHERE explicit = 1 AND type != 'unit';
CREATE INDEX IF NOT EXISTS docs_topics ON docs(key, id, title, names) WHERE type = 'topic';
CREATE INDEX IF NOT EXISTS docs_type ON docs(type, key);
CREATE TABLE IF NOT EXISTS refs(
    n INTEGER PRIMARY KEY, source TEXT, path TEXT, line INTEGER, kind TEXT, text TEXT,
    target TEXT, style TEXT, anchor TEXT, reason TEXT, optional INTEGER,
    lookup TEXT, lookup2 TEXT, target_key TEXT, state TEXT, note TEXT);
CREATE INDEX IF NOT EXISTS refs_path ON refs(path);
CREATE INDEX IF NOT EXISTS refs_target ON refs(target_key);
CREATE INDEX IF NOT EXISTS refs_lookup ON refs(lookup);
CREATE INDEX IF NOT EXISTS refs_lookup2 ON refs(lookup2) WHERE lookup2 IS NOT NULL;
CREATE INDEX IF NOT EXISTS refs_bad ON refs(state) WHERE state IN ('dangling', 'ambiguous');
CREATE INDEX IF NOT EXISTS refs_requires ON refs(source, target_key, path, line)
    WHERE kind = 'requires';
CREATE INDEX IF NOT EXISTS refs_course ON refs(path, target_key) WHERE kind = 'course';
CREATE TABLE IF NOT EXISTS problems(
    path TEXT, line INTEGER, severity TEXT, code TEXT, message TEXT, origin TEXT);
CREATE INDEX IF NOT EXISTS problems_path ON problems(path);
CREATE TABLE IF NOT EXISTS texts(path TEXT PRIMARY KEY, headings TEXT, body TEXT, outline TEXT);
CREATE TABLE IF NOT EXISTS anchors(path TEXT, line INTEGER, message TEXT, target TEXT);
CREATE INDEX IF NOT EXISTS anchors_path ON anchors(path);
CREATE INDEX IF NOT EXISTS anchors_target ON anchors(target);
CREATE TABLE IF NOT EXISTS names(name TEXT, level INTEGER, key TEXT, path TEXT);
CREATE INDEX IF NOT EXISTS names_name ON names(name);
CREATE INDEX IF NOT EXISTS names_path ON names(path);
"""

#: The tables a rebuild empties (``meta`` and ``journal`` are kept: the state's name and
#: its count of writes go on).
CONTENT_TABLES = ("files", "docs", "refs", "texts", "names", "problems", "anchors")

#: Index (name, CREATE statement) pairs, as a bulk load drops and builds them again.
Index = tuple[str, str]


def statements() -> list[str]:
    """Every statement of :data:`SCHEMA`, in order."""
    return [s.strip() for s in SCHEMA.split(";") if s.strip()]


def secondary_indexes() -> list[Index]:
    """(name, CREATE statement) of every index in the schema (a bulk load drops them)."""
    out = []
    for statement in statements():
        if statement.startswith("CREATE INDEX"):
            name = statement.split("EXISTS", 1)[1].split()[0]
            out.append((name, statement))
    return out


@process.memo(maxsize=None)
def _expected() -> dict[str, str]:
    """name -> CREATE statement of every table :data:`SCHEMA` makes, as SQLite keeps it
    (made in memory once: SQLite normalises the text it stores)."""
    db = sqlite3.connect(":memory:")
    try:
        db.executescript(SCHEMA)
        return _tables(db)
    finally:
        db.close()


def _tables(db: sqlite3.Connection) -> dict[str, str]:
    rows = db.execute(
        "SELECT name, sql FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"
    )
    return {name: sql for name, sql in rows}


def tables_match(db: sqlite3.Connection) -> bool | None:
    """Whether the tables of ``db`` are exactly those :data:`SCHEMA` makes; None when it
    has none (a new or empty file)."""
    have = _tables(db)
    if not have:
        return None
    return have == _expected()


def meta_matches(db: sqlite3.Connection) -> bool:
    """Whether ``db`` has the ``meta`` table :data:`SCHEMA` makes (so its version can be
    read, even when other tables differ: another studykb version's state)."""
    row = db.execute("SELECT sql FROM sqlite_master WHERE type='table' AND name='meta'").fetchone()
    return row is not None and row[0] == _expected().get("meta")


def chunks(items: Iterable[str], size: int = 400, *, as_given: bool = False) -> Iterator[list[str]]:
    """``items`` (sorted, without repeats; ``as_given``: as they come) in lists small
    enough for one ``IN (...)``."""
    ordered = list(items) if as_given else sorted(set(items))
    for i in range(0, len(ordered), size):
        yield ordered[i : i + size]


def marks(items: Sized) -> str:
    """``?,?,...``: one placeholder per item."""
    return ",".join("?" * len(items))


class NotInTransaction(RuntimeError):
    """A write to the state outside :meth:`Store.transaction` (a bug in studykb)."""


class Table:
    """One table's statements on a connection. Reads run anywhere; a write method asks
    :meth:`_writing` for the connection, which refuses unless the write path
    (:meth:`studykb.vault.state.Store.transaction`) has a transaction open."""

    __slots__ = ("db",)

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def _writing(self) -> sqlite3.Connection:
        if not self.db.in_transaction:
            raise NotInTransaction("the state is written only inside Store.transaction()")
        return self.db
