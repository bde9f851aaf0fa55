"""``files``: every Markdown file the state was built from, with its mtime, size and
content hash."""

from __future__ import annotations

from collections.abc import Iterable

from studykb.vault.state.rows import FileRow, FileStamp, StoredFile
from studykb.vault.state.schema import Table, chunks, marks


class Files(Table):
    """The ``files`` table."""

    __slots__ = ()

    def stamps(self) -> dict[str, FileStamp]:
        """path -> (mtime, size, content hash) of every file."""
        rows = self.db.execute("SELECT path, mtime_ns, size, hash FROM files")
        return {p: FileStamp(m, s, h) for p, m, s, h in rows}

    def rows(self) -> list[StoredFile]:
        """(path, mtime_ns, content hash) of every file, by path."""
        rows = self.db.execute("SELECT path, mtime_ns, hash FROM files ORDER BY path")
        return [StoredFile(*row) for row in rows]

    def hashed_as(self, prefix: str) -> list[str]:
        """The paths whose content hash begins with ``prefix`` (``git:``: the
        repositories' notes)."""
        sql = "SELECT path FROM files WHERE substr(hash, 1, ?) = ?"
        return [path for (path,) in self.db.execute(sql, (len(prefix), prefix))]

    def hashes(self, paths: Iterable[str] | None = None) -> dict[str, str]:
        """path -> content hash of every file, or of those of ``paths`` that exist (half
        the time of :meth:`rows`)."""
        if paths is None:
            return dict(self.db.execute("SELECT path, hash FROM files"))
        out: dict[str, str] = {}
        for chunk in chunks(paths):
            out.update(
                self.db.execute(
                    f"SELECT path, hash FROM files WHERE path IN ({marks(chunk)})", chunk
                )
            )
        return out

    # -- writes ----------------------------------------------------------------------------
    def insert(self, rows: list[FileRow]) -> None:
        self._writing().executemany("INSERT INTO files VALUES (?,?,?,?)", rows)

    def touch(self, rows: list[tuple[int, int, str]]) -> None:
        """(mtime, size, path): files read again whose content is unchanged."""
        self._writing().executemany("UPDATE files SET mtime_ns=?, size=? WHERE path=?", rows)

    def delete_in(self, paths: list[str]) -> None:
        self._writing().execute(f"DELETE FROM files WHERE path IN ({marks(paths)})", paths)
