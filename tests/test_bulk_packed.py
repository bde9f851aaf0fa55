"""What a first build holds between the parse and the resolve (studykb.vault.bulk): each
file's references packed, unpacked the same, their repeated strings shared again; and a
first build of many files (parsed in workers) stores the references an incremental
build stores."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import msgpack
import pytest

from studykb.related import textsim
from studykb.vault import bulk

ROWS = [
    ("notes/a", "notes/a.md", 3, "link", "B", "b", "wiki", "", "", 0, "b", None),
    ("notes/a", "notes/a.md", 12, "requires", "C", "c", "wiki", "Intro", "why", 1, "c", "c2"),
]


def test_packed_refs_come_back_the_same() -> None:
    assert bulk.unpacked_refs(bulk.packed_refs(ROWS)) == tuple(ROWS)
    assert bulk.unpacked_refs(bulk.packed_refs([])) == ()


def test_unpacked_refs_share_the_strings_a_file_repeats() -> None:
    rows = list(bulk._each_ref([bulk.packed_refs(ROWS), bulk.packed_refs(ROWS[:1])]))  # noqa: SLF001
    assert rows == ROWS + ROWS[:1]
    for field in (0, 1, 3):  # source, path, kind
        assert rows[0][field] is rows[2][field]
    assert rows[0][0] is rows[1][0] and rows[0][1] is rows[1][1]


def test_unpacked_refs_take_no_extension_types() -> None:
    data = msgpack.packb([msgpack.ExtType(1, b"x")])
    with pytest.raises(ValueError, match="extension"):
        bulk.unpacked_refs(data)


def _refs(root: Path) -> list[tuple[object, ...]]:
    db = sqlite3.connect(root / ".studykb" / "state.sqlite")
    try:
        cols = "source, path, line, kind, text, target, style, anchor, reason, optional,"
        cols += " lookup, lookup2, target_key, state, note"
        return sorted(db.execute(f"SELECT {cols} FROM refs"), key=repr)
    finally:
        db.close()


def _notes(count: int) -> dict[str, str | bytes]:
    files: dict[str, str | bytes] = {}
    for n in range(count):
        links = f"[[n{(n + 1) % count:03d}]] and [[n{(n * 7) % count:03d}#Part {n % 3}]]"
        files[f"notes/n{n:03d}.md"] = (
            f"---\ntitle: Note {n}\nrequires: [n{(n + 2) % count:03d}]\n---\n"
            f"# Part {n % 3}\n\nSee {links}, [[missing-{n % 5}]] and [x](n{n % 9:03d}.md).\n"
        )
    return files


def test_a_first_build_stores_the_references_an_incremental_one_does(  # type: ignore[no-untyped-def]
    make_vault, open_vault
) -> None:
    count = bulk.PARALLEL_THRESHOLD + 16  # parsed in workers, references packed
    files = _notes(count)
    whole = make_vault(files)
    open_vault(whole)
    step = make_vault({p: t for p, t in files.items() if p.endswith("n000.md")})
    vault = open_vault(step)
    for path, text in files.items():
        (step / path).write_text(str(text), encoding="utf-8")
    vault.refresh()
    got = _refs(whole)
    assert got == _refs(step)
    assert any(row[13] == "ok" for row in got) and any(row[13] == "dangling" for row in got)


def test_the_texts_in_chunks_are_every_text_in_key_order(make_vault, open_vault) -> None:  # type: ignore[no-untyped-def]
    vault = open_vault(make_vault(_notes(12)))
    held: dict[str, str] = {}
    titles, count, chunks = textsim.texts_in_chunks(vault, held)
    whole = textsim._texts(vault)  # noqa: SLF001
    taken: list[tuple[str, str]] = []
    for chunk in chunks:
        taken.extend(chunk)
        assert all(held[k] == text for k, text in chunk)
    assert count == len(whole) == len(taken)
    assert [k for k, _t in taken] == sorted(whole)
    assert dict(taken) == {k: t.text for k, t in whole.items()}
    assert sorted(titles) == sorted(t.title for t in whole.values())
