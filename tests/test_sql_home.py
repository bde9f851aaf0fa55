"""Every SQL statement on the state lives in the state package (``vault/state/``): no
other module of studykb holds an SQL statement or runs one (issue 25). The one other
SQLite file, the cache (``vault/cache.py``, one table of its own), keeps its statements
beside it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import studykb

SRC = Path(studykb.__file__).parent
STATE = SRC / "vault" / "state"
#: Modules outside the state package that may hold SQL, each with its reason.
ELSEWHERE = {
    SRC / "vault" / "cache.py": "the cache database (cache.sqlite), not the state",
}
#: The shape of an SQL statement (upper-case keywords, as studykb writes them).
STATEMENT = re.compile(
    r"\b(SELECT\b[\s\S]*\bFROM\b|INSERT\s+(OR\s+[A-Z]+\s+)?INTO\b|DELETE\s+FROM\b"
    r"|UPDATE\s+\w+\s+SET\b|(CREATE|DROP)\s+(TABLE|INDEX|VIEW|TRIGGER)\b|PRAGMA\s+\w"
    r"|BEGIN(\s+(IMMEDIATE|DEFERRED|EXCLUSIVE))?\s*$|^\s*(COMMIT|ROLLBACK)\s*$"
    # and the fragments once passed around (``vault.links("WHERE path=? ORDER BY n")``)
    r"|\bWHERE\s+[\w.]+\s*(=|!=|<|>|IN\b|IS\b|LIKE\b)|\b(ORDER|GROUP)\s+BY\b)"
)
RUNS = {"execute", "executemany", "executescript"}


def sql_in(source: str) -> list[tuple[int, str]]:
    """(line, what) of every SQL statement in a string of ``source`` and every call that
    runs one (``.execute(...)`` and its kin)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if STATEMENT.search(node.value):
                found.append((node.lineno, node.value.strip()[:60]))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in RUNS
        ):
            found.append((node.lineno, f".{node.func.attr}(...)"))
    return found


def test_no_module_outside_the_state_package_holds_sql() -> None:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        if path.is_relative_to(STATE) or path in ELSEWHERE:
            continue
        for line, what in sql_in(path.read_text(encoding="utf-8")):
            found.append(f"{path.relative_to(SRC)}:{line}: {what}")
    assert not found, "SQL outside vault/state/:\n" + "\n".join(found)


def test_the_check_finds_sql() -> None:
    """The detector itself: it finds the statements a caller might write, in plain and
    formatted strings, and the calls that run them; and the state package is full of them."""
    sample = """
db.execute("SELECT data FROM docs WHERE key=?", (key,))
rows = conn.cursor()
sql = f"DELETE FROM {table} WHERE path IN ({marks})"
other = "INSERT OR REPLACE INTO meta VALUES (?, ?)"
vault.links("WHERE path=? ORDER BY line")
"""
    lines = [line for line, _what in sql_in(sample)]
    assert set(lines) == {2, 4, 5, 6}, sql_in(sample)
    assert not sql_in('"""Select the notes from the vault; update them; delete nothing."""')
    assert not sql_in('"""Where the order by line matters, group them."""')
    assert len(sql_in((STATE / "refs.py").read_text(encoding="utf-8"))) > 10


def test_vault_links_takes_no_sql() -> None:
    """Callers ask for references by name (``links_in``, ``backlinks``...): ``links``
    takes no ``WHERE`` fragment any more."""
    import inspect

    from studykb.vault import Vault

    assert list(inspect.signature(Vault.links).parameters) == ["self"]


def test_every_write_goes_through_the_one_write_path(make_vault, open_vault) -> None:
    """A table's write methods refuse to run outside ``Store.transaction()`` (nothing is
    written in autocommit); inside it, a failure takes back every write of the block."""
    from studykb.vault.state.schema import NotInTransaction

    vault = open_vault(make_vault({"a.md": "# A\n\n[[b]]\n", "b.md": "# B\n"}))
    store = vault.store
    with pytest.raises(NotInTransaction):
        store.meta.put({"probe": "1"})
    with pytest.raises(NotInTransaction):
        store.tables.delete_files(["a.md"])
    assert store.meta.get("probe") is None and store.docs.count() == 2

    with pytest.raises(RuntimeError), store.transaction() as state:
        state.meta.put({"probe": "1"})
        state.delete_files(["a.md"])
        raise RuntimeError("half way")
    assert store.meta.get("probe") is None and store.docs.count() == 2
    assert [lk.target for lk in vault.links()] == ["b.md"]

    with store.transaction() as state:
        state.meta.put({"probe": "1"})
    assert store.meta.get("probe") == "1"
