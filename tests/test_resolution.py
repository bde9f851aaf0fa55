"""How references resolve (FORMAT.md, "References"): path, then id, alias, title; names
case-insensitive; same folder wins, then the shortest path, and the tie is reported;
URLs normalised; course units; nothing inside code or math is a link.
"""

from __future__ import annotations

from pathlib import Path

import pytest


def resolved(open_vault, root: Path, source: str) -> dict[str, tuple[str | None, str]]:
    """``{reference text: (target path or None, state)}`` for one file's references."""
    vault = open_vault(root)
    docs = vault.documents()
    out = {}
    for link in vault.outgoing(source):
        target = docs[link.target].path if link.target else None
        if link.target and "#" in link.target:
            target = link.target  # a course unit: path#unit
        out[link.ref.text] = (target, link.state)
    return out


def codes(vault) -> list[tuple[str, int, str]]:  # type: ignore[no-untyped-def]
    return sorted((p.path, p.line, p.code) for p in vault.problems())


# -- order: path, id, alias, title -------------------------------------------------------
def test_id_then_alias_then_title(make_vault, open_vault) -> None:
    files = {
        "n/by-id.md": "---\nid: shared\n---\n",
        "n/by-alias.md": "---\naliases: [Shared]\n---\n",
        "n/by-title.md": "---\ntitle: SHARED\n---\n",
        "m/linker.md": "[[shared]]\n",
    }
    root = make_vault(files)
    assert resolved(open_vault, root, "m/linker.md")["[[shared]]"] == ("n/by-id.md", "ok")
    (root / "n/by-id.md").unlink()
    assert resolved(open_vault, root, "m/linker.md")["[[shared]]"] == ("n/by-alias.md", "ok")
    (root / "n/by-alias.md").unlink()
    assert resolved(open_vault, root, "m/linker.md")["[[shared]]"] == ("n/by-title.md", "ok")
    (root / "n/by-title.md").unlink()
    assert resolved(open_vault, root, "m/linker.md")["[[shared]]"] == (None, "dangling")


def test_path_beats_id(make_vault, open_vault) -> None:
    root = make_vault(
        {
            "topics/attention.md": "# Attention\n",
            "notes/impostor.md": "---\nid: topics/attention\n---\n",
            "linker.md": "[[topics/attention]] [[topics/attention.md]] [[Topics/Attention]]\n",
        }
    )
    got = resolved(open_vault, root, "linker.md")
    assert got["[[topics/attention]]"] == ("topics/attention.md", "ok")
    assert got["[[topics/attention.md]]"] == ("topics/attention.md", "ok")
    assert got["[[Topics/Attention]]"] == ("topics/attention.md", "ok")


def test_names_are_case_insensitive(make_vault, open_vault) -> None:
    root = make_vault(
        {
            "topics/kv-cache.md": "---\ntitle: KV Cache\naliases: [键值缓存, KV-Cache]\n---\n",
            "a.md": "[[KV-CACHE]] [[kv cache]] [[Kv-cache]] [[键值缓存]] [[ＫＶ Cache]]\n",
        }
    )
    got = resolved(open_vault, root, "a.md")
    for text in ("[[KV-CACHE]]", "[[kv cache]]", "[[Kv-cache]]", "[[键值缓存]]"):
        assert got[text] == ("topics/kv-cache.md", "ok"), text
    assert got["[[ＫＶ Cache]]"][1] == "dangling"  # full-width letters are other letters


def test_note_md_and_relative_forms(make_vault, open_vault) -> None:
    root = make_vault(
        {
            "notes/deep/target note.md": "# Target\n",
            "notes/deep/other.md": "# Other\n",
            "notes/linker.md": (
                "[[target note.md]] [[Target Note]] [[deep/other]] [[notes/deep/other]]\n"
                "[a](deep/other.md) [b](./deep/other.md#x) "
                "[c](deep/target%20note.md) [d](deep/other)\n"
                "[e](/notes/deep/other.md) [f](../notes/deep/other.md)\n"
            ),
        }
    )
    got = resolved(open_vault, root, "notes/linker.md")
    assert got["[[target note.md]]"] == ("notes/deep/target note.md", "ok")
    assert got["[[Target Note]]"] == ("notes/deep/target note.md", "ok")
    for text in (
        "[[deep/other]]",
        "[[notes/deep/other]]",
        "deep/other.md",
        "./deep/other.md#x",
        "deep/other",
        "/notes/deep/other.md",
        "../notes/deep/other.md",
    ):
        assert got[text] == ("notes/deep/other.md", "ok"), text
    assert got["deep/target%20note.md"] == ("notes/deep/target note.md", "ok")


def test_link_destinations_are_kept_as_written(make_vault, open_vault) -> None:
    """Non-ASCII, spaced (``<...>``) and percent-encoded destinations all resolve, and
    each reference shows its destination as the author wrote it."""
    root = make_vault(
        {
            "notes/笔记/显存 管理.md": "# 显存管理\n",
            "notes/linker.md": (
                "[a](笔记/显存%20管理.md) [b](<笔记/显存 管理.md>) "
                "[c](%E7%AC%94%E8%AE%B0/%E6%98%BE%E5%AD%98%20%E7%AE%A1%E7%90%86.md) "
                "[d](https://例え.jp/パス?q=1)\n"
            ),
        }
    )
    got = resolved(open_vault, root, "notes/linker.md")
    for text in (
        "笔记/显存%20管理.md",
        "笔记/显存 管理.md",
        "%E7%AC%94%E8%AE%B0/%E6%98%BE%E5%AD%98%20%E7%AE%A1%E7%90%86.md",
    ):
        assert got[text] == ("notes/笔记/显存 管理.md", "ok"), text
    assert "https://例え.jp/パス?q=1" in got


def test_front_matter_names_and_paths(make_vault, open_vault) -> None:
    root = make_vault(
        {
            "topics/ddp.md": "---\nid: ddp\ntitle: Distributed Data Parallel\n---\n",
            "topics/fsdp.md": "---\nrequires:\n  - topics/ddp.md\n  - DDP\n"
            "  - {ref: distributed data parallel, reason: why}\n"
            '  - "[[ddp|the DDP note]]"\nrelated: ddp\n---\n',
        }
    )
    vault = open_vault(root)
    links = vault.outgoing("topics/fsdp.md")
    assert [(lk.ref.kind, lk.ref.line, lk.target, lk.state) for lk in links] == [
        ("requires", 3, "topics/ddp.md", "ok"),
        ("requires", 4, "topics/ddp.md", "ok"),
        ("requires", 5, "topics/ddp.md", "ok"),
        ("requires", 6, "topics/ddp.md", "ok"),
        ("related", 7, "topics/ddp.md", "ok"),
    ]
    assert links[2].ref.reason == "why"


# -- tie-breaks -------------------------------------------------------------------------
def test_same_folder_wins_and_the_tie_is_reported(make_vault, open_vault) -> None:
    root = make_vault(
        {
            "a/x.md": "# X in a\n",
            "bb/x.md": "# X in bb\n",
            "bb/linker.md": "[[x]]\n",
            "c/linker.md": "\n[[x]]\n",
            "a/deeper/linker.md": "[[x]]\n",
        }
    )
    assert resolved(open_vault, root, "bb/linker.md")["[[x]]"] == ("bb/x.md", "ambiguous")
    # no same folder: the shortest path
    assert resolved(open_vault, root, "c/linker.md")["[[x]]"] == ("a/x.md", "ambiguous")
    # a sub folder is not the same folder; still the shortest path
    assert resolved(open_vault, root, "a/deeper/linker.md")["[[x]]"] == ("a/x.md", "ambiguous")
    vault = open_vault(root)
    ambiguous = [p for p in vault.problems() if p.code == "ambiguous-ref"]
    assert sorted((p.path, p.line) for p in ambiguous) == [
        ("a/deeper/linker.md", 1),
        ("bb/linker.md", 1),
        ("c/linker.md", 2),
    ]
    assert all(p.severity == "warning" for p in ambiguous)
    message = next(p.message for p in ambiguous if p.path == "bb/linker.md")
    assert "bb/x.md" in message and "a/x.md" in message


def test_shortest_path_then_a_stable_order(make_vault, open_vault) -> None:
    root = make_vault(
        {
            "longer-folder/x.md": "",
            "zz/x.md": "",
            "yy/x.md": "",
            "n/linker.md": "[[x]]\n",
        }
    )
    # yy/x.md and zz/x.md are as short as each other: the order must not depend on the disk
    assert resolved(open_vault, root, "n/linker.md")["[[x]]"] == ("yy/x.md", "ambiguous")


def test_a_better_level_is_not_a_tie(make_vault, open_vault) -> None:
    root = make_vault(
        {
            "far/away/thing.md": "---\nid: widget\n---\n",
            "n/gadget.md": "---\ntitle: widget\n---\n",  # same folder, but only a title
            "n/linker.md": "[[widget]]\n",
        }
    )
    assert resolved(open_vault, root, "n/linker.md")["[[widget]]"] == ("far/away/thing.md", "ok")
    assert open_vault(root).problems() == []


def test_explicit_id_and_file_name_tie(make_vault, open_vault) -> None:
    """``id`` is the front-matter id, else the file name: both count as ids."""
    root = make_vault(
        {
            "notes/rope.md": "# RoPE\n",
            "papers/su2021.md": "---\nid: rope\n---\n",
            "notes/linker.md": "[[rope]]\n",
        }
    )
    assert resolved(open_vault, root, "notes/linker.md")["[[rope]]"] == (
        "notes/rope.md",
        "ambiguous",
    )


# -- URLs -------------------------------------------------------------------------------
URL_FILES = {
    "entries/post.md": "---\ntitle: A post\nurl: https://Example.com/blog/Post/\nkind: post\n---\n",
    "courses/c1.md": "---\nid: c1\nurl: https://courses.example.edu/c1\n---\n",
    "notes/has-url.md": "---\nurl: https://notes.example.com/n\n---\n",  # a note: not matched
}


@pytest.mark.parametrize(
    ("written", "target"),
    [
        ("https://example.com/blog/Post", "entries/post.md"),
        ("HTTPS://EXAMPLE.COM/blog/Post/", "entries/post.md"),
        ("https://example.com/blog/Post/#comments", "entries/post.md"),
        ("https://example.com/blog/Post?utm_source=x&utm_medium=y", "entries/post.md"),
        ("https://example.com/blog/Post/?UTM_Campaign=z#top", "entries/post.md"),
        ("https://courses.example.edu/c1/", "courses/c1.md"),
        ("https://example.com/blog/post", None),  # the path keeps its case
        ("https://example.com/blog/Post?page=2", None),  # other parameters count
        ("http://example.com/blog/Post", None),  # another scheme
        ("https://notes.example.com/n", None),  # only entries and courses
    ],
)
def test_url_normalisation(make_vault, open_vault, written: str, target: str | None) -> None:
    root = make_vault(
        {
            **URL_FILES,
            "linker.md": f"[link]({written})\n\n{written}\n",
            "fm.md": f"---\nrefs: ['{written}']\n---\n",
        }
    )
    vault = open_vault(root)
    docs = vault.documents()
    for source in ("linker.md", "fm.md"):
        links = vault.outgoing(source)
        assert links, source
        for link in links:
            got = docs[link.target].path if link.target else None
            assert got == target, (source, link.ref.text)
            assert link.state == ("ok" if target else "external")
    assert [p for p in vault.problems() if p.path in ("linker.md", "fm.md")] == []


def test_bare_urls_as_github_links_them(make_vault, open_vault) -> None:
    root = make_vault(
        {
            **URL_FILES,
            "linker.md": (
                "Read https://example.com/blog/Post/.\n"
                "(see https://example.com/blog/Post/)\n"
                "见https://example.com/blog/Post/。\n"
                "<https://example.com/blog/Post/>\n"
                "`https://example.com/blog/Post/` is code.\n"
                "www.example.com/blog/Post is another host.\n"
                "example.com/blog/Post alone is not a link.\n"
            ),
        }
    )
    vault = open_vault(root)
    links = vault.outgoing("linker.md")
    assert [(lk.ref.line, lk.target) for lk in links] == [
        (1, "entries/post.md"),
        (2, "entries/post.md"),
        (3, "entries/post.md"),
        (4, "entries/post.md"),
        (6, None),
    ]
    assert links[-1].ref.target == "http://www.example.com/blog/Post"


def test_two_entries_with_one_url_are_ambiguous(make_vault, open_vault) -> None:
    root = make_vault(
        {
            "entries/a.md": "---\nurl: https://x.org/p\n---\n",
            "entries/bb.md": "---\nurl: https://X.org/p/\n---\n",
            "n.md": "https://x.org/p\n",
        }
    )
    assert resolved(open_vault, root, "n.md")["https://x.org/p"] == ("entries/a.md", "ambiguous")


# -- course units ----------------------------------------------------------------------
COURSE = {
    "courses/cs1.md": (
        "---\nid: cs1\ntitle: Course One\nunits:\n"
        "  - id: u1\n    title: Intro\n"
        "  - id: u2\n    title: Attention\n    requires: [u1, attention]\n"
        "  - id: u3\n    title: Project\n    requires:\n      - u2\n      - cs2#u1\n"
        "---\n# Course One\n\nStart with [[cs1#u1]]; about [[cs1#Course One]].\n"
    ),
    "courses/cs2.md": "---\nid: cs2\nunits: [u1, u2]\n---\n",
    "topics/attention.md": "# Attention\n",
    "notes/u1.md": "# a note whose id is u1\n",
    "notes/study.md": (
        "---\nrequires: [cs1#u2, CS1#U3, courses/cs1.md#u1]\ncourse: cs1\n---\n"
        "[[cs1#u2]] [[Course One#u3|the project]] [[cs2#u2]] [[cs1#nope]] [[u1]]\n"
    ),
}


def test_units_are_documents(make_vault, open_vault) -> None:
    root = make_vault(COURSE)
    vault = open_vault(root)
    docs = vault.documents()
    unit = docs["courses/cs1.md#u2"]
    assert (unit.id, unit.title, unit.type, unit.parent, unit.line) == (
        "cs1#u2",
        "Attention",
        "unit",
        "courses/cs1.md",
        7,
    )
    assert docs["courses/cs2.md#u1"].title == "u1"
    # [[cs1#nope]] names neither a unit nor a heading of the course
    assert codes(vault) == [("notes/study.md", 5, "dangling-anchor")]


def test_unit_references(make_vault, open_vault) -> None:
    root = make_vault(COURSE)
    vault = open_vault(root)
    by_source: dict[str, list[tuple[str, str | None]]] = {}
    for link in vault.links():
        by_source.setdefault(link.ref.source, []).append((link.ref.text, link.target))
    # inside units a bare unit id names a unit of the same course, before any other doc
    assert by_source["courses/cs1.md#u2"] == [
        ("u1", "courses/cs1.md#u1"),
        ("attention", "topics/attention.md"),
    ]
    assert by_source["courses/cs1.md#u3"] == [
        ("u2", "courses/cs1.md#u2"),
        ("cs2#u1", "courses/cs2.md#u1"),
    ]
    assert by_source["courses/cs1.md"] == [
        ("[[cs1#u1]]", "courses/cs1.md#u1"),
        ("[[cs1#Course One]]", "courses/cs1.md"),
    ]
    assert by_source["notes/study.md"] == [
        ("cs1#u2", "courses/cs1.md#u2"),
        ("CS1#U3", "courses/cs1.md#u3"),
        ("courses/cs1.md#u1", "courses/cs1.md#u1"),
        ("cs1", "courses/cs1.md"),
        ("[[cs1#u2]]", "courses/cs1.md#u2"),
        ("[[Course One#u3|the project]]", "courses/cs1.md#u3"),
        ("[[cs2#u2]]", "courses/cs2.md#u2"),
        ("[[cs1#nope]]", "courses/cs1.md"),  # a heading anchor: the course itself
        ("[[u1]]", "notes/u1.md"),  # outside a course, u1 is the note
    ]
    assert codes(vault) == [("notes/study.md", 5, "dangling-anchor")]
    backlinks = vault.backlinks("courses/cs1.md#u2")
    assert sorted((lk.ref.source, lk.ref.line) for lk in backlinks) == [
        ("courses/cs1.md#u3", 13),
        ("notes/study.md", 2),
        ("notes/study.md", 5),
    ]


# -- not links -------------------------------------------------------------------------
def test_code_and_math_hold_no_links(make_vault, open_vault) -> None:
    root = make_vault(
        {
            "target.md": "# Target\n",
            "a.md": (
                "`[[target]]` and ``[x](target.md)``\n\n```\n[[target]] https://x.org\n```\n\n"
                "    [[target]]\n\n$$\n[[target]]\n$$\n\nInline $[[target]]$ and $$[[target]]$$.\n"
                "`https://example.com/x`\n"
            ),
        }
    )
    vault = open_vault(root)
    assert vault.outgoing("a.md") == []
    assert vault.backlinks("target.md") == []
    assert vault.problems() == []


def test_tags_are_not_links(make_vault, open_vault) -> None:
    root = make_vault(
        {"topics/rope.md": "# RoPE\n", "n.md": "---\ntags: [rope]\ncovers: [rope]\n---\n#rope\n"}
    )
    vault = open_vault(root)
    assert vault.backlinks("topics/rope.md") == []


def test_dendron_label_first(make_vault, open_vault) -> None:
    files = {
        "notes/lang.go.md": "# Go\n",
        "notes/a.md": "[[Go, the language|lang.go]] [[lang.go|Go]] [[nothing|nowhere]]\n",
    }
    root = make_vault({**files, "dendron.yml": "version: 5\n"})
    got = resolved(open_vault, root, "notes/a.md")
    assert got["[[Go, the language|lang.go]]"] == ("notes/lang.go.md", "ok")
    assert got["[[lang.go|Go]]"] == ("notes/lang.go.md", "ok")  # "Go" is its title
    assert got["[[nothing|nowhere]]"] == (None, "dangling")


def test_label_is_never_tried_outside_dendron(make_vault, open_vault) -> None:
    """Elsewhere the target comes first: a broken link is not hidden behind its label."""
    root = make_vault(
        {
            "notes/lang.go.md": "# Go\n",
            "notes/a.md": "[[Go, the language|lang.go]] [[lang.go|Go]]\n",
        }
    )
    got = resolved(open_vault, root, "notes/a.md")
    assert got["[[Go, the language|lang.go]]"] == (None, "dangling")
    assert got["[[lang.go|Go]]"] == ("notes/lang.go.md", "ok")


def test_attachments_are_not_documents(make_vault, open_vault) -> None:
    root = make_vault(
        {
            "img/chart.png": b"PNG",
            "a.md": "![[chart.png]] ![](img/chart.png) [pdf](paper.pdf) [[lang.rust]]\n",
        }
    )
    vault = open_vault(root)
    got = {lk.ref.text: lk.state for lk in vault.outgoing("a.md")}
    assert got == {
        "![[chart.png]]": "asset",
        "img/chart.png": "asset",
        "paper.pdf": "asset",
        "[[lang.rust]]": "dangling",
    }
    assert vault.backlinks("a.md") == []  # files are never documents
    assert {p.code for p in vault.problems()} == {"dangling-ref", "missing-attachment"}


def test_a_same_size_rewrite_in_the_same_mtime_tick_is_seen(tmp_path: Path) -> None:
    """git's racy-clean case: a file stored within a second of its refresh is hashed again,
    so a rewrite of the same size that keeps the mtime is not missed."""
    import os

    from studykb.vault import Vault

    note = tmp_path / "a.md"
    note.write_text("[[bbb]]\n", encoding="utf-8")
    (tmp_path / "bbb.md").write_text("# B\n", encoding="utf-8")
    (tmp_path / "ccc.md").write_text("# C\n", encoding="utf-8")
    vault = Vault.open(tmp_path)
    vault.refresh()
    assert [lk.target for lk in vault.outgoing("a.md")] == ["bbb.md"]
    stamp = note.stat().st_mtime_ns
    note.write_text("[[ccc]]\n", encoding="utf-8")  # same size ...
    os.utime(note, ns=(stamp, stamp))  # ... and the same mtime
    assert vault.refresh().modified == ["a.md"]
    assert [lk.target for lk in vault.outgoing("a.md")] == ["ccc.md"]
    vault.close()


def test_files_stored_long_before_are_not_hashed_again(tmp_path: Path) -> None:
    """Outside the racy second a refresh trusts mtime and size (that is its speed)."""
    import os

    from studykb.vault import Vault

    note = tmp_path / "a.md"
    note.write_text("[[bbb]]\n", encoding="utf-8")
    old = note.stat().st_mtime_ns - 3600 * 10**9
    os.utime(note, ns=(old, old))
    vault = Vault.open(tmp_path)
    vault.refresh()
    note.write_text("[[ccc]]\n", encoding="utf-8")
    os.utime(note, ns=(old, old))
    assert vault.refresh().modified == []
    vault.close()
