"""A Zola site: studykb's keys live under ``[extra]``, Zola's at the top.

Zola reads a page's front matter into ``PageFrontMatter`` and a section's (``_index.md``)
into ``SectionFrontMatter``; a section refuses any key it does not know (``zola build``
fails with "unknown field"), a page drops it. So studykb reads and writes its own keys
(``status``, ``covers``, ``requires``, ``link``, units...) under ``[extra]``, tags under a
page's ``[taxonomies]``, and ``check`` warns (``site-clash``) of a top-level key that
Zola refuses or drops. There is no ``zola`` binary here: the front matter studykb writes
is held to Zola's own lists of keys, copied below from its source.
"""

from __future__ import annotations

import datetime as dt
import shutil
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from studykb.cli.app import cli, prepare
from studykb.parse import zola_keys
from studykb.parse.frontmatter import split
from studykb.study.mark import set_status
from studykb.vault import Vault

prepare()
SITE = Path(__file__).parent / "fixtures" / "zola_study"
DAY = dt.date(2026, 11, 30)

# Zola's lists, from getzola/zola at commit b2242262b1df3e238b0b70dce3ae3a5bf3a042e9:
# components/content/src/front_matter/page.rs, the fields of PageFrontMatter that serde
# reads (the skip_deserializing ones, updated_datetime, datetime and the tuples, left out).
ZOLA_PAGE_KEYS = {
    "title",
    "description",
    "updated",
    "date",
    "draft",
    "render",
    "slug",
    "path",
    "taxonomies",
    "weight",
    "authors",
    "aliases",
    "template",
    "in_search_index",
    "extra",
}
# components/content/src/front_matter/section.rs, SectionFrontMatter, which has
# #[serde(default, deny_unknown_fields)]: any other key fails the build.
ZOLA_SECTION_KEYS = {
    "title",
    "description",
    "sort_by",
    "weight",
    "draft",
    "template",
    "paginate_by",
    "paginate_reversed",
    "paginate_path",
    "insert_anchor_links",
    "render",
    "redirect_to",
    "in_search_index",
    "transparent",
    "page_template",
    "aliases",
    "generate_feeds",
    "extra",
}


def zola_accepts(path: str, meta: dict[str, Any]) -> None:
    """Fail unless Zola would read ``meta`` as the front matter of the file at ``path``:
    only its keys at the top, tags only in a page's ``[taxonomies]``."""
    allowed = ZOLA_SECTION_KEYS if path.endswith("_index.md") else ZOLA_PAGE_KEYS
    assert set(meta) <= allowed, (path, sorted(set(meta) - allowed))
    for terms in (meta.get("taxonomies") or {}).values():
        assert isinstance(terms, list) and all(isinstance(t, str) and t for t in terms)
    assert isinstance(meta.get("extra", {}), dict)
    assert all(isinstance(a, str) for a in meta.get("authors", []))


def raw_meta(path: Path) -> tuple[str, dict[str, Any]]:
    """(format, mapping) of a file's front matter as Zola's parsers read it."""
    parts = split(path.read_text("utf-8"))
    data = (
        tomllib.loads(parts.fm_text) if parts.fm_format == "toml" else yaml.safe_load(parts.fm_text)
    )
    return parts.fm_format, data or {}


@pytest.fixture
def site(tmp_path: Path) -> Path:
    root = tmp_path / "site"
    shutil.copytree(SITE, root)
    return root


def run(root: Path, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--vault", str(root), *args])
    assert result.exit_code == 0, result.output
    return result.output


def opened(root: Path) -> Vault:
    vault = Vault.open(root)
    vault.refresh()
    return vault


def test_studykb_keeps_zolas_lists() -> None:
    assert set(zola_keys.PAGE_KEYS) == ZOLA_PAGE_KEYS
    assert set(zola_keys.SECTION_KEYS) == ZOLA_SECTION_KEYS


def test_the_fixture_is_what_zola_reads(site: Path) -> None:
    for path in sorted((site / "content").rglob("*.md")):
        zola_accepts(path.name, raw_meta(path)[1])


def test_keys_are_read_from_extra_and_taxonomies(site: Path) -> None:
    vault = opened(site)
    try:
        assert vault.site.generator == "zola"
        docs = vault.documents()
        topic = docs["content/notes/topics/pipeline-parallelism.md"]
        assert topic.type == "topic" and topic.level == 3
        assert topic.tags == ("parallelism",) and topic.aliases == ("流水线并行",)
        entry = docs["content/notes/entries/gpipe.md"]  # YAML front matter, extra: block
        assert (entry.status, entry.kind) == ("reading", "paper")
        assert entry.url == "https://arxiv.org/abs/1811.06965"
        assert entry.covers == ("pipeline-parallelism",)
        basics = docs["content/notes/basics.md"]
        assert (basics.status, basics.done, basics.level) == ("done", "2024-03-02", 1)
        assert docs["content/notes/_index.md"].tags == ("parallelism",)  # a section's extra
        assert docs["content/_index.md"].type == "list"
        course = docs["content/courses/cs336/_index.md"]
        assert course.type == "course" and course.url == "https://stanford-cs336.github.io/"
        a2 = docs["content/courses/cs336/_index.md#a2"]
        assert a2.type == "unit" and a2.tags == ("pipeline-parallelism",)
        src = "content/notes/topics/pipeline-parallelism.md"
        refs = sorted(
            (link.ref.kind, link.ref.line, link.target)
            for link in vault.outgoing(src)
            if link.ref.kind != "link"
        )
        # each reference at the line of [extra] that holds it, once, resolved
        assert refs == [
            ("related", 16, "content/notes/basics.md"),
            ("requires", 13, "content/notes/basics.md"),
            ("requires", 14, "content/notes/entries/gpipe.md"),
        ]
        assert not vault.problems()
    finally:
        vault.close()
    assert "no problems" in run(site, "check")


def test_check_warns_of_keys_zola_refuses_or_drops(site: Path) -> None:
    content = site / "content"
    (content / "courses" / "cs336" / "_index.md").write_text(
        '+++\ntitle = "CS336"\nstatus = "todo"\ntype = "course"\n+++\n', "utf-8"
    )
    (content / "notes" / "old.md").write_text(
        '+++\ntitle = "Old style"\nstatus = "done"\nauthors = "Ann"\nweight = 1\n+++\n', "utf-8"
    )
    (content / "notes" / "bare.md").write_text("# No front matter\n", "utf-8")
    vault = opened(site)
    try:
        clashes = {
            (p.path, p.line, p.message.split(":")[0])
            for p in vault.problems()
            if p.code == "site-clash"
        }
        status = vault.documents()["content/notes/old.md"].status
    finally:
        vault.close()
    section = "zola build fails on this section"
    assert clashes == {
        ("content/courses/cs336/_index.md", 3, section),
        ("content/courses/cs336/_index.md", 4, section),
        (
            "content/notes/old.md",
            3,
            "Zola ignores 'status' at the top level of a page (its "
            "templates never see it); put it under [extra]",
        ),
        ("content/notes/old.md", 4, "zola build fails on 'authors'"),
        (
            "content/notes/bare.md",
            1,
            'zola build fails on a file without front matter ("Did '
            'you forget to add `+++` or `---`?")',
        ),
    }
    assert status == "done"  # still read: the note says it


@pytest.mark.parametrize("kind", ["note", "entry", "topic", "list", "course"])
def test_new_writes_what_zola_reads(site: Path, kind: str) -> None:
    tag = "pipeline-parallelism"  # a topic of the site, so an entry's covers is checked
    args = ["new", kind, "Tensor parallelism", "--tag", tag, "--requires", "basics"]
    if kind in ("entry", "course"):
        args += ["--url", "https://example.org/tp"]
    out = run(site, *args)
    rel = out.strip().splitlines()[-1].split()[-1]
    path = site / rel if not Path(rel).is_absolute() else Path(rel)
    fmt, meta = raw_meta(path)
    zola_accepts(path.name, meta)
    extra = meta["extra"]
    assert meta["title"] == "Tensor parallelism" and extra["id"] == "tensor-parallelism"
    assert extra["requires"] == ["basics"]
    if kind == "entry":
        assert extra["covers"] == [tag] and extra["link"] == "https://example.org/tp"
    else:
        assert meta["taxonomies"] == {"tags": [tag]}
    vault = opened(site)
    try:
        doc = vault.documents()[path.relative_to(site).as_posix()]
        assert doc.type == kind and doc.id == "tensor-parallelism"
        assert not [p for p in vault.problems() if p.path == doc.path]
    finally:
        vault.close()
    assert fmt == "yaml"  # the template's own format, with its comments
    if kind == "entry":
        assert "  # kind: article" in path.read_text("utf-8")


def test_new_from_a_toml_template_puts_keys_in_extra(site: Path) -> None:
    templates = site / ".studykb-templates"
    templates.mkdir()
    (templates / "note.md").write_text(
        '+++\ntitle = {{title}}\n# why it matters\nstatus = "todo"\ntags = {{tags}}\n'
        'date = {{date}}\n\n[extra]\nmood = "calm"\n+++\n\n# {{title}}\n',
        "utf-8",
    )
    out = run(site, "new", "note", "Zero", "--tag", "memory")
    path = site / out.strip().splitlines()[-1].split()[-1]
    text = path.read_text("utf-8")
    fmt, meta = raw_meta(path)
    zola_accepts(path.name, meta)
    assert fmt == "toml"
    assert meta["extra"] == {"mood": "calm", "status": "todo", "id": "zero"}
    assert meta["taxonomies"] == {"tags": ["memory"]}
    assert '[extra]\n# why it matters\nstatus = "todo"\n' in text


def test_mark_writes_under_extra_and_keeps_every_other_byte(site: Path) -> None:
    page = site / "content" / "notes" / "entries" / "gpipe.md"
    before = page.read_text("utf-8")
    run(site, "mark", "gpipe", "done")
    after = page.read_text("utf-8")
    today = dt.date.today().isoformat()
    assert after == before.replace("  status: reading\n", f"  status: done\n  done: {today}\n")
    run(site, "mark", "gpipe", "reading")
    assert page.read_text("utf-8") == before
    # a section without [extra] gets one, and Zola still reads it
    notes = site / "content" / "notes" / "_index.md"
    notes.write_text('+++\ntitle = "Notes"\nsort_by = "weight"\n+++\nBody\n', "utf-8")
    run(site, "mark", "notes", "reading")
    assert notes.read_text("utf-8") == (
        '+++\ntitle = "Notes"\nsort_by = "weight"\n[extra]\nstatus = "reading"\n+++\nBody\n'
    )
    zola_accepts("_index.md", raw_meta(notes)[1])


def test_mark_a_unit_of_a_zola_course(site: Path) -> None:
    course = site / "content" / "courses" / "cs336" / "_index.md"
    before = course.read_text("utf-8")
    run(site, "mark", "cs336#a2", "done")
    after = course.read_text("utf-8")
    today = dt.date.today().isoformat()
    assert after == before.replace(
        'tags = ["pipeline-parallelism"]\n',
        f'tags = ["pipeline-parallelism"]\nstatus = "done"\ndone = {today}\n',
    )
    _fmt, meta = raw_meta(course)
    zola_accepts("_index.md", meta)
    assert meta["extra"]["units"][1]["status"] == "done"


def test_mark_moves_a_top_level_status_under_extra() -> None:
    raw = b'+++\ntitle = "Old"\nstatus = "todo"\n\n[extra]\nmath = true\n+++\nBody\n'
    new = set_status(raw, "done", today=DAY, zola=True)
    assert new == (
        b'+++\ntitle = "Old"\n\n[extra]\nmath = true\nstatus = "done"\ndone = 2026-11-30\n'
        b"+++\nBody\n"
    )
    meta = tomllib.loads(split(new.decode()).fm_text)
    zola_accepts("old.md", meta)
    # outside Zola the same call keeps it where it is
    assert set_status(raw, "done", today=DAY) == raw.replace(
        b'status = "todo"\n', b'status = "done"\ndone = 2026-11-30\n'
    )


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        (  # YAML without extra: the block is made
            b"---\ntitle: T\n---\nx\n",
            b"---\ntitle: T\nextra:\n  status: done\n  done: 2026-11-30\n---\nx\n",
        ),
        (  # YAML extra written in flow style: the round trip keeps it a flow mapping
            b"---\ntitle: T\nextra: {math: true}\n---\nx\n",
            b"---\ntitle: T\nextra: {math: true, status: done, done: 2026-11-30}\n---\nx\n",
        ),
        (  # a sub-table after [extra]: the keys go above it, into [extra] itself
            b'+++\ntitle = "T"\n[extra]\nmath = true\n[extra.social]\nx = 1\n+++\n',
            b'+++\ntitle = "T"\n[extra]\nmath = true\nstatus = "done"\ndone = 2026-11-30\n'
            b"[extra.social]\nx = 1\n+++\n",
        ),
        (  # no front matter at all: YAML with an extra block
            b"# T\n",
            b"---\nextra:\n  status: done\n  done: 2026-11-30\n---\n# T\n",
        ),
    ],
)
def test_mark_in_extra_shapes(raw: bytes, want: bytes) -> None:
    assert set_status(raw, "done", today=DAY, zola=True) == want


def test_mv_rewrites_references_inside_extra(site: Path) -> None:
    run(site, "mv", "basics", "foundations")
    topic = site / "content" / "notes" / "topics" / "pipeline-parallelism.md"
    _fmt, meta = raw_meta(topic)
    assert meta["extra"]["requires"][0] == "foundations"
    assert meta["extra"]["related"] == ["[[foundations#Data parallelism]]"]
    entry = site / "content" / "notes" / "entries" / "gpipe.md"
    assert raw_meta(entry)[1]["extra"]["requires"] == ["foundations"]
    # a topic's new id in covers under [extra] and in a unit's tags under [[extra.units]]
    run(site, "mv", "pipeline-parallelism", "pipelining")
    assert raw_meta(entry)[1]["extra"]["covers"] == ["pipelining"]
    course = site / "content" / "courses" / "cs336" / "_index.md"
    assert raw_meta(course)[1]["extra"]["units"][1]["tags"] == ["pipelining"]
    for path in sorted((site / "content").rglob("*.md")):
        zola_accepts(path.name, raw_meta(path)[1])
    assert "no problems" in run(site, "check")
