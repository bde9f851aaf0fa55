"""``anchors``: the ``[[note#heading]]`` references whose note has no such heading,
found when the state is written."""

from __future__ import annotations

from collections.abc import Iterable

from studykb.vault.state.rows import AnchorProblem
from studykb.vault.state.schema import Table, chunks, marks


class Anchors(Table):
    """The ``anchors`` table."""

    __slots__ = ()

    def all(self) -> list[tuple[str, int, str]]:
        """(path, line, message) of every missing heading."""
        return self.db.execute("SELECT path, line, message FROM anchors").fetchall()

    # -- writes ----------------------------------------------------------------------------
    def insert(self, rows: Iterable[AnchorProblem | tuple[str, int, str, str]]) -> None:
        self._writing().executemany("INSERT INTO anchors VALUES (?,?,?,?)", rows)

    def clear(self) -> None:
        self._writing().execute("DELETE FROM anchors")

    def delete_touching(self, paths: list[str]) -> None:
        """Forget the problems of references written in ``paths`` or leading into them."""
        db = self._writing()
        for chunk in chunks(paths, as_given=True):
            db.execute(
                f"DELETE FROM anchors WHERE path IN ({marks(chunk)}) OR target IN ({marks(chunk)})",
                chunk + chunk,
            )

    def forget(self, refs: Iterable[tuple[str, int, str]]) -> None:
        """Forget the problem of each (path, line, text) reference, whatever its target."""
        self._writing().executemany(
            "DELETE FROM anchors WHERE path=? AND line=? AND substr(message, 1, ?)=?",
            {(p, ln, len(repr(t)) + 1, f"{t!r}:") for p, ln, t in refs},
        )
