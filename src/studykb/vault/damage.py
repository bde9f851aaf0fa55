"""Damage in the files of ``.studykb/``: recognised, and answered by rebuilding.

The state and the cache are caches of the notes: a damaged one loses nothing but the
time to build it again. SQLite finds damage only where it reads, so damage is met in
three places, each answered the same way (the file deleted, built anew, one notice):

* opening the state: a file that is not a database, or whose tables are not the ones
  this code makes (:func:`studykb.vault.state.schema.tables_match`), is made anew by
  :class:`~studykb.vault.state.Store`;
* any later read or write of the state (a damaged page in the middle of the file):
  :func:`damaged` recognises the error wherever it surfaces, and the front end that
  opened the vault deletes the state and runs its command again
  (:meth:`studykb.vault.Vault.rebuild_if_damaged`);
* the cache (``cache.sqlite``): it deletes itself and starts empty
  (:class:`~studykb.vault.cache.Cache`).

Only SQLite's own proof of damage (SQLITE_CORRUPT, SQLITE_NOTADB) or tables that are
not studykb's count: a full disk, a locked file or an I/O error is reported and the
file kept.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path

from studykb.errors import VaultError

#: SQLite result codes that prove a database file corrupt (SQLITE_CORRUPT, SQLITE_NOTADB).
CORRUPT_CODES = frozenset({11, 26})


class StateDamaged(VaultError):
    """The state holds what studykb did not write (SQLite proved it damaged, or a row is
    not what the code stores). Exit 2 where it cannot be rebuilt (a watch answering);
    a command rebuilds the state and runs again."""

    def __init__(self, message: str, reason: str, *, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.reason = reason
        """What was wrong, in a few words (for the notice)."""


def corrupt(exc: BaseException) -> bool:
    """Whether SQLite says a database file is damaged (not full, locked or unreadable)."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    return (
        getattr(exc, "sqlite_errorcode", None) in CORRUPT_CODES
        or "malformed" in str(exc)
        or "not a database" in str(exc)
    )


#: What SQLite says when a table is not the shape the statement expects.
_FOREIGN_TABLE = ("no such column", "has no column named", "values were supplied", "no such table")


def foreign_table(exc: BaseException) -> bool:
    """Whether ``exc`` says a table is not the one studykb made (another program's file)."""
    return isinstance(exc, sqlite3.OperationalError) and any(
        text in str(exc) for text in _FOREIGN_TABLE
    )


def damaged(exc: BaseException) -> str | None:
    """What was damaged, when ``exc`` proves the state damaged; else None."""
    if isinstance(exc, StateDamaged):
        return exc.reason
    if corrupt(exc):
        return str(exc)
    return None


def discard(path: Path) -> None:
    """Delete a database file proved damaged, and its journals."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            os.remove(str(path) + suffix)
