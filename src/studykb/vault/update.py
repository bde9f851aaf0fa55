"""The write of an incremental refresh: the rows of the files that changed or went are
replaced, what the change may touch is resolved again, and the problems that depend on
it are found again, all in the refresh's transaction (:mod:`studykb.vault.refresh`
decides what to write; a first build is written by :mod:`studykb.vault.bulk`)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from studykb.parse.urls import normalize_url
from studykb.vault import checks
from studykb.vault.resolve import Names, StoredNames, fold, name_rows, names_of, table_rows
from studykb.vault.state.rows import DocNames, StoredProblem, doc_names

if TYPE_CHECKING:
    from studykb.parse.reading import Reading
    from studykb.vault.state import Tables
    from studykb.vault.state.rows import ParsedRows


def write(
    state: Tables,
    parsed: list[ParsedRows],
    removed: list[str],
    touched: list[tuple[int, int, str]],
    scan_rows: list[StoredProblem],
    full: bool,
    reading: Reading,
    root: Path,
) -> None:
    """Replace the rows of the files that changed or went, insert those parsed,
    resolve again what the change may touch, and update the problems, through the
    tables of the refresh's transaction (the caller writes the marks and commits)."""
    paths = removed + [rows.path for rows in parsed]
    # what the duplicate-id and loop checks depend on, before and after the change
    ids_before = state.docs.declared_ids(paths)
    requires_before = state.refs.requires_in(paths)
    names: set[str] = set()
    for doc in state.delete_files(paths):
        names.update(_names(doc, reading.content_dirs))
    state.files.touch(touched)
    _insert(state, parsed, full, names, reading.content_dirs)
    moved = _resolve(state, [rows.path for rows in parsed], names, full, reading.content_dirs)
    state.problems.delete_found_by("scan")
    state.problems.insert(scan_rows)
    checks.anchor_problems(state, None if full else paths, reading, root)
    # a loop also appears or goes when a requires elsewhere now names another doc
    loops = full or moved or requires_before != state.refs.requires_in(paths)
    ids = None if full else ids_before | state.docs.declared_ids(paths)
    checks.vault_problems(state, root, recompute_cycles=loops, ids=ids)


def _insert(
    state: Tables,
    parsed: list[ParsedRows],
    full: bool,
    names: set[str],
    roots: Iterable[str],
) -> None:
    """Insert the rows of the files parsed; the names of their documents are added to
    ``names`` (and to the names table, unless a full build fills it at once)."""
    for rows in parsed:
        state.files.insert([(rows.path, rows.mtime_ns, rows.size, rows.digest)])
        state.docs.insert(rows.docs)
        state.refs.insert(rows.refs)
        state.problems.insert_parsed(rows.problems)
        state.texts.insert([rows.text])
        if not full:  # a full build resolves everything and fills names at once
            for row in rows.docs:
                doc = doc_names(row)
                names.update(_names(doc, roots))
                state.names.insert(name_rows(*doc, roots))


def _resolve(
    state: Tables,
    parsed_paths: list[str],
    names: set[str],
    full: bool,
    roots: Iterable[str],
) -> bool:
    """Re-resolve what the change may touch; True when a ``requires`` of a file not
    parsed again now names another document."""
    table: Names
    if full:
        table = Names(state.docs.names(), roots)
        state.names.clear()
        state.names.insert(table_rows(table))
    else:  # look up only the names the references to resolve ask for
        table = StoredNames(state, roots)
    updates = []
    moved = False
    fresh = set(parsed_paths)  # their rows were just inserted, unresolved
    for ref in state.refs.to_resolve(None if full else parsed_paths, names):
        key, got, note = table.resolve(
            ref.source, ref.path, ref.target, ref.style, ref.anchor, bool(ref.optional), ref.text
        )
        updates.append((key, got, note, ref.n))
        moved = moved or (
            ref.kind == "requires" and key != ref.target_key and ref.path not in fresh
        )
    state.refs.resolve(updates)
    return moved


def _names(doc: DocNames, roots: Iterable[str] = ()) -> set[str]:
    """The (folded) names a document answers to: references to them resolve again."""
    key, path, did, title, _type, aliases, url = doc
    out = {name for name, _lvl in names_of(key, path, did, title, json.loads(aliases), roots)}
    if "#" in key:
        out.add(fold(key.split("#", 1)[1]))
    if url:
        out.add(normalize_url(url))
    return out
