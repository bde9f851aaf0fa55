"""What ``studykb site`` makes beside the pages (:mod:`studykb.web.site_beside`): started
before what every page shares is known (a site from scratch), it writes and records
exactly what it does when started after; and the static search index's terms, cut
once per run of Chinese (:class:`studykb.search.portable.HanTerms`), are the
analyser's own."""

from __future__ import annotations

import json
import os
import re
import shutil
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from studykb.search.portable import HanTerms, terms
from studykb.session import Session
from studykb.text.analysis import Analyser
from studykb.text.segment import HAN
from studykb.web import site, site_beside
from studykb.web.site_output import MANIFEST

TEXTS = [
    "",
    "plain English words, Straße and café; naïve_x 42 3.14 ÉCOLE",
    "数据并行和张量并行是分布式训练的两种方式",
    "PostgreSQL的VACUUM会回收死元组，时幻读不是词典里的词",
    "ｆｕｌｌｗｉｄｔｈ ＡＢＣ１２３ 与 半角 mixed中文English混排",
    "Кириллица и 日本語の文 and Ελληνικά λέξεις 数据并行数据并行",
    "tabs\tand\nnew lines 大语言模型推理服务 kv-cache 服务",
]


def _analyser_terms(text: str) -> Counter[str]:
    """The terms as the index read them before: Chinese by :meth:`Analyser.tokens`, the
    rest as words of letters, digits and ``_`` that are not Han."""
    analyser, found = Analyser(), []
    words = re.compile(rf"[^\W{HAN}]+")
    for n, part in enumerate(re.split(f"([{HAN}]+)", unicodedata.normalize("NFKC", text))):
        if n % 2:
            found.extend(t.text for t in analyser.tokens(part))
        elif part:
            found.extend(map(str.lower, words.findall(part)))
    return Counter(found)


def test_han_terms_are_the_analysers_tokens() -> None:
    han = HanTerms()
    for text in [*TEXTS, " ".join(TEXTS)]:
        got, want = terms(text, han), _analyser_terms(text)
        assert list(got.items()) == list(want.items()), text  # the same order too
    assert "幻读" in terms(TEXTS[3], han)  # a piece of a word not in the dictionary
    run = "时幻读不是词典里的词"
    assert han.of(run) is han.of(run) and "时幻读" in han.of(run)  # cut once


def _files(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_the_process_started_early_records_what_a_late_one_does(
    bundled: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "vault"
    for name in ("notes", "courses"):
        shutil.copytree(bundled / name, root / name, ignore=shutil.ignore_patterns(".studykb"))
    shutil.copy(bundled / "studykb.toml", root / "studykb.toml")
    kb = Session.open(root)
    kb.refresh()
    started: list[Any] = []
    early = site._beside_from_scratch

    def spy(work: Any) -> Any:
        started.append(early(work))
        return started[-1]

    monkeypatch.setattr(site, "_beside_from_scratch", spy)
    monkeypatch.setattr(site.pools, "beside_helps", lambda: True)
    site.build_site(kb, tmp_path / "early")
    assert started and started[0] is not None  # started before what pages share is known
    monkeypatch.setattr(site, "_beside_from_scratch", lambda work: None)
    site.build_site(kb, tmp_path / "late")
    early_files, late_files = _files(tmp_path / "early"), _files(tmp_path / "late")
    assert early_files == late_files
    manifest = json.loads(early_files[MANIFEST])
    assert site_beside.SHARED not in early_files[MANIFEST].decode()
    common = manifest["record"]["common"]
    assert common
    # a list page made from what every page shares is recorded with its digest, so an
    # edit that leaves it alone keeps it
    assert common in json.dumps(manifest["inputs"]["topics/index.html"])


def test_the_status_page_is_rendered_again_only_when_its_context_changed(
    bundled: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The status and progress pages' contexts are made every time (they read what no
    recorded digest names), but a page is rendered again only when its context (or the
    site's code) differs from the last site's; what is written is the scratch site."""
    root = tmp_path / "vault"
    for name in ("notes", "courses"):
        shutil.copytree(bundled / name, root / name, ignore=shutil.ignore_patterns(".studykb"))
    shutil.copy(bundled / "studykb.toml", root / "studykb.toml")
    monkeypatch.setattr(site.pools, "can_fork", lambda: False)  # beside: in this process
    made: list[str] = []
    real = site_beside.render

    def render(*args: Any, **kwargs: Any) -> str:
        made.append(kwargs["path"])
        return str(real(*args, **kwargs))

    monkeypatch.setattr(site_beside, "render", render)
    out = tmp_path / "site"

    def build() -> set[str]:
        made.clear()
        kb = Session.open(root)
        kb.refresh()
        site.build_site(kb, out)
        return set(made)

    assert build() >= site_beside.MADE_EVERY_TIME
    note = root / "notes/cs336-summary.md"
    note.write_text(note.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    status_before = (out / "index.html").read_bytes()
    assert not build() & site_beside.MADE_EVERY_TIME  # the same contexts: kept
    assert (out / "index.html").read_bytes() == status_before
    scratch = tmp_path / "scratch"
    site.build_site(Session.open(root), scratch)
    assert _files(scratch) == _files(out)
    # a note marked done moves into "Recently finished": the status page is made again
    done = root / "notes/done-now.md"
    done.write_text("---\ntitle: Done now\nstatus: done\n---\n\nRead.\n", encoding="utf-8")
    assert "index.html" in build()
    assert b"done-now.html" in (out / "index.html").read_bytes()
    shutil.rmtree(scratch)
    site.build_site(Session.open(root), scratch)
    assert (scratch / "index.html").read_bytes() == (out / "index.html").read_bytes()


def test_an_edit_again_finds_its_chinese_cut_already(
    bundled: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The search index updated for an edit cuts the note's Chinese with the cuts the
    cache remembers and keeps those it made: editing the same note again never calls
    rjieba; the site is still the scratch site."""
    from studykb.text import segment

    root = tmp_path / "vault"
    for name in ("notes", "courses"):
        shutil.copytree(bundled / name, root / name, ignore=shutil.ignore_patterns(".studykb"))
    shutil.copy(bundled / "studykb.toml", root / "studykb.toml")
    monkeypatch.setattr(site.pools, "can_fork", lambda: False)  # beside: in this process
    cut: list[str] = []
    real = segment.jieba

    class Counted:
        def cut(self, run: str) -> Any:
            cut.append(run)
            return real().cut(run)

        def __getattr__(self, name: str) -> Any:
            return getattr(real(), name)

    monkeypatch.setattr(segment, "jieba", Counted)
    out = tmp_path / "site"
    note = root / "notes/deepinfer-part1.md"
    assert segment.has_han(note.read_text(encoding="utf-8"))

    def edit_and_build(line: str) -> None:
        note.write_text(note.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")
        cut.clear()
        kb = Session.open(root)
        kb.refresh()
        site.build_site(kb, out)

    edit_and_build("")
    edit_and_build("One more line.")
    assert cut  # the note's runs, cut once
    edit_and_build("And one more.")
    assert not cut  # remembered
    scratch = tmp_path / "scratch"
    site.build_site(Session.open(root), scratch)
    assert (scratch / "search-index.json").read_bytes() == (out / "search-index.json").read_bytes()
