"""The search index as a derived structure: its value (which generation of the whoosh
index, made with what) kept by the vault's structures, trusted only while it names the
index on disk, and enough, when current, to answer without loading whoosh."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES

SEARCH_VAULT = FIXTURES / "search_vault"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    dest = tmp_path / "search_vault"
    shutil.copytree(SEARCH_VAULT, dest)
    return dest


def _append(vault: Path, name: str, word: str) -> None:
    note = vault / "notes" / name
    note.write_text(note.read_text(encoding="utf-8") + f"\n{word}\n", encoding="utf-8")


def _hits(v: object, text: str) -> list[str]:
    from studykb.search.query import SearchOptions, search

    return [h.key for h in search(v, SearchOptions(text))]  # type: ignore[arg-type]


def test_a_current_index_is_known_without_whoosh(vault: Path) -> None:
    """After a build, the next process learns the index is current from the value alone:
    it says how many documents it holds, and whoosh is never imported."""
    from studykb.search import index
    from studykb.vault import Vault

    v = Vault.open(vault)
    try:
        v.refresh()
        documents = index.sync(v, quiet=True).documents
    finally:
        v.close()
    script = (
        "import json, sys\n"
        "from studykb.api import Session\n"
        f"with Session.open({str(vault)!r}) as kb:\n"
        "    kb.refresh()\n"
        "    n = kb.index_current()\n"
        "print(json.dumps([n, 'whoosh' in sys.modules]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=vault
    )
    assert json.loads(out.stdout) == [documents, False]
    assert documents > 0


def test_an_edit_is_indexed_from_the_files_the_state_names(open_vault, vault: Path) -> None:
    """The structures hand the index's update the files changed since its value: only
    those are indexed again, and the next process's value says so."""
    from studykb.search import index
    from studykb.search.state import SearchIndex, index_dir

    v = open_vault(vault)
    index.sync(v, quiet=True)
    _append(vault, "value-semantics.md", "zeppelin")
    v.refresh()
    stats = index.sync(v, quiet=True)
    assert stats.paths == ["notes/value-semantics.md"] and not stats.rebuilt
    assert _hits(v, "zeppelin") == ["notes/value-semantics.md"]
    spec = SearchIndex(index_dir(v))
    assert index.sync(open_vault(vault), quiet=True).paths == []  # current for the next
    assert open_vault(vault).structures.current(spec) is not None


def test_another_process_commit_is_not_mistaken_for_ours(open_vault, vault: Path) -> None:
    """A long-lived process (a watch) holds a value; another process edits and commits a
    newer generation. The held value no longer names the index: the next sync takes the
    newer one and the search sees both edits."""
    from studykb.search import index

    watch = open_vault(vault)
    index.sync(watch, quiet=True)
    _append(vault, "value-semantics.md", "zeppelin")
    other = open_vault(vault)
    assert index.sync(other, quiet=True).paths == ["notes/value-semantics.md"]
    _append(vault, "gpu-memory.md", "quokka")
    watch.refresh()
    stats = index.sync(watch, quiet=True)
    assert "notes/gpu-memory.md" in stats.paths
    assert _hits(watch, "zeppelin") == ["notes/value-semantics.md"]
    assert _hits(watch, "quokka") == ["notes/gpu-memory.md"]


def test_a_deleted_index_is_built_again(open_vault, vault: Path) -> None:
    """The value in memory or in the cache is trusted only while it names the index on
    disk: a deleted index folder is rebuilt, not taken as current."""
    from studykb.api import Session
    from studykb.search import index
    from studykb.search.state import index_dir

    v = open_vault(vault)
    first = index.sync(v, quiet=True)
    shutil.rmtree(index_dir(v))
    again = index.sync(v, quiet=True)
    assert again.rebuilt and again.documents == first.documents
    shutil.rmtree(index_dir(v))
    with Session.open(vault) as kb:
        kb.refresh()
        assert kb.index_current() is None
    assert index.sync(v, quiet=True).rebuilt
    assert _hits(v, "幻读") == ["notes/mysql-isolation.md"]


def test_a_busy_index_keeps_no_value(open_vault, vault: Path) -> None:
    """When another writer holds the lock nothing is written: no value claims the edit
    is indexed, and the next sync indexes it."""
    from whoosh import index as windex

    from studykb.search import index
    from studykb.search.state import SearchIndex, index_dir

    v = open_vault(vault)
    index.sync(v, quiet=True)
    holder = windex.open_dir(str(index_dir(v))).writer()
    try:
        _append(vault, "value-semantics.md", "zeppelin")
        v.refresh()
        assert index.sync(v, wait=0.1, quiet=True).stale
        assert open_vault(vault).structures.current(SearchIndex(index_dir(v))) is None
    finally:
        holder.cancel()
    assert index.sync(v, quiet=True).paths == ["notes/value-semantics.md"]
