"""Answers an expert signs (issue 26), on a small vault of this file's own: plans for
documents built on ideas, readings ranked and never dropped, names typed loosely, what
comes after, and one plan model behind before, the sidebar, the web page and topic pages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from studykb.cli.app import cli, prepare

prepare()

FILES = {
    "studykb.toml": "",
    "notes/topics/basics.md": "---\nid: basics\ntitle: Basics\nlevel: 1\n---\nThe basics.\n",
    "notes/topics/kv-cache.md": (
        "---\nid: kv-cache\ntitle: KV Cache\naliases: [KV 缓存]\nlevel: 3\n"
        "requires:\n  - {ref: basics, reason: the cache stores what basics computes}\n"
        "---\nKeys and values kept between decoding steps.\n"
    ),
    "notes/topics/paging.md": (
        "---\nid: paging\ntitle: PagedAttention\naliases: [显存不够]\nlevel: 4\n"
        "requires:\n  - {ref: kv-cache, reason: paging lays out the KV cache}\n"
        "---\nThe cache in fixed-size blocks.\n"
    ),
    "notes/topics/ctx.md": (
        "---\nid: ctx\ntitle: Context Parallelism (Sequence Parallelism for Long Contexts)\n"
        "aliases: [显存不够]\nlevel: 4\nrequires: [basics]\n---\nSplit the sequence.\n"
    ),
    "notes/topics/cuda-basics.md": (
        "---\nid: cuda-basics\ntitle: CUDA Programming Basics\n"
        "aliases: [CUDA programming, CUDA 基础]\nlevel: 2\n---\nKernels, blocks and warps.\n"
    ),
    "notes/topics/graphs.md": (
        "---\nid: graphs\ntitle: CUDA Graphs\nlevel: 3\nrequires: [cuda-basics]\n"
        "---\nRecord launches.\n"
    ),
    "notes/entries/engine-repo.md": (
        "---\nid: engine-repo\ntitle: acme/engine\nkind: repo\nlevel: 3\ncovers: []\n"
        "tags: [paging, kv-cache]\n---\nAn engine's code; read the paper and the topics first.\n"
    ),
    "notes/entries/engine-news.md": (
        "---\nid: engine-news\ntitle: Engine 2.0 released\nkind: news\nlevel: 3\n"
        "tags: [paging]\n---\nA release.\n"
    ),
    "notes/entries/intro-article.md": (
        "---\nid: intro-article\ntitle: Serving for everyone\nkind: article\nlevel: 1\n"
        "tags: [paging]\n---\nAn overview.\n"
    ),
    "notes/entries/needs-nothing.md": (
        "---\nid: needs-nothing\ntitle: A self-contained repo\nkind: repo\nlevel: 3\n"
        "tags: [kv-cache]\nrequires: []\n---\nStands alone.\n"
    ),
    "notes/entries/paging-paper.md": (
        "---\nid: paging-paper\ntitle: Efficient Memory for Serving with Paging\n"
        "aliases: [论文：分页（Engine）]\nkind: paper\nlevel: 4\ncovers: [paging]\n"
        "---\nThe paper.\n"
    ),
    "notes/entries/cache-post.md": (
        "---\nid: cache-post\ntitle: A KV cache from scratch\nkind: post\nlevel: 2\n"
        "covers: [kv-cache]\n---\nBuild one and measure it.\n"
    ),
    "notes/entries/cache-book.md": (
        "---\nid: cache-book\ntitle: The inference chapter\nkind: book\nlevel: 4\n"
        "covers: [kv-cache, ctx]\n---\nA chapter.\n"
    ),
    "notes/linker.md": "---\nid: linker\ntitle: My cache notes\n---\nBuilt on [[kv-cache]].\n",
    "courses/c.md": (
        "---\nid: c\ntitle: A course\nunits:\n"
        "  - id: only-title\n    title: Notes on the cache\n    covers: [kv-cache]\n"
        "  - id: u2\n    title: Paging\n    url: https://example.org/u2\n    covers: [paging]\n"
        "    requires: [only-title]\n---\nA course.\n"
    ),
}


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "v"
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def run(vault: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--vault", str(vault), *args])


def plan(vault: Path, *args: str) -> dict:
    result = run(vault, "before", *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def ids(steps: list[dict]) -> list[str]:
    return [s["id"] for s in steps]


# -- a plan for a document built on ideas is never empty ----------------------------------------
def test_a_repository_is_built_on_the_topics_it_is_tagged_with(vault: Path) -> None:
    data = plan(vault, "engine-repo")
    assert ids(data["steps"]) == ["basics", "kv-cache", "paging"]
    paging = data["steps"][2]
    assert [(n["id"], n["reason"]) for n in paging["needed_by"]] == [
        ("engine-repo", "it is about this topic")
    ]
    assert "has no prerequisites" not in run(vault, "before", "engine-repo").output


def test_what_links_to_a_topic_is_built_on_it(vault: Path) -> None:
    assert ids(plan(vault, "linker")["steps"]) == ["basics", "kv-cache"]


@pytest.mark.parametrize("doc", ["engine-news", "intro-article", "needs-nothing"])
def test_news_an_intro_and_an_empty_requires_need_nothing(vault: Path, doc: str) -> None:
    # news reports; a level-1 overview mentions a level-4 topic without assuming it;
    # requires: [] says so on purpose
    assert plan(vault, doc)["steps"] == []
    assert "has no prerequisites" in run(vault, "before", doc).output


def test_a_course_needs_what_its_units_need_from_outside_it(vault: Path) -> None:
    assert ids(plan(vault, "c")["steps"]) == ["basics"]


# -- readings: ranked, never dropped; nothing to read is never first ------------------------------
def test_a_post_is_ranked_and_a_unit_that_is_only_a_title_comes_last(vault: Path) -> None:
    shown = [r["id"] for r in plan(vault, "kv-cache")["target"]["recommended"]]
    assert shown == ["cache-book", "cache-post", "c#only-title"]


# -- an empty plan counts what it left out in the right words -----------------------------------
def test_an_empty_plan_tells_known_from_needed_only_through_it(vault: Path) -> None:
    topic = vault / "notes/topics/kv-cache.md"
    topic.write_text(topic.read_text().replace("level: 3\n", "level: 3\nstatus: done\n"))
    out = run(vault, "before", "paging").output
    assert (
        "Nothing to read first: 1 step you already know and 1 step only they need were "
        "skipped (--all shows them)." in out
    )


# -- names as people type them ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("typed", "found", "how"),
    [
        ("paged attention", "paging", "spacing"),
        ("Context Parallelism", "ctx", "parentheses"),
        ("KV caches", "kv-cache", "word forms"),
        ("engine paper", "paging-paper", "the paper of engine"),
        ("CUDA", "cuda-basics", "a longer name"),
    ],
)
def test_a_loose_name_is_read_and_said(vault: Path, typed: str, found: str, how: str) -> None:
    for command in ("before", "show", "related"):
        result = run(vault, command, typed, "--json")
        assert result.exit_code in ((0, 1) if command == "related" else (0,)), result.output
        data = json.loads(result.stdout)
        assert (data.get("target") or data)["id"] == found
        assert f"no document is named {typed!r}; read as" in result.stderr
        assert how in result.stderr


def test_a_longer_name_shows_what_else_fitted(vault: Path) -> None:
    result = run(vault, "before", "CUDA")
    said = "read as CUDA Programming Basics (cuda-basics, a longer name); also: graphs"
    assert said in result.stderr


def test_writers_take_only_exact_names(vault: Path) -> None:
    before = (vault / "notes/topics/paging.md").read_bytes()
    result = run(vault, "mark", "paged attention", "done")
    assert result.exit_code == 1
    assert (vault / "notes/topics/paging.md").read_bytes() == before


def test_ask_reads_the_whole_name_not_a_word_of_it(vault: Path) -> None:
    result = run(vault, "ask", "what should I read before paged attention", "--json")
    assert json.loads(result.stdout)["target"]["id"] == "paging"  # not Attention, not Basics


# -- after: what builds on what I know ----------------------------------------------------------
def test_after_lists_what_builds_on_it_ready_first(vault: Path) -> None:
    result = run(vault, "after", "kv-cache", "--json")
    assert result.exit_code == 0, result.output
    onward = json.loads(result.stdout)["after"]
    assert onward[0]["id"] == "paging" and onward[0]["ready"]
    repo = next(o for o in onward if o["id"] == "engine-repo")
    assert repo["waits_on"] == ["paging"]
    asked = run(vault, "ask", "I know the KV cache, what next?", "--json")
    assert json.loads(asked.stdout)["after"][0]["id"] == "paging"
    text = run(vault, "after", "kv-cache").output
    assert "ready: everything else it needs is known" in text
    assert "also needs PagedAttention" in text


# -- one plan model: sidebar, web page, topic page, search ---------------------------------------
def test_the_sidebar_before_this_is_the_first_level_of_the_plan(vault: Path) -> None:
    from studykb.session import Session

    with Session.open(vault) as kb:
        kb.refresh()
        for sb in kb.sidebars():
            doc = kb.document(sb.key)
            assert doc is not None
            first = {s.doc.key for s in kb.plan(doc, include_known=True, depth=1).steps}
            assert {n.key for n in sb.before} == first, sb.id


def test_the_web_plan_lists_what_it_counts_in_the_words_of_before(vault: Path) -> None:
    from starlette.testclient import TestClient

    from studykb.session import Session
    from studykb.web.app import create_app

    with Session.open(vault) as kb:
        kb.refresh()
        app = create_app(kb, refresh=False, token="t" * 32)
        with TestClient(app, base_url="http://127.0.0.1:8765") as client:
            html = client.get("/plan/notes/topics/paging.html").text
    assert "2 steps, 5 readings." in html
    assert html.count("<li data-item") == 5  # it lists every reading it counts
    assert "Then PagedAttention itself" in html
    assert "Efficient Memory for Serving with Paging" in html


def test_covered_by_lists_only_what_teaches_the_topic(vault: Path) -> None:
    page = json.loads(run(vault, "topic", "paging", "--json").stdout)
    covering = {d["id"] for g in page["levels"] for d in g["documents"]}
    assert covering == {"paging-paper"}
    assert {"engine-repo", "engine-news", "intro-article"} <= {n["id"] for n in page["mentions"]}


def test_status_todo_matches_a_document_without_a_status(vault: Path) -> None:
    result = run(vault, "search", "", "--status", "todo", "--type", "entry", "--json")
    assert result.exit_code == 0, result.output
    assert "engine-repo" in {h["id"] for h in json.loads(result.stdout)["hits"]}


def test_a_name_several_topics_share_searches_all_of_them(vault: Path) -> None:
    result = run(vault, "search", "显存不够", "--json")
    also = json.loads(result.stdout)["also"]
    assert "PagedAttention" in also and any("Context Parallelism" in n for n in also)
