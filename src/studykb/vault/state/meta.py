"""``meta`` (the state's version, name, count of writes and the marks a write leaves)
and ``journal`` (the files each recent write added, removed or changed)."""

from __future__ import annotations

import json
import os

from studykb.vault.state.schema import Table

#: Writes the journal keeps the changed files of (older ones: a full comparison).
JOURNAL_KEPT = 500


class Meta(Table):
    """The ``meta`` table: key -> text."""

    __slots__ = ()

    def get(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def generation(self) -> tuple[str, int]:
        """(the state's name, how many of its writes added, removed or changed a file)."""
        rows = dict(
            self.db.execute("SELECT key, value FROM meta WHERE key IN ('instance', 'generation')")
        )
        return str(rows.get("instance", "")), int(rows.get("generation", 0))

    # -- writes ----------------------------------------------------------------------------
    def put(self, items: dict[str, str]) -> None:
        self._writing().executemany(
            "INSERT OR REPLACE INTO meta VALUES (?, ?)", sorted(items.items())
        )

    def forget(self, key: str) -> None:
        self._writing().execute("DELETE FROM meta WHERE key=?", (key,))

    def made(self, version: str) -> None:
        """Mark a state made anew: the code version that made it, and a new name (a
        state made anew never takes an old one's fingerprint)."""
        self.put({"schema": version, "instance": os.urandom(8).hex()})

    def next_generation(self) -> int:
        """Count one more write that added, removed or changed a file; its number."""
        db = self._writing()
        db.execute(
            "INSERT INTO meta VALUES('generation', '1')"
            " ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
        )
        (generation,) = db.execute(
            "SELECT CAST(value AS INTEGER) FROM meta WHERE key='generation'"
        ).fetchone()
        return int(generation)


class Journal(Table):
    """The ``journal`` table: generation -> the paths that write touched (JSON)."""

    __slots__ = ()

    def changed_since(self, generation: int, now: int) -> set[str] | None:
        """The files that came, went or changed after write ``generation`` up to write
        ``now``; None when the journal does not go back that far (or a write read the
        whole vault, which it does not list)."""
        rows = self.db.execute(
            "SELECT generation, paths FROM journal WHERE generation > ? AND generation <= ?",
            (generation, now),
        ).fetchall()
        if len(rows) != now - generation:
            return None
        out: set[str] = set()
        for _generation, paths in rows:
            out.update(json.loads(paths))
        return out

    # -- writes ----------------------------------------------------------------------------
    def record(self, generation: int, paths: list[str] | None) -> None:
        """Record which files write ``generation`` added, removed or changed, and forget
        writes older than :data:`JOURNAL_KEPT`. A write that read the whole vault
        (``paths`` None) records nothing: the gap sends the next catch-up to a full
        comparison."""
        db = self._writing()
        if paths is not None:
            db.execute(
                "INSERT OR REPLACE INTO journal VALUES (?, ?)",
                (generation, json.dumps(sorted(paths))),
            )
        db.execute("DELETE FROM journal WHERE generation <= ?", (generation - JOURNAL_KEPT,))
