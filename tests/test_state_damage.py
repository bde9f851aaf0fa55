"""Damage in ``.studykb/`` is met, said once, and rebuilt (issue 30, Medium).

The state and the cache are caches of the notes: whatever was done to them (cut short,
pages overwritten, a garbage log, an empty file, a real SQLite file with other tables,
a row that is not a document), the next command answers as if nothing happened, exit 0,
with at most one line saying the state was rebuilt; the command after it is quiet.
SQLite finds a damaged page only where it reads, so some of these are met at open and
some in the middle of a refresh: both are rebuilt, and nobody deletes ``.studykb/`` by hand.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from conftest import run_json

PAGE = 4096


def _notes(n: int = 60) -> dict[str, str]:
    return {
        f"notes/n{i}.md": (
            f"---\ntitle: Note {i}\ntags: [t{i % 4}]\n---\n# Note {i}\n\n"
            f"See [[n{(i + 1) % n}]] and [[n{(i * 7) % n}]]. " + f"word{i} filler text " * 40 + "\n"
        )
        for i in range(n)
    }


def _root_page(db: Path, table: str) -> int:
    con = sqlite3.connect(db)
    try:
        (page,) = con.execute(
            "SELECT rootpage FROM sqlite_master WHERE type='table' AND name=?", (table,)
        ).fetchone()
    finally:
        con.close()
    return int(page)


def _overwrite_pages(db: Path, pages: list[int]) -> None:
    """Garbage over whole pages (numbered from 1, as SQLite does), in place."""
    with open(db, "r+b") as fh:
        for page in pages:
            fh.seek((page - 1) * PAGE)
            fh.write(os.urandom(PAGE))


def _sql(db: Path, *statements: str) -> None:
    con = sqlite3.connect(db)
    try:
        for statement in statements:
            con.execute(statement)
        con.commit()
    finally:
        con.close()


def _damage(state: Path, kind: str) -> None:
    db = state / "state.sqlite"
    size = db.stat().st_size
    if kind == "cut-in-half":
        with open(db, "r+b") as fh:
            fh.truncate(size // 2 // PAGE * PAGE)
    elif kind == "pages-read-by-a-refresh":
        # the tables a refresh reads first; open reads only pages 1 and 2 (schema, meta)
        _overwrite_pages(db, [_root_page(db, "files"), _root_page(db, "docs")])
    elif kind == "middle-pages":
        pages = size // PAGE
        _overwrite_pages(db, list(range(pages // 3, 2 * pages // 3)))
    elif kind == "garbage-log":
        (state / "state.sqlite-wal").write_bytes(os.urandom(8 * PAGE))
    elif kind == "empty-file":
        db.write_bytes(b"")
    elif kind == "other-tables":
        db.unlink()
        _sql(db, "CREATE TABLE meta(x)", "CREATE TABLE notes(a, b)")
    elif kind == "a-table-dropped":
        _sql(db, "DROP TABLE docs")
    elif kind == "a-table-changed":
        _sql(db, "DROP TABLE refs", "CREATE TABLE refs(a)")
    elif kind == "a-row-not-a-document":
        _sql(db, "UPDATE docs SET data = '{\"no\": 1}' WHERE rowid = (SELECT min(rowid) FROM docs)")
    else:  # pragma: no cover
        raise AssertionError(kind)


#: Damage a command may meet (a notice) or never read at all (no notice needed).
MAYBE_UNREAD = {"garbage-log", "empty-file", "middle-pages"}
KINDS = [
    "cut-in-half",
    "pages-read-by-a-refresh",
    "middle-pages",
    "garbage-log",
    "empty-file",
    "other-tables",
    "a-table-dropped",
    "a-table-changed",
    "a-row-not-a-document",
]


def _notices(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip()]


@pytest.mark.parametrize("kind", KINDS)
def test_damaged_state_is_rebuilt_once_and_the_command_answers(
    make_vault: Callable[..., Path], run: Callable[..., object], kind: str
) -> None:
    root = make_vault(_notes())
    code, before = run_json(run, "check", vault=root)
    assert code == 0
    listed = run("list", "--json", vault=root).stdout
    _damage(root / ".studykb", kind)

    result = run("list", "--json", vault=root)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == listed
    notes = _notices(result.stderr)
    if kind in MAYBE_UNREAD:
        assert len(notes) <= 1, result.stderr
    else:
        assert len(notes) == 1, result.stderr
    assert all("state was damaged" in n and "rebuilding .studykb/" in n for n in notes), notes
    # every read of the state works again, and says nothing more
    code, after = run_json(run, "check", vault=root)
    assert (code, after) == (0, before)
    assert run("list", "--json", vault=root).stderr == ""
    assert _quick_check(root / ".studykb" / "state.sqlite") == "ok"


def _quick_check(db: Path) -> str:
    con = sqlite3.connect(db)
    try:
        return str(con.execute("PRAGMA quick_check").fetchone()[0])
    finally:
        con.close()


def test_damage_met_by_a_later_read_in_a_real_process(make_vault: Callable[..., Path]) -> None:
    """The damage is met inside the refresh (not at open) of a real ``studykb`` process."""
    root = make_vault(_notes())
    first = _studykb(root, "check", "--json")
    assert first.returncode == 0, first.stderr
    _damage(root / ".studykb", "pages-read-by-a-refresh")
    damaged = _studykb(root, "check", "--json")
    assert damaged.returncode == 0, damaged.stderr
    assert json.loads(damaged.stdout) == json.loads(first.stdout)
    notes = _notices(damaged.stderr)
    assert len(notes) == 1 and "state was damaged" in notes[0], damaged.stderr
    quiet = _studykb(root, "check", "--json")
    assert (quiet.returncode, quiet.stderr) == (0, "")


def _studykb(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``studykb ARGS`` in a process of its own, as a user runs it (no debug tracebacks)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.pop("STUDYKB_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "studykb", "--vault", str(root), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


@pytest.mark.parametrize("kind", ["cut-in-half", "pages", "other-table", "garbage"])
def test_damaged_cache_is_made_anew(
    make_vault: Callable[..., Path], run: Callable[..., Result], kind: str
) -> None:
    """A damaged ``cache.sqlite`` never fails a command, and does not stay damaged
    (each command after would go without its cache, slower, for ever). The command that
    meets the damage runs in a process of its own: one process keeps what it derived in
    memory, never reading its cache. (The first one, which fills the cache and gives
    the answer to expect, runs here.)"""
    root = make_vault(_notes())
    first = run("related", "n1", "--json", vault=root)
    assert first.exit_code == 0, first.stderr
    cache = root / ".studykb" / "cache.sqlite"
    _sql(cache, "PRAGMA wal_checkpoint(TRUNCATE)")
    size = cache.stat().st_size
    if kind == "cut-in-half":
        with open(cache, "r+b") as fh:
            fh.truncate(size // 2 // PAGE * PAGE)
    elif kind == "pages":
        _overwrite_pages(cache, list(range(2, size // PAGE + 1)))
    elif kind == "other-table":
        cache.unlink()
        _sql(cache, "CREATE TABLE entries(x)")
    else:
        cache.write_bytes(os.urandom(size))
    result = _studykb(root, "related", "n1", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == json.loads(first.stdout)
    # the cache works again: a healthy file holding the entries this command made
    assert _quick_check(cache) == "ok"
    con = sqlite3.connect(cache)
    try:
        (entries,) = con.execute("SELECT count(*) FROM entries").fetchone()
    finally:
        con.close()
    assert entries > 0


def test_a_full_disk_is_not_taken_for_damage(
    make_vault: Callable[..., Path], run: Callable[..., object], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only SQLite's proof of damage deletes the state: another error keeps it."""
    from studykb.vault import Vault

    root = make_vault(_notes(5))
    assert run("check", vault=root).exit_code == 0
    kept = (root / ".studykb" / "state.sqlite").stat().st_ino

    def locked(self: Vault, progress: object = None) -> object:
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(Vault, "refresh", locked)
    monkeypatch.delenv("STUDYKB_DEBUG")
    result = run("check", vault=root)
    assert result.exit_code == 70
    assert "state was damaged" not in result.stderr
    assert (root / ".studykb" / "state.sqlite").stat().st_ino == kept
