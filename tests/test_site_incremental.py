"""``studykb site`` after an edit makes again only the pages whose inputs changed
(:mod:`studykb.web.site_inputs`: the digest of each page's inputs in the manifest), and
what it writes is what a build from scratch writes."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from studykb.session import Session
from studykb.web import site
from studykb.web.links import page_file, plan_file
from studykb.web.site_output import MANIFEST

pytest.importorskip("jinja2")

EDITED = "notes/cs336-summary.md"


def _build(root: Path, out: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, set[str]]:
    """Build in this process (one worker), noting the pages rendered."""
    from studykb.runtime import pools

    made: set[str] = set()
    real: Callable[..., str] = site.render

    def render(*args: Any, **kwargs: Any) -> str:
        made.add(kwargs["path"])
        return real(*args, **kwargs)

    monkeypatch.setattr(site, "render", render)
    monkeypatch.setattr(pools, "cores", lambda: 1)
    kb = Session.open(root)
    kb.refresh()
    return site.build_site(kb, out), made


def _files(out: Path) -> dict[str, bytes]:
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and p.name != MANIFEST
    }


def _pages_of(kb: Session, key: str) -> set[str]:
    doc = kb.documents()[key]
    return {page_file(key), *([plan_file(key)] if doc.type == "topic" else [])}


def _neighbours(kb: Session, key: str) -> set[str]:
    """The documents whose pages show ``key``'s file: it links to them or they to it."""
    doc = kb.documents()[key]
    out = {f.target for f in kb.outgoing(doc) if f.target}
    out |= {b.ref.source for b in kb.backlinks(doc)}
    return {k.split("#", 1)[0] if k not in kb.documents() else k for k in out}


def test_an_edit_makes_again_only_the_pages_it_changes(
    bundled: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "vault"
    for name in ("notes", "courses"):
        shutil.copytree(bundled / name, root / name, ignore=shutil.ignore_patterns(".studykb"))
    shutil.copy(bundled / "studykb.toml", root / "studykb.toml")
    out = tmp_path / "site"
    first, made = _build(root, out, monkeypatch)
    kb = Session.open(root)
    kb.refresh()
    before = {s.key: s for s in kb.sidebars()}
    links_before = _neighbours(kb, EDITED)
    old = _files(out)
    assert made == doc_pages(out) and len(made) == first.pages - len(INDEX_PAGES)

    note = root / EDITED
    note.write_text(
        note.read_text(encoding="utf-8") + "\nA new line on [[kv-cache-serving-digest]].\n",
        encoding="utf-8",
    )
    again, made = _build(root, out, monkeypatch)
    kb = Session.open(root)
    kb.refresh()
    after = {s.key: s for s in kb.sidebars()}
    changed_lists = {k for k in after if before.get(k) != after[k]}
    shown = {EDITED} | changed_lists | links_before | _neighbours(kb, EDITED)
    expected = set().union(*(_pages_of(kb, k) for k in shown if k in kb.documents()))
    expected &= doc_pages(out)
    assert page_file(EDITED) in made
    assert made <= expected  # that page, the changed lists, the linked pages: no other
    assert len(made) < again.pages // 4

    new = _files(out)
    assert set(again.written) == {p for p in new if old.get(p) != new[p]}
    # of those, only the pages whose bytes differ are made: not the pages whose
    # backlink from the note quotes the same line, nor a list whose scores alone moved
    assert made == {p for p in doc_pages(out) if old.get(p) != new[p]}
    assert len(expected - made) > 2  # (there are such pages)
    scratch = tmp_path / "scratch"
    _build(root, scratch, monkeypatch)
    assert _files(scratch) == new  # the same site as a build from scratch


#: The list pages, made in a process of their own (not counted here).
INDEX_PAGES = {
    f"{p}index.html"
    for p in ("", "topics/", "lists/", "courses/", "search/", "graph/", "progress/")
}


def doc_pages(out: Path) -> set[str]:
    """The pages of documents (and topics' plans) in the site at ``out``."""
    return {p.relative_to(out).as_posix() for p in out.rglob("*.html")} - INDEX_PAGES


def test_a_page_changed_by_hand_is_made_again(
    bundled: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "vault"
    shutil.copytree(bundled / "notes", root / "notes", ignore=shutil.ignore_patterns(".studykb"))
    shutil.copy(bundled / "studykb.toml", root / "studykb.toml")
    out = tmp_path / "site"
    _build(root, out, monkeypatch)
    page = out / page_file(EDITED)
    page.write_bytes(page.read_bytes() + b"<!-- mine -->")
    other = root / "notes/gpu-infra-ops-digest.md"
    other.write_text(other.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    _built, made = _build(root, out, monkeypatch)
    assert page_file(EDITED) in made
    scratch = tmp_path / "scratch"
    _build(root, scratch, monkeypatch)
    assert _files(scratch) == _files(out)


def test_after_edits_only_the_lists_that_may_change_are_ranked(
    bundled: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The site ranks again the documents whose scores may differ (read off the engine
    before and after, :mod:`studykb.related.changes`) and keeps the others' lists; after
    each of several edits its pages are those of a site made from scratch."""
    root = tmp_path / "vault"
    for name in ("notes", "courses"):
        shutil.copytree(bundled / name, root / name, ignore=shutil.ignore_patterns(".studykb"))
    shutil.copy(bundled / "studykb.toml", root / "studykb.toml")
    out = tmp_path / "site"
    ranked: list[str] = []
    real = Session.sidebars

    def counted(self: Session, keys: list[str] | None = None, options: Any = None) -> Any:
        ranked.extend(keys or [])
        return real(self, keys, options)

    monkeypatch.setattr(Session, "sidebars", counted)
    _build(root, out, monkeypatch)
    everyone = len(set(ranked))
    note = root / EDITED
    other = root / "notes/gpu-infra-ops-digest.md"
    edits = [
        (note, "\nA new line on [[kv-cache-serving-digest]].\n"),  # a link, new words
        (note, "\nPlain words about paged attention and batching.\n"),  # words only
        (other, "\nNames KV cache serving and speculative decoding in passing.\n"),
    ]
    for n, (path, line) in enumerate(edits):
        path.write_text(path.read_text(encoding="utf-8") + line, encoding="utf-8")
        ranked.clear()
        _build(root, out, monkeypatch)
        assert 0 < len(set(ranked)) < everyone // 2, (n, len(set(ranked)), everyone)
        scratch = tmp_path / f"scratch{n}"  # a new folder: every list, every page
        ranked.clear()
        _build(root, scratch, monkeypatch)
        assert len(set(ranked)) == everyone
        assert _files(scratch) == _files(out), n


def test_after_each_kind_of_edit_the_site_is_the_scratch_site(
    bundled: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A body line with a link, the line taken out again (a backlink gone), a title, a
    new note, a deleted note: after each, every byte is a scratch site's; after the body
    edits only a few pages' inputs are read (:mod:`studykb.web.site_changes`) and the
    list pages are not made again."""
    from studykb.web import site_inputs

    root = tmp_path / "vault"
    for name in ("notes", "courses"):
        shutil.copytree(bundled / name, root / name, ignore=shutil.ignore_patterns(".studykb"))
    shutil.copy(bundled / "studykb.toml", root / "studykb.toml")
    out = tmp_path / "site"
    read: list[str] = []
    real = site_inputs.page_inputs

    def counted(pages: Any, doc: Any, *args: Any) -> str:
        read.append(doc.key)
        return real(pages, doc, *args)

    monkeypatch.setattr(site_inputs, "page_inputs", counted)
    first, _made = _build(root, out, monkeypatch)
    everyone = len(read)
    read.clear()
    _again, made = _build(root, out, monkeypatch)  # nothing changed: nothing made
    assert not made and not read
    note = root / EDITED
    original = note.read_text(encoding="utf-8")
    other = root / "notes/gpu-infra-ops-digest.md"
    linked = "\nA new line on [[kv-cache-serving-digest]] and [[gpu-infra-ops-digest]].\n"
    edits: list[tuple[str, Callable[[], None], bool]] = [
        ("a body line with links", lambda: note.write_text(original + linked), True),
        ("the line taken out", lambda: note.write_text(original), True),
        (
            "a title",
            lambda: other.write_text(
                other.read_text(encoding="utf-8").replace(
                    'title: "GPU 基础设施动态', 'title: "GPU 基础设施新动态', 1
                )
            ),
            False,
        ),
        ("a new note", lambda: (root / "notes/new-one.md").write_text(NEW_NOTE), False),
        ("a deleted note", lambda: (root / "notes/new-one.md").unlink(), False),
    ]
    for n, (what, edit, few) in enumerate(edits):
        edit()
        read.clear()
        _built, made = _build(root, out, monkeypatch)
        if few:
            assert 0 < len(set(read)) < everyone // 2, (what, len(set(read)), everyone)
            assert not made & INDEX_PAGES, what  # kept: what they are made from is the same
        else:
            assert len(read) == everyone + (what == "a new note"), what
        scratch = tmp_path / f"scratch{n}"
        _build(root, scratch, monkeypatch)
        assert _files(scratch) == _files(out), what


NEW_NOTE = """---
title: A new note on KV cache serving
tags: [gpu-sharing]
---

It builds on [[cs336-summary]] and [[kv-cache-serving-digest]].
"""


def test_after_an_edit_the_site_is_the_one_made_with_tables_made_afresh(
    bundled: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After body edits (words and a link to a note, which keep the plan tables; then a
    link to a topic, which makes them again) the site is, byte for byte, a scratch
    site's made with the plan tables made afresh from the state (none kept)."""
    from studykb.study import plans

    root = tmp_path / "vault"
    for name in ("notes", "courses"):
        shutil.copytree(bundled / name, root / name, ignore=shutil.ignore_patterns(".studykb"))
    shutil.copy(bundled / "studykb.toml", root / "studykb.toml")
    out = tmp_path / "site"
    _build(root, out, monkeypatch)
    note = root / EDITED
    lines = ["\nA new line on [[kv-cache-serving-digest]].\n", "\nIt builds on [[kv-cache]].\n"]
    for n, line in enumerate(lines):
        note.write_text(note.read_text(encoding="utf-8") + line, encoding="utf-8")
        _built, made = _build(root, out, monkeypatch)
        assert page_file(EDITED) in made
        if n == 0:  # the plan tables and what every page shares are the same
            assert len(made) < len(doc_pages(out)) // 4
        with monkeypatch.context() as afresh:
            afresh.setattr(plans.Tables, "update", lambda *_args: None)
            _build(root, tmp_path / f"scratch{n}", monkeypatch)
        assert _files(tmp_path / f"scratch{n}") == _files(out), line


def test_after_an_edit_of_a_note_done_the_status_page_is_the_scratch_sites(
    bundled: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ "Recently finished" orders the documents done without a date by their files'
    modification times: an edit of one moves it up, so the status page is made again
    (what every page shares, kept, does not name the times)."""
    import os

    root = tmp_path / "vault"
    for name in ("notes", "courses"):
        shutil.copytree(bundled / name, root / name, ignore=shutil.ignore_patterns(".studykb"))
    shutil.copy(bundled / "studykb.toml", root / "studykb.toml")
    later = root / "notes/done-later.md"
    later.write_text("---\ntitle: Done later\nstatus: done\n---\n\nRead.\n", encoding="utf-8")
    os.utime(root / EDITED, (1_000_000_000, 1_000_000_000))  # done long ago
    out = tmp_path / "site"
    _build(root, out, monkeypatch)
    before = _finished_section(out)
    assert b"done-later.html" in before and b"cs336-summary.html" not in before  # too old
    note = root / EDITED
    note.write_text(note.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    _build(root, out, monkeypatch)
    scratch = tmp_path / "scratch"
    _build(root, scratch, monkeypatch)
    assert _files(scratch) == _files(out)
    after = _finished_section(out)
    assert after.index(b"cs336-summary.html") < after.index(b"done-later.html")  # edited: first


def _finished_section(out: Path) -> bytes:
    """The status page's "Recently finished" section."""
    html = (out / "index.html").read_bytes()
    start = html.index(b'id="finished-h"')
    return html[start : html.index(b"</section>", start)]
