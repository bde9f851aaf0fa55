"""The write of an incremental refresh: the rows of the files that changed or went are
replaced, what the change may touch is resolved again, and the problems that depend on
it are found again, all in the refresh's transaction (:mod:`studykb.vault.refresh`
decides what to write; a first build is written by :mod:`studykb.vault.bulk`)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from studykb.vault.resolve import Names, StoredNames, fold, name_rows, names_of, table_rows

if TYPE_CHECKING:
    from studykb.parse.reading import Reading
    from studykb.vault.refresh import ScanRow
    from studykb.vault.schema import ParsedRows


def write(
    db: sqlite3.Connection,
    parsed: list[ParsedRows],
    removed: list[str],
    touched: list[tuple[int, int, str]],
    scan_rows: list[ScanRow],
    full: bool,
    reading: Reading,
    root: Path,
) -> None:
    """Replace the rows of the files that changed or went, insert those parsed,
    resolve again what the change may touch, and update the problems, in ``db``'s
    transaction (the caller writes the marks and commits)."""
    paths = removed + [row[0] for row in parsed]
    # what the duplicate-id and loop checks depend on, before and after the change
    ids_before = _explicit_ids(db, paths)
    requires_before = _requires_rows(db, paths)
    names = _delete(db, paths, reading.content_dirs)
    db.executemany("UPDATE files SET mtime_ns=?, size=? WHERE path=?", touched)
    _insert(db, parsed, full, names, reading.content_dirs)
    moved = _resolve(db, [row[0] for row in parsed], names, full, reading.content_dirs)
    db.execute("DELETE FROM problems WHERE origin='scan'")
    db.executemany("INSERT INTO problems VALUES (?,?,?,?,?,?)", scan_rows)
    from studykb.vault.checks import anchor_problems, vault_problems

    anchor_problems(db, None if full else paths, reading, root)
    # a loop also appears or goes when a requires elsewhere now names another doc
    loops = full or moved or requires_before != _requires_rows(db, paths)
    ids = None if full else ids_before | _explicit_ids(db, paths)
    vault_problems(db, root, recompute_cycles=loops, ids=ids)


def _delete(db: sqlite3.Connection, paths: list[str], roots: Iterable[str]) -> set[str]:
    """Remove the rows of ``paths``; the names their documents answered to."""
    names: set[str] = set()
    for chunk in _chunks(paths):
        qs = ",".join("?" * len(chunk))
        for key, path, did, title, _t, aliases, url in db.execute(
            f"SELECT key, path, id, title, type, names, url FROM docs WHERE path IN ({qs})",
            chunk,
        ):
            names.update(_names(key, path, did, title, aliases, url, roots))
        for table in ("files", "docs", "refs", "texts", "names"):
            db.execute(f"DELETE FROM {table} WHERE path IN ({qs})", chunk)
        db.execute(f"DELETE FROM problems WHERE origin='parse' AND path IN ({qs})", chunk)
    return names


def _insert(
    db: sqlite3.Connection,
    parsed: list[ParsedRows],
    full: bool,
    names: set[str],
    roots: Iterable[str],
) -> None:
    """Insert the rows of the files parsed; the names of their documents are added to
    ``names`` (and to the names table, unless a full build fills it at once)."""
    for path, mtime, size, digest, doc_rows, ref_rows, problem_rows, text_row in parsed:
        db.execute("INSERT INTO files VALUES (?,?,?,?)", (path, mtime, size, digest))
        db.executemany("INSERT INTO docs VALUES (?,?,?,?,?,?,?,?,?)", doc_rows)
        db.executemany(
            "INSERT INTO refs(source, path, line, kind, text, target, style, anchor,"
            " reason, optional, lookup, lookup2) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            ref_rows,
        )
        db.executemany("INSERT INTO problems VALUES (?,?,?,?,?,'parse')", problem_rows)
        db.execute("INSERT INTO texts(path, body, headings, outline) VALUES (?,?,?,?)", text_row)
        if not full:  # a full build resolves everything and fills names at once
            for key, path_, did, title, dtype, _e, aliases, url, _d in doc_rows:
                names.update(_names(key, path_, did, title, aliases, url, roots))
                db.executemany(
                    "INSERT INTO names VALUES (?,?,?,?)",
                    name_rows(key, path_, did, title, dtype, aliases, url, roots),
                )


def _resolve(
    db: sqlite3.Connection,
    parsed_paths: list[str],
    names: set[str],
    full: bool,
    roots: Iterable[str],
) -> bool:
    """Re-resolve what the change may touch; True when a ``requires`` of a file not
    parsed again now names another document."""
    if full:
        table = Names(db.execute("SELECT key, path, id, title, type, names, url FROM docs"), roots)
        db.execute("DELETE FROM names")
        db.executemany("INSERT INTO names VALUES (?,?,?,?)", table_rows(table))
    else:  # look up only the names the references to resolve ask for
        table = StoredNames(db, roots)
    cols = (
        "SELECT n, source, path, target, style, anchor, optional, text, kind, target_key FROM refs"
    )
    rows: Iterable[tuple[Any, ...]]
    if full:
        rows = db.execute(cols)
    else:
        wanted: dict[int, tuple[Any, ...]] = {}
        sql = cols + " WHERE "
        for chunk in _chunks(parsed_paths):
            for row in db.execute(sql + f"path IN ({','.join('?' * len(chunk))})", chunk):
                wanted[row[0]] = row
        for chunk in _chunks(sorted(names)):
            marks = ",".join("?" * len(chunk))
            for row in db.execute(
                sql + f"lookup IN ({marks}) OR lookup2 IN ({marks})", chunk + chunk
            ):
                wanted[row[0]] = row
        rows = wanted.values()
    updates = []
    moved = False
    fresh = set(parsed_paths)  # their rows were just inserted, unresolved
    for n, source, path, target, style, anchor, optional, text, kind, old in rows:
        key, state, note = table.resolve(source, path, target, style, anchor, bool(optional), text)
        updates.append((key, state, note, n))
        moved = moved or (kind == "requires" and key != old and path not in fresh)
    db.executemany("UPDATE refs SET target_key=?, state=?, note=? WHERE n=?", updates)
    return moved


def _names(
    key: str,
    path: str,
    did: str,
    title: str,
    aliases: str,
    url: str | None,
    roots: Iterable[str] = (),
) -> set[str]:
    """The (folded) names a document answers to: references to them resolve again."""
    out = {name for name, _lvl in names_of(key, path, did, title, json.loads(aliases), roots)}
    if "#" in key:
        out.add(fold(key.split("#", 1)[1]))
    if url:
        from studykb.parse.urls import normalize_url

        out.add(normalize_url(url))
    return out


def _chunks(items: list[str], size: int = 400) -> Iterable[list[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _explicit_ids(db: sqlite3.Connection, paths: list[str]) -> set[str]:
    """The declared ids (folded as the duplicate-id check folds them) in ``paths``."""
    out: set[str] = set()
    for chunk in _chunks(paths):
        out.update(
            i
            for (i,) in db.execute(
                f"SELECT lower(id) FROM docs WHERE explicit=1 AND type != 'unit'"
                f" AND path IN ({','.join('?' * len(chunk))})",
                chunk,
            )
        )
    return out


def _requires_rows(db: sqlite3.Connection, paths: list[str]) -> list[tuple[Any, ...]]:
    """The resolved ``requires`` of ``paths``, as the loop check reads them."""
    out: list[tuple[Any, ...]] = []
    for chunk in _chunks(paths):
        out.extend(
            db.execute(
                f"SELECT source, target_key, path, line FROM refs WHERE kind='requires'"
                f" AND path IN ({','.join('?' * len(chunk))})",
                chunk,
            )
        )
    return sorted(out, key=repr)
