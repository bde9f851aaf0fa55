"""Vault-wide problems: duplicate ids and prerequisite loops."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from ..model import ERROR

_ID_LINE = re.compile(r'''^\s*["']?id["']?\s*[:=]''')


def vault_problems(db: sqlite3.Connection, root: Path, recompute_cycles: bool) -> None:
    """Recompute ``duplicate-id`` (always) and ``cycle`` (when requires may have changed)."""
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
    if recompute_cycles:
        db.execute("DELETE FROM problems WHERE origin='vault' AND code='cycle'")
        out.extend(_cycles(db))
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


def _cycles(db: sqlite3.Connection) -> list[tuple]:
    """One ``cycle`` problem per prerequisite loop (strongly connected component)."""
    edges = db.execute(
        "SELECT source, target_key, path, line FROM refs"
        " WHERE kind='requires' AND target_key IS NOT NULL").fetchall()
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
