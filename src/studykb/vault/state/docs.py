"""``docs``: every document (a file, or a unit of a course file), its names in columns
and every field as JSON."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from studykb.model import Document
from studykb.vault.state.rows import DOC_FIELDS, DocNames, DocRow, TopicRow, doc_from_blob
from studykb.vault.state.schema import Table, chunks, marks

_NAMES = "SELECT key, path, id, title, type, names, url FROM docs"
#: The documents whose id counts for the duplicate-id check (the id folded as it folds).
_DECLARED = "explicit=1 AND type != 'unit'"


class Docs(Table):
    """The ``docs`` table."""

    __slots__ = ()

    def all(self) -> list[Document]:
        return [doc_from_blob(d) for (d,) in self.db.execute("SELECT data FROM docs")]

    def count(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM docs").fetchone()[0])

    def get(self, key: str) -> Document | None:
        row = self.db.execute("SELECT data FROM docs WHERE key=?", (key,)).fetchone()
        return doc_from_blob(row[0]) if row else None

    def any_saying(self, types: tuple[str, ...], word: str) -> bool:
        """Whether a document of one of ``types`` holds ``word`` anywhere in its fields
        (a quick test before decoding them)."""
        sql = (
            f"SELECT 1 FROM docs WHERE type IN ({marks(types)}) "
            "AND instr(CAST(data AS TEXT), ?) LIMIT 1"
        )
        return self.db.execute(sql, (*types, word)).fetchone() is not None

    def with_keys(self, keys: list[str]) -> list[Document]:
        out: list[Document] = []
        for chunk in chunks(keys, as_given=True):
            sql = f"SELECT data FROM docs WHERE key IN ({marks(chunk)})"
            out.extend(doc_from_blob(d) for (d,) in self.db.execute(sql, chunk))
        return out

    def covering(self) -> list[Document]:
        """The documents (units too) whose ``covers`` names something: SQLite's JSON
        functions pick them out, so ``check`` does not decode every document."""
        at = DOC_FIELDS.index("covers")
        sql = f"SELECT data FROM docs WHERE json_array_length(CAST(data AS TEXT), '$[{at}]') > 0"
        try:
            return [doc_from_blob(d) for (d,) in self.db.execute(sql)]
        except sqlite3.OperationalError:  # an SQLite without JSON functions
            return [d for d in self.all() if d.covers]

    def in_files(self, paths: Iterable[str]) -> dict[str, list[Document]]:
        """path -> its documents (a file and its course units), for ``paths``."""
        out: dict[str, list[Document]] = {}
        for chunk in chunks(paths):
            sql = f"SELECT data FROM docs WHERE path IN ({marks(chunk)})"
            for (blob,) in self.db.execute(sql, chunk):
                doc = doc_from_blob(blob)
                out.setdefault(doc.path, []).append(doc)
        return out

    def keys_in(self, paths: Iterable[str]) -> list[str]:
        """Keys of the documents in these files (a file and its course units)."""
        keys: list[str] = []
        for chunk in chunks(paths):
            sql = f"SELECT key FROM docs WHERE path IN ({marks(chunk)})"
            keys.extend(k for (k,) in self.db.execute(sql, chunk))
        return keys

    def names(self, paths: list[str] | None = None) -> list[DocNames]:
        """What every document (in ``paths`` only, when given) answers to."""
        if paths is None:
            return [DocNames(*row) for row in self.db.execute(_NAMES)]
        out: list[DocNames] = []
        for chunk in chunks(paths, as_given=True):
            sql = f"{_NAMES} WHERE path IN ({marks(chunk)})"
            out.extend(DocNames(*row) for row in self.db.execute(sql, chunk))
        return out

    def topics(self) -> list[TopicRow]:
        """(key, id, title, aliases as JSON) of every topic, by key."""
        sql = "SELECT key, id, title, names FROM docs WHERE type='topic' ORDER BY key"
        return [TopicRow(*row) for row in self.db.execute(sql)]

    def path_of(self, key: str) -> list[tuple[str]]:
        return self.db.execute("SELECT path FROM docs WHERE key=?", (key,)).fetchall()

    def every_path(self) -> list[tuple[str, str]]:
        """(key, path) of every document."""
        return self.db.execute("SELECT key, path FROM docs").fetchall()

    def type_of(self, key: str) -> list[tuple[str]]:
        return self.db.execute("SELECT type FROM docs WHERE key=?", (key,)).fetchall()

    def every_type(self) -> list[tuple[str, str]]:
        """(key, type) of every document."""
        return self.db.execute("SELECT key, type FROM docs").fetchall()

    def declared_ids(self, paths: list[str]) -> set[str]:
        """The declared ids (folded as the duplicate-id check folds them) in ``paths``."""
        out: set[str] = set()
        for chunk in chunks(paths, as_given=True):
            sql = f"SELECT lower(id) FROM docs WHERE {_DECLARED} AND path IN ({marks(chunk)})"
            out.update(i for (i,) in self.db.execute(sql, chunk))
        return out

    def duplicate_ids(self, folded: str | None = None) -> list[tuple[str, list[str]]]:
        """(folded id, the paths declaring it) of each id more than one file declares
        (of ``folded`` only, when given)."""
        select = f"SELECT lower(id), group_concat(path, '\x1f') FROM docs WHERE {_DECLARED}"
        if folded is None:
            rows = self.db.execute(f"{select} GROUP BY lower(id) HAVING count(*) > 1")
        else:
            rows = self.db.execute(
                f"{select} AND lower(id) = ? GROUP BY lower(id) HAVING count(*) > 1", (folded,)
            )
        return [(i, joined.split("\x1f")) for i, joined in rows]

    # -- writes ----------------------------------------------------------------------------
    def insert(self, rows: list[DocRow]) -> None:
        self._writing().executemany("INSERT INTO docs VALUES (?,?,?,?,?,?,?,?,?)", rows)

    def delete_in(self, paths: list[str]) -> None:
        self._writing().execute(f"DELETE FROM docs WHERE path IN ({marks(paths)})", paths)
