"""``texts``: each file's plain text, headings and outline."""

from __future__ import annotations

import json
from collections.abc import Iterable

from studykb.vault.state.rows import TextRow
from studykb.vault.state.schema import Table, chunks, marks

#: What an outline that includes files holds (``LIKE`` pattern).
_INCLUDES = '%"inc"%'


class Texts(Table):
    """The ``texts`` table."""

    __slots__ = ()

    def text(self, path: str) -> tuple[str, list[str]]:
        """(plain text of the body, headings) of the file at ``path``."""
        row = self.db.execute("SELECT body, headings FROM texts WHERE path=?", (path,)).fetchone()
        return (row[0], json.loads(row[1])) if row else ("", [])

    def outline(self, path: str) -> str | None:
        """The outline (JSON) of the file at ``path``, or None when there is no such file."""
        row = self.db.execute("SELECT outline FROM texts WHERE path=?", (path,)).fetchone()
        return row[0] if row else None

    def of(self, paths: Iterable[str] | None = None) -> dict[str, tuple[str, list[str]]]:
        """path -> (plain text of the body, headings) of ``paths`` (all without)."""
        sql = "SELECT path, body, headings FROM texts"
        if paths is None:
            return {p: (b or "", json.loads(h or "[]")) for p, b, h in self.db.execute(sql)}
        out: dict[str, tuple[str, list[str]]] = {}
        for chunk in chunks(paths):
            out.update(
                (p, (b or "", json.loads(h or "[]")))
                for p, b, h in self.db.execute(f"{sql} WHERE path IN ({marks(chunk)})", chunk)
            )
        return out

    def including(self, paths: Iterable[str] | None = None) -> list[tuple[str, str]]:
        """(path, outline) of every page that includes files (``vault/includes.py``), in
        the table's order; of the pages at ``paths`` only, when given (looked up by path:
        the whole table's outlines lie past every body, a scan reads them all)."""
        if paths is None:
            select = "SELECT path, outline FROM texts WHERE outline LIKE ?"
            return self.db.execute(select, (_INCLUDES,)).fetchall()
        found: list[tuple[int, str, str]] = []
        for chunk in chunks(paths):
            select = (
                f"SELECT rowid, path, outline FROM texts WHERE path IN ({marks(chunk)}) "
                "AND outline LIKE ?"
            )
            found += self.db.execute(select, (*chunk, _INCLUDES)).fetchall()
        return [(path, outline) for _n, path, outline in sorted(found)]

    # -- writes ----------------------------------------------------------------------------
    def insert(self, rows: list[TextRow]) -> None:
        self._writing().executemany(
            "INSERT INTO texts(path, body, headings, outline) VALUES (?,?,?,?)", rows
        )

    def delete_in(self, paths: list[str]) -> None:
        self._writing().execute(f"DELETE FROM texts WHERE path IN ({marks(paths)})", paths)
