"""Vault-wide problems: duplicate ids and prerequisite loops."""

from __future__ import annotations

import hashlib
import re
import sqlite3
from pathlib import Path

from ..model import ERROR

_ID_LINE = re.compile(r'''^\s*["']?id["']?\s*[:=]''')


def vault_problems(db: sqlite3.Connection, root: Path, recompute_cycles: bool) -> None:
    """Recompute ``duplicate-id`` (always) and ``cycle`` (when the requires rows changed).

    ``recompute_cycles`` is the caller's hint that they may have; the stored signature of
    the rows decides (a bulk load deletes it to force the work).
    """
    db.execute("DELETE FROM problems WHERE origin='vault' AND code='duplicate-id'")
    rows = db.execute(
        "SELECT lower(id), group_concat(path, '\x1f') FROM docs"
        " WHERE explicit=1 AND type != 'unit' GROUP BY lower(id) HAVING count(*) > 1").fetchall()
    out = []
    for _id, joined in rows:
        paths = sorted(joined.split("\x1f"))
        for path in paths:
            others = ", ".join(p for p in paths if p != path)
            line = _id_line(root, path)
            out.append((path, line, ERROR, "duplicate-id",
                        f"id {_id!r} is also declared in {others}", "vault"))
    # The loops depend on the resolved ``requires`` rows only, and those also change when
    # an edit elsewhere makes a name resolve differently: compare a signature of all of
    # them. Unchanged rows, unchanged loops (and no networkx import), which is the common
    # case of an edit to one note.
    edges = db.execute(
        "SELECT source, target_key, path, line FROM refs"
        " WHERE kind='requires' AND target_key IS NOT NULL").fetchall()
    signature = hashlib.blake2b(repr(sorted(edges)).encode(), digest_size=16).hexdigest()
    row = db.execute("SELECT value FROM meta WHERE key='requires'").fetchone()
    if row is None or row[0] != signature:
        db.execute("DELETE FROM problems WHERE origin='vault' AND code='cycle'")
        out.extend(_cycles(edges))
        db.execute("INSERT OR REPLACE INTO meta VALUES('requires', ?)", (signature,))
    db.executemany("INSERT INTO problems VALUES (?,?,?,?,?,?)", out)


def _id_line(root: Path, path: str) -> int:
    """The line that declares ``id`` in the front matter (1 when it cannot be found)."""
    try:
        with open(root / path, encoding="utf-8-sig", errors="replace") as fh:
            for n, line in enumerate(fh, 1):
                if _ID_LINE.match(line):
                    return n
                if n > 200:
                    break
    except OSError:
        pass
    return 1


def _cycles(edges: list[tuple[str, str, str, int]]) -> list[tuple]:
    """One ``cycle`` problem per prerequisite loop (strongly connected component)."""
    if not edges:
        return []
    from ..graph import loops

    out = []
    for members, where in loops([(s, t, p, ln) for s, t, p, ln in edges]):
        first_path, first_line = where[0]
        chain = " -> ".join(members + [members[0]])
        places = ", ".join(f"{p}:{ln}" for p, ln in where)
        out.append((first_path, first_line, ERROR, "cycle",
                    f"prerequisite loop: {chain} (requires at {places})", "vault"))
    return out
