"""Incremental refresh: only what changed is parsed again, and the state after any series
of edits equals the state a fresh build of the same files gives.
"""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

import pytest

FILES = {
    "notes/a.md": "---\ntitle: Alpha\nrequires: [b]\n---\n# Alpha\n\n[[b]] and [[c]].\n",
    "notes/b.md": "---\ntitle: Beta\naliases: [B-note]\n---\n# Beta\n\n[[a]]\n",
    "notes/c.md": "# Gamma\n\n[[B-note]] [[missing]]\n",
    "topics/t.md": "---\nid: topic-t\n---\n# Topic\n",
    "entries/e.md": "---\nurl: https://example.com/e\ncovers: [topic-t]\n---\n",
    "notes/d.md": "See https://example.com/e/ and [[topic-t]].\n",
}


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Paths handed to the parser (in this process: the vaults here stay small)."""
    import studykb.vault.rows as rows

    seen: list[str] = []
    real = rows.parse_file

    def parse_file(path: str, raw: bytes, *rules):  # type: ignore[no-untyped-def]
        seen.append(path)
        return real(path, raw, *rules)

    monkeypatch.setattr(rows, "parse_file", parse_file)
    return seen


def write(root: Path, rel: str, text: str) -> None:
    """Write and move the mtime on, as a later save would (timestamps can be coarse)."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    old = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(text, encoding="utf-8")
    st = path.stat()
    if st.st_mtime_ns <= old:
        os.utime(path, ns=(st.st_atime_ns, old + 1_000_000))


def snapshot(vault) -> dict:  # type: ignore[no-untyped-def]
    """Everything a query can see, in a form two vaults can be compared by."""
    docs = {
        k: (d.id, d.title, d.type, d.aliases, d.tags, d.url, d.line)
        for k, d in vault.documents().items()
    }
    links = sorted(
        (lk.ref.source, lk.ref.line, lk.ref.kind, lk.ref.text, lk.target or "", lk.state)
        for lk in vault.links()
    )
    problems = sorted((p.path, p.line, p.code, p.severity, p.message) for p in vault.problems())
    return {"docs": docs, "links": links, "problems": problems}


def fresh(root: Path, tmp_path: Path, open_vault) -> dict:  # type: ignore[no-untyped-def]
    copy = tmp_path / f"fresh-{random.random()}"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".studykb"), symlinks=True)
    return snapshot(open_vault(copy))


def test_one_edit_parses_one_file(make_vault, open_vault, spy) -> None:
    root = make_vault(FILES, config="workers = 1\n")
    vault = open_vault(root)
    spy.clear()
    write(root, "notes/c.md", "# Gamma\n\n[[a]]\n")
    stats = vault.refresh()
    assert (stats.added, stats.modified, stats.removed) == ([], ["notes/c.md"], [])
    assert spy == ["notes/c.md"]
    spy.clear()
    stats = vault.refresh()
    assert not stats.changed and spy == []


def test_touch_without_change_does_not_parse(make_vault, open_vault, spy) -> None:
    root = make_vault(FILES, config="workers = 1\n")
    vault = open_vault(root)
    before = snapshot(vault)
    spy.clear()
    path = root / "notes/a.md"
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    stats = vault.refresh()
    assert not stats.changed
    assert spy == []
    stored = vault.store.files.stamps()["notes/a.md"]
    assert stored[0] == path.stat().st_mtime_ns  # the new mtime is remembered
    assert snapshot(vault) == before


def test_added_target_resolves_a_dangling_reference(make_vault, open_vault, spy) -> None:
    root = make_vault(FILES, config="workers = 1\n")
    vault = open_vault(root)
    assert ("notes/c.md", 3, "dangling-ref") in {(p.path, p.line, p.code) for p in vault.problems()}
    spy.clear()
    write(root, "notes/missing.md", "# Missing no more\n")
    stats = vault.refresh()
    assert stats.added == ["notes/missing.md"] and spy == ["notes/missing.md"]
    assert [lk.ref.source for lk in vault.backlinks("notes/missing.md")] == ["notes/c.md"]
    assert not [p for p in vault.problems() if p.code == "dangling-ref"]
    # and back: removing it makes the reference dangle again, without parsing c.md
    spy.clear()
    (root / "notes/missing.md").unlink()
    stats = vault.refresh()
    assert stats.removed == ["notes/missing.md"] and spy == []
    assert [(p.path, p.code) for p in vault.problems()] == [("notes/c.md", "dangling-ref")]


def test_rename_re_resolves_references_elsewhere(make_vault, open_vault, spy) -> None:
    root = make_vault(FILES, config="workers = 1\n")
    vault = open_vault(root)
    spy.clear()
    (root / "notes/b.md").rename(root / "notes/beta.md")
    stats = vault.refresh()
    assert (stats.added, stats.removed) == (["notes/beta.md"], ["notes/b.md"])
    assert spy == ["notes/beta.md"]
    states = {(lk.ref.source, lk.ref.text): (lk.target, lk.state) for lk in vault.links()}
    assert states[("notes/a.md", "[[b]]")] == (None, "dangling")
    assert states[("notes/a.md", "b")] == (None, "dangling")  # requires: [b]
    assert states[("notes/c.md", "[[B-note]]")] == ("notes/beta.md", "ok")  # by alias
    assert snapshot(vault) == fresh(root, root.parent, open_vault)


@pytest.mark.parametrize(
    ("rel", "text", "query", "expected"),
    [
        # a new alias, title, id or url elsewhere makes a reference resolve
        ("notes/g.md", "---\naliases: [missing]\n---\n", "notes/c.md", "notes/g.md"),
        ("notes/g.md", "---\ntitle: Missing\n---\n", "notes/c.md", "notes/g.md"),
        ("notes/g.md", "---\nid: missing\n---\n", "notes/c.md", "notes/g.md"),
        ("entries/f.md", "---\nurl: https://example.com/e/\n---\n", "notes/d.md", "entries/e.md"),
    ],
)
def test_names_added_elsewhere(
    make_vault, open_vault, tmp_path, rel, text, query, expected
) -> None:
    root = make_vault(FILES, config="workers = 1\n")
    vault = open_vault(root)
    write(root, rel, text)
    vault.refresh()
    assert snapshot(vault) == fresh(root, tmp_path, open_vault)
    targets = {lk.target for lk in vault.outgoing(query)}
    assert expected in targets


def test_edits_that_remove_names(make_vault, open_vault, tmp_path) -> None:
    root = make_vault(FILES, config="workers = 1\n")
    vault = open_vault(root)
    write(root, "notes/b.md", "---\ntitle: Beta\n---\n# Beta\n\n[[a]]\n")  # alias gone
    vault.refresh()
    assert ("notes/c.md", "dangling") in {
        (lk.ref.source, lk.state) for lk in vault.links() if lk.ref.text == "[[B-note]]"
    }
    assert snapshot(vault) == fresh(root, tmp_path, open_vault)
    write(root, "entries/e.md", "---\nurl: https://example.com/other\n---\n")
    vault.refresh()
    assert snapshot(vault) == fresh(root, tmp_path, open_vault)


def test_ties_appear_and_go(make_vault, open_vault, tmp_path) -> None:
    root = make_vault(FILES, config="workers = 1\n")
    vault = open_vault(root)
    write(root, "other/c.md", "# Another c\n")
    vault.refresh()
    assert [p.code for p in vault.problems() if p.path == "notes/a.md"] == ["ambiguous-ref"]
    assert snapshot(vault) == fresh(root, tmp_path, open_vault)
    (root / "other/c.md").unlink()
    vault.refresh()
    assert [p.code for p in vault.problems() if p.path == "notes/a.md"] == []


def test_duplicate_ids_and_cycles_follow_edits(make_vault, open_vault, tmp_path) -> None:
    root = make_vault(FILES, config="workers = 1\n")
    vault = open_vault(root)
    write(root, "topics/t2.md", "---\nid: topic-t\n---\n")
    vault.refresh()
    assert sorted(p.path for p in vault.problems() if p.code == "duplicate-id") == [
        "topics/t.md",
        "topics/t2.md",
    ]
    write(root, "notes/b.md", "---\ntitle: Beta\naliases: [B-note]\nrequires: [a]\n---\n")
    vault.refresh()
    assert [p.code for p in vault.problems()].count("cycle") == 1
    assert snapshot(vault) == fresh(root, tmp_path, open_vault)
    (root / "topics/t2.md").unlink()
    write(root, "notes/b.md", "---\ntitle: Beta\naliases: [B-note]\n---\n")
    vault.refresh()
    codes = [p.code for p in vault.problems()]
    assert "cycle" not in codes and "duplicate-id" not in codes
    assert snapshot(vault) == fresh(root, tmp_path, open_vault)


def test_duplicate_groups_shrink_and_grow(make_vault, open_vault, tmp_path) -> None:
    """Only the ids an edit touches are checked again: the other members of a group
    keep messages that name the right files, and ids folded alike stay duplicates."""
    root = make_vault(FILES, config="workers = 1\n")
    vault = open_vault(root)

    def dups() -> list[tuple[str, str]]:
        return sorted((p.path, p.message) for p in vault.problems() if p.code == "duplicate-id")

    write(root, "topics/t2.md", "---\nid: Topic-T\n---\n")
    write(root, "topics/t3.md", "---\nid: topic-t\n---\n")
    write(root, "notes/x.md", "---\nid: x\n---\n")
    write(root, "notes/x2.md", "---\nid: x\n---\n")
    vault.refresh()
    assert [p for p, _m in dups()] == [
        "notes/x.md",
        "notes/x2.md",
        "topics/t.md",
        "topics/t2.md",
        "topics/t3.md",
    ]
    write(root, "topics/t3.md", "---\nid: topic-three\n---\n")  # leaves the group
    vault.refresh()
    assert dups() == [
        ("notes/x.md", "id 'x' is also declared in notes/x2.md"),
        ("notes/x2.md", "id 'x' is also declared in notes/x.md"),
        ("topics/t.md", "id 'topic-t' is also declared in topics/t2.md"),
        ("topics/t2.md", "id 'topic-t' is also declared in topics/t.md"),
    ]
    assert snapshot(vault) == fresh(root, tmp_path, open_vault)
    write(root, "notes/x2.md", "---\nid: topic-t\n---\n")  # moves to the other group
    vault.refresh()
    assert [p for p, _m in dups()] == ["notes/x2.md", "topics/t.md", "topics/t2.md"]
    assert snapshot(vault) == fresh(root, tmp_path, open_vault)


def test_deleting_the_state_folder_loses_nothing(make_vault, open_vault) -> None:
    root = make_vault(FILES)
    vault = open_vault(root)
    before = snapshot(vault)
    vault.close()
    shutil.rmtree(root / ".studykb")
    again = open_vault(root)
    assert snapshot(again) == before
    assert (root / ".studykb" / "state.sqlite").exists()


def test_new_process_sees_the_same_state(make_vault, open_vault, spy) -> None:
    root = make_vault(FILES, config="workers = 1\n")
    first = open_vault(root)
    before = snapshot(first)
    first.close()
    spy.clear()
    second = open_vault(root)  # refresh on open finds nothing to do
    assert spy == []
    assert snapshot(second) == before


def test_random_edits_match_a_fresh_build(make_vault, open_vault, tmp_path) -> None:
    """A seeded series of edits; after each, the incremental state equals a fresh build."""
    rng = random.Random(20240601)
    names = ["a", "b", "c", "d", "e", "f"]
    folders = ["notes", "topics", "entries", "x"]

    def note() -> str:
        picks = rng.sample(names, 3)
        fm = [f"id: {rng.choice(names)}"] if rng.random() < 0.2 else []
        if rng.random() < 0.4:
            fm.append(f"aliases: [{rng.choice(names).upper()}]")
        if rng.random() < 0.3:
            fm.append(f"requires: [{picks[0]}]")
        if rng.random() < 0.2:
            fm.append(f"url: https://ex.org/{picks[1]}/")
        if rng.random() < 0.2:
            fm += ["units:", f"  - id: {picks[0]}", f"    requires: [{picks[1]}]"]
        head = "---\n" + "\n".join(fm) + "\n---\n" if fm else ""
        extra = rng.choice(
            [
                f"[x](../{rng.choice(folders)}/{picks[0]}.md)",
                f"[[{picks[0]}.md]]",
                f"[[Label|{picks[1]}]]",
                f"[[{picks[2]}#{picks[0]}]]",
                f"[[{rng.choice(folders)}/{picks[1]}]]",
                "",
            ]
        )
        return (
            head + f"# {rng.choice(names).title()}\n\n[[{picks[1]}]] [[{picks[2]}]] "
            f"https://ex.org/{picks[0]} {extra}\n"
        )

    root = make_vault({}, config="workers = 1\n")
    vault = open_vault(root)
    for step in range(25):
        existing = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md"))
        action = rng.random()
        if action < 0.5 or not existing:
            write(root, f"{rng.choice(folders)}/{rng.choice(names)}.md", note())
        elif action < 0.7:
            (root / rng.choice(existing)).unlink()
        elif action < 0.85:
            src = root / rng.choice(existing)
            dest = root / rng.choice(folders) / f"{rng.choice(names)}-{step}.md"
            dest.parent.mkdir(parents=True, exist_ok=True)
            src.rename(dest)
        else:
            write(root, rng.choice(existing), note())
        vault.refresh()
        assert snapshot(vault) == fresh(root, tmp_path, open_vault), f"step {step}"


def test_the_fingerprint_changes_with_the_files_and_only_then(make_vault, tmp_path) -> None:
    """What is derived from the state (the search index's record, cached plans) is kept
    under the state's fingerprint: it must change when a file comes, goes or changes,
    stay when nothing did (a touch, a refresh with nothing to do), and never be one an
    earlier state had."""
    import os
    import shutil

    from studykb.vault import Vault

    root = make_vault({"a.md": "# A\n", "b.md": "# B\n\n[[a]]\n"})
    seen: list[str] = []
    v = Vault.open(root)
    try:
        v.refresh()
        first = v.fingerprint()
        os.utime(root / "a.md", ns=(1, 1))  # touched, not changed
        v.refresh()
        assert v.fingerprint() == first
        assert not v.refresh().changed and v.fingerprint() == first
        other = Vault.open(root)  # another process sees the same state
        assert other.fingerprint() == first
        other.close()
        seen.append(first)
        for change in ("edit", "add", "remove"):
            if change == "edit":
                (root / "a.md").write_text("# A\n\nmore\n", encoding="utf-8")
            elif change == "add":
                (root / "c.md").write_text("# C\n", encoding="utf-8")
            else:
                (root / "c.md").unlink()
            v.refresh()
            assert v.fingerprint() not in seen, change
            seen.append(v.fingerprint())
    finally:
        v.close()
    shutil.rmtree(root / ".studykb")  # the same files in a state made anew
    v = Vault.open(root)
    try:
        v.refresh()
        assert v.fingerprint() not in seen
    finally:
        v.close()
