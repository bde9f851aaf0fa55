"""Every table of the state on one connection (:class:`Tables`): what a read uses, and
what the write path (:meth:`studykb.vault.state.Store.transaction`) hands its writer."""

from __future__ import annotations

import sqlite3

from studykb.vault.state.anchors import Anchors
from studykb.vault.state.docs import Docs
from studykb.vault.state.files import Files
from studykb.vault.state.meta import Journal, Meta
from studykb.vault.state.names import NameTable
from studykb.vault.state.problems import Problems
from studykb.vault.state.refs import Refs
from studykb.vault.state.rows import DocNames
from studykb.vault.state.schema import CONTENT_TABLES, Index, Table, chunks, secondary_indexes
from studykb.vault.state.texts import Texts


class Tables(Table):
    """The state's tables, one object each, on the connection ``db``."""

    __slots__ = (
        "files",
        "docs",
        "refs",
        "problems",
        "texts",
        "anchors",
        "names",
        "meta",
        "journal",
    )

    def __init__(self, db: sqlite3.Connection) -> None:
        super().__init__(db)
        self.files = Files(db)
        self.docs = Docs(db)
        self.refs = Refs(db)
        self.problems = Problems(db)
        self.texts = Texts(db)
        self.anchors = Anchors(db)
        self.names = NameTable(db)
        self.meta = Meta(db)
        self.journal = Journal(db)

    # -- writes across tables --------------------------------------------------------------------
    def delete_files(self, paths: list[str]) -> list[DocNames]:
        """Remove every row of the files ``paths`` (their parse problems too); what their
        documents answered to."""
        self._writing()
        names: list[DocNames] = []
        for chunk in chunks(paths, as_given=True):
            names.extend(self.docs.names(chunk))
            for table in (self.files, self.docs, self.refs, self.texts, self.names):
                table.delete_in(chunk)
            self.problems.delete_found_by("parse", chunk)
        return names

    def empty(self) -> list[Index]:
        """Empty every table but ``meta`` and ``journal`` and drop the secondary indexes
        (a bulk load builds them once at the end: :meth:`build_indexes`); the indexes."""
        db = self._writing()
        for name in CONTENT_TABLES:
            db.execute(f"DELETE FROM {name}")
        self.meta.forget("requires")  # loops: recompute (checks.py)
        indexes = secondary_indexes()
        for name, _sql in indexes:
            db.execute(f"DROP INDEX IF EXISTS {name}")
        return indexes

    def build_indexes(self, indexes: list[Index]) -> None:
        """Build these of the indexes :meth:`empty` dropped."""
        db = self._writing()
        for _name, sql in indexes:
            db.execute(sql)
