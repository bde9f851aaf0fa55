"""``problems``: what the scan, the parse and the vault-wide checks found, each row
marked with the step that found it (its ``origin``)."""

from __future__ import annotations

from collections.abc import Iterable

from studykb.model import Problem
from studykb.vault.state.rows import ProblemRow, StoredProblem
from studykb.vault.state.schema import Table, chunks, marks


class Problems(Table):
    """The ``problems`` table."""

    __slots__ = ()

    def all(self) -> list[Problem]:
        rows = self.db.execute("SELECT path, line, severity, code, message FROM problems")
        return [Problem(*r) for r in rows]

    def found_by(self, origin: str) -> list[StoredProblem]:
        """The problems one step found (``scan``, ``parse``, ``vault``, ``attach``)."""
        rows = self.db.execute(
            "SELECT path, line, severity, code, message, origin FROM problems WHERE origin=?",
            (origin,),
        )
        return [StoredProblem(*row) for row in rows]

    def counts(self) -> list[tuple[str, str, int]]:
        """(code, severity, how many) of the stored problems."""
        return self.db.execute(
            "SELECT code, severity, count(*) FROM problems GROUP BY code, severity"
        ).fetchall()

    # -- writes ----------------------------------------------------------------------------
    def insert(self, rows: Iterable[StoredProblem | tuple[str, int, str, str, str, str]]) -> None:
        self._writing().executemany("INSERT INTO problems VALUES (?,?,?,?,?,?)", rows)

    def insert_parsed(self, rows: list[ProblemRow]) -> None:
        """Problems a parse found (origin ``parse``)."""
        self._writing().executemany("INSERT INTO problems VALUES (?,?,?,?,?,'parse')", rows)

    def delete_found_by(self, origin: str, paths: list[str] | None = None) -> None:
        """Forget what ``origin`` found (in ``paths`` only, when given)."""
        db = self._writing()
        if paths is None:
            db.execute("DELETE FROM problems WHERE origin=?", (origin,))
            return
        for chunk in chunks(paths, as_given=True):
            db.execute(
                f"DELETE FROM problems WHERE origin=? AND path IN ({marks(chunk)})",
                [origin, *chunk],
            )

    def delete_vault(self, code: str, message_prefix: str = "") -> None:
        """Forget the vault-wide problems of ``code`` (those whose message starts with
        ``message_prefix`` only, when given)."""
        db = self._writing()
        if not message_prefix:
            db.execute("DELETE FROM problems WHERE origin='vault' AND code=?", (code,))
            return
        db.execute(
            "DELETE FROM problems WHERE origin='vault' AND code=? AND substr(message, 1, ?) = ?",
            (code, len(message_prefix), message_prefix),
        )
