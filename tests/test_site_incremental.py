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
    assert made == expected  # that page, the changed lists, the linked pages: no other
    assert len(made) < again.pages // 4

    new = _files(out)
    assert set(again.written) == {p for p in new if old.get(p) != new[p]}
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
