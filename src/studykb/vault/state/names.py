"""``names``: the name table (folded name, level, document key, path), what references
are resolved against (:class:`studykb.vault.resolve.StoredNames` reads it)."""

from __future__ import annotations

from collections.abc import Iterable

from studykb.vault.resolve import URL
from studykb.vault.state.schema import Table, marks

#: A row of ``names``: folded name, level (``resolve.ID`` ... ``URL``), key, path.
NameRow = tuple[str, int, str, str]


class NameTable(Table):
    """The ``names`` table."""

    __slots__ = ()

    def at_levels(self, levels: Iterable[int]) -> list[str]:
        """Every distinct (folded) name at these levels."""
        wanted = [int(level) for level in levels]
        sql = f"SELECT DISTINCT name FROM names WHERE level IN ({marks(wanted)})"
        return [n for (n,) in self.db.execute(sql, wanted)]

    def levels_of(self, name: str) -> list[tuple[int, str]]:
        """(level, key) of each document ``name`` names (not as a URL), as stored."""
        sql = "SELECT level, key FROM names WHERE name=? AND level<? ORDER BY rowid"
        return self.db.execute(sql, (name, URL)).fetchall()

    def every_level(self) -> list[tuple[str, int, str]]:
        """(name, level, key) of every name but URLs, as stored."""
        sql = "SELECT name, level, key FROM names WHERE level<? ORDER BY rowid"
        return self.db.execute(sql, (URL,)).fetchall()

    def keys_at_url(self, url: str) -> list[tuple[str]]:
        """The keys of the documents published at ``url`` (normalised), as stored."""
        sql = "SELECT key FROM names WHERE name=? AND level=? ORDER BY rowid"
        return self.db.execute(sql, (url, URL)).fetchall()

    def every_url(self) -> list[tuple[str, str]]:
        """(url, key) of every document with a URL, as stored."""
        sql = "SELECT name, key FROM names WHERE level=? ORDER BY rowid"
        return self.db.execute(sql, (URL,)).fetchall()

    # -- writes ----------------------------------------------------------------------------
    def insert(self, rows: Iterable[NameRow]) -> None:
        self._writing().executemany("INSERT INTO names VALUES (?,?,?,?)", rows)

    def clear(self) -> None:
        self._writing().execute("DELETE FROM names")

    def delete_in(self, paths: list[str]) -> None:
        self._writing().execute(f"DELETE FROM names WHERE path IN ({marks(paths)})", paths)
