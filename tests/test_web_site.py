"""``studykb site``: the pages as static files with relative links that all resolve, a
graph and a search index the browser can use, and a second run that rewrites only what
changed."""

from __future__ import annotations

import json
import os
import posixpath
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
from tests.test_web import FILES

pytest.importorskip("jinja2")


def build(run: Callable[..., Any], vault: Path, out: Path, *extra: str) -> dict[str, Any]:
    result = run("site", "-o", str(out), *extra, "--json", vault=vault)
    assert result.exit_code == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def pages(out: Path) -> list[Path]:
    return sorted(out.rglob("*.html"))


def local_targets(page: Path, out: Path) -> list[tuple[str, Path]]:
    """(href, the file it names) of every relative link and asset of ``page``."""
    html = page.read_text(encoding="utf-8")
    found = []
    for ref in re.findall(r'\s(?:href|src|data-graph-url|data-index)="([^"]+)"', html):
        ref = ref.replace("&amp;", "&")
        parts = urlsplit(ref)
        if parts.scheme or ref.startswith("#"):
            continue
        assert not ref.startswith("/"), f"{page}: {ref} is not relative"
        target = posixpath.normpath(
            posixpath.join(page.parent.relative_to(out).as_posix(), unquote(parts.path))
        )
        file = out / target
        if file.is_dir():
            file = file / "index.html"
        found.append((ref, file))
    return found


@pytest.fixture(scope="module")
def bundled_sites(bundled: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The bundled vault's site built twice, once in this process (one core) and once by
    forked workers (three cores, several chunks each): {name: (output folder, --json)}.
    Built once for the tests below, which only read them."""
    from click.testing import CliRunner

    from studykb.cli.app import cli, prepare
    from studykb.runtime import pools

    prepare()
    built = {}
    for name, cores in (("alone", 1), ("shared", 3)):
        out = tmp_path_factory.mktemp("site") / name
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(pools, "cores", lambda cores=cores: cores)
            patch.setenv("NO_COLOR", "1")
            result = CliRunner().invoke(
                cli, ["--vault", str(bundled), "site", "-o", str(out), "--json"]
            )
        assert result.exit_code == 0, result.output
        built[name] = (out, json.loads(result.stdout))
    return built


#: The tests of the bundled vault's sites run on one xdist worker, which builds them once.
on_the_sites_worker = pytest.mark.xdist_group("bundled-site")


@on_the_sites_worker
def test_every_link_of_every_page_resolves(bundled_sites: dict[str, Any]) -> None:
    out, data = bundled_sites["shared"]
    assert data["pages"] == len(pages(out)) > 200
    for page in pages(out):
        for ref, file in local_targets(page, out):
            assert file.is_file(), f"{page.relative_to(out)} links {ref}: missing"
    home = (out / "index.html").read_text(encoding="utf-8")
    assert 'data-mode="static"' in home and "studykb-token" not in home
    assert "mark-button" not in (out / "d/notes/topics/fsdp2.html").read_text(encoding="utf-8")


def files_of(out: Path) -> dict[str, bytes]:
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and p.name != ".studykb-site.json"
    }


@on_the_sites_worker
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_workers_write_the_site_one_process_writes(bundled_sites: dict[str, Any]) -> None:
    (alone_out, alone), (shared_out, shared) = bundled_sites["alone"], bundled_sites["shared"]
    assert alone["pages"] == shared["pages"] and alone["files"] == shared["files"]
    assert files_of(alone_out) == files_of(shared_out)


def test_chunks_hold_every_document_once_and_get_shorter() -> None:
    from studykb.web.site import chunked

    keys = [f"notes/n{n:05}.md" for n in range(1000)]
    chunks = chunked(keys, 2, 6)
    assert len(chunks) == 6
    assert sorted(k for c in chunks for k in c) == keys
    sizes = [len(c) for c in chunks]
    assert sizes == sorted(sizes, reverse=True) and sizes[0] == 500 and sizes[-1] < 40
    assert sorted(chunked(keys[:3], 4, 14)) == [[k] for k in keys[:3]]
    assert chunked([], 2, 6) == []


def test_topic_plan_pages_graph_and_search_index(
    run: Callable[..., Any], make_vault: Callable[..., Path], tmp_path: Path
) -> None:
    vault = make_vault(FILES)
    out = tmp_path / "site"
    build(run, vault, out)
    plan = (out / "plan/notes/topics/fsdp2.html").read_text(encoding="utf-8")
    assert 'href="../../../d/notes/topics/ddp.html"' in plan
    topic = (out / "d/notes/topics/fsdp2.html").read_text(encoding="utf-8")
    assert 'href="../../../plan/notes/topics/fsdp2.html"' in topic
    assert (
        'href="../../../graph/index.html?focus=notes%2Ftopics%2Ffsdp2.md&amp;mode=around"' in topic
    )
    graph = json.loads((out / "graph.json").read_text(encoding="utf-8"))
    for node in graph["nodes"]:
        file = posixpath.normpath(posixpath.join("graph", node["url"].split("#")[0]))
        assert (out / unquote(file)).is_file(), node
    index = json.loads((out / "search-index.json").read_text(encoding="utf-8"))
    keys = [d["key"] for d in index["docs"]]
    ddp = keys.index("notes/topics/ddp.md")
    assert index["docs"][ddp]["url"] == "d/notes/topics/ddp.html"
    assert any(doc == ddp for doc, _w in index["terms"]["数据"])  # Chinese, segmented
    assert "数据并行把批次切分到每个" not in index["terms"]
    assert any(doc == ddp for doc, _w in index["terms"]["reduced"])  # English, not stemmed
    assert (out / "static/search-static.js").is_file()
    assert not (out / "static/dev").exists()
    assert (out / "files/notes/img/d.png").read_bytes().startswith(b"\x89PNG")


def test_second_run_rewrites_only_what_changed(
    run: Callable[..., Any], make_vault: Callable[..., Path], tmp_path: Path
) -> None:
    vault = make_vault(FILES)
    out = tmp_path / "site"
    first = build(run, vault, out)
    assert first["written"] == first["files"]
    again = build(run, vault, out)
    assert again["written"] == 0 and again["removed"] == 0
    css = out / "static/studykb.css"
    stamp = css.stat().st_mtime_ns
    note = vault / "notes/entries/fsdp-tutorial.md"
    note.write_text(
        note.read_text(encoding="utf-8").replace("How to call", "How to use"), encoding="utf-8"
    )
    changed = build(run, vault, out)
    assert 0 < changed["written"] < first["files"] // 2
    assert "How to use" in (out / "d/notes/entries/fsdp-tutorial.html").read_text(encoding="utf-8")
    assert css.stat().st_mtime_ns == stamp
    (vault / "notes/my-fsdp.md").unlink()
    removed = build(run, vault, out)
    assert removed["removed"] >= 1
    assert not (out / "d/notes/my-fsdp.html").exists()
    (out / "mine.txt").write_text("not the site's", encoding="utf-8")
    build(run, vault, out)
    assert (out / "mine.txt").is_file()  # only what the site wrote is ever removed


def test_base_url_adds_canonical_links_and_a_sitemap(
    run: Callable[..., Any], make_vault: Callable[..., Path], tmp_path: Path
) -> None:
    vault = make_vault(FILES)
    out = tmp_path / "site"
    build(run, vault, out, "--base-url", "https://me.example/notes/")
    page = (out / "d/notes/topics/ddp.html").read_text(encoding="utf-8")
    assert '<link rel="canonical" href="https://me.example/notes/d/notes/topics/ddp.html">' in page
    sitemap = (out / "sitemap.xml").read_text(encoding="utf-8")
    assert "<loc>https://me.example/notes/topics/</loc>" in sitemap
    assert 'href="../../../d/notes/topics/fsdp2.html"' in page  # links stay relative


def test_bad_outputs_are_refused(
    run: Callable[..., Any], make_vault: Callable[..., Path], tmp_path: Path
) -> None:
    vault = make_vault(FILES)
    for out in (vault, vault.parent):
        result = run("site", "-o", str(out), vault=vault)
        assert result.exit_code == 2 and "holds the vault" in result.stderr
    bad = run("site", "-o", str(tmp_path / "x"), "--base-url", "javascript:alert(1)", vault=vault)
    assert bad.exit_code == 2
    manifest = tmp_path / "site"
    manifest.mkdir()
    (tmp_path / "precious.txt").write_text("keep", encoding="utf-8")
    (manifest / ".studykb-site.json").write_text(
        json.dumps({"version": 1, "files": {"../precious.txt": "x", "/etc/passwd": "y"}}),
        encoding="utf-8",
    )
    build(run, vault, manifest)
    assert (tmp_path / "precious.txt").read_text(encoding="utf-8") == "keep"


def test_templates_read_dict_keys_as_jinja_does() -> None:
    import jinja2

    from studykb.web.templating import Environment

    source = "{{ d.title }}|{{ d.items is callable }}|{{ d.get('x') }}|{{ d.missing is defined }}"
    data = {"d": {"title": "<T>", "items": [1], "get": "shadowed", "x": 2}}
    ours = Environment(autoescape=True).from_string(source).render(data)
    assert ours == jinja2.Environment(autoescape=True).from_string(source).render(data)
    assert ours == "&lt;T&gt;|True|2|False"


def test_backlink_contexts_read_at_once_are_those_read_page_by_page(bundled: Path) -> None:
    from studykb.session import Session
    from studykb.web.pages import Pages

    with Session.open(bundled) as kb:
        kb.refresh()
        one_by_one, at_once = Pages(kb), Pages(kb)
        at_once.preload_contexts()
        backlinks = [b for links in at_once.links_to.values() for b in links]
        assert len(backlinks) > 100 and len(at_once.contexts) > 100
        for b in backlinks:
            expected = one_by_one.context_line(b.ref.path, b.ref.line)
            assert at_once.contexts[b.ref.path, b.ref.line] == expected
        assert any(at_once.contexts.values())


# -- what a reader sees: names, not ids -------------------------------------------------------
NAMED = {
    "notes/topics/tp.md": "---\nid: zhang-liang-bing-xing\n---\n# 张量并行\n\nSplit the layers.\n",
    "notes/kv.md": "---\nid: kv-cache\n---\n# KV Cache\n\n## Layout\n\nKeys and values.\n",
    "notes/reader.md": "---\nid: reader\ntags: [zhang-liang-bing-xing, plain-tag]\n---\n"
    "# Reader\n\nSee [[kv-cache]], [[kv-cache#Layout]], [[kv-cache|the cache]] and [[nowhere]].\n",
    "notes/entries/one.md": "---\nid: e1\nurl: https://example.com/1\n---\n# One\n",
    "notes/entries/two.md": "---\nid: e2\nurl: https://example.com/2\n---\n# Two\n",
    "courses/c.md": "---\nid: c\nunits:\n  - id: u1\n    title: Unit one\n"
    "    tags: [zhang-liang-bing-xing, other]\n---\n# Course\n",
}


def test_wikilinks_tags_and_counts_read_as_words(
    run: Callable[..., Any], make_vault: Callable[..., Path], tmp_path: Path
) -> None:
    out = tmp_path / "site"
    build(run, make_vault(NAMED), out)
    reader = (out / "d/notes/reader.html").read_text(encoding="utf-8")
    links = re.findall(r'<a class="wikilink"[^>]*>([^<]*)</a>', reader)
    assert links == ["KV Cache", "KV Cache › Layout", "the cache"]
    assert re.search(r'dead-link"[^>]*>nowhere<', reader)
    tags = re.findall(r'<a class="tag"[^>]*>([^<]*)</a>', reader)
    assert tags == ["张量并行", "plain-tag"]
    course = (out / "d/courses/c.html").read_text(encoding="utf-8")
    unit_tags = re.findall(r'<a class="tag" href="([^"]*)">([^<]*)</a>', course)
    assert [name for _href, name in unit_tags] == ["张量并行", "other"]
    assert unit_tags[0][0].endswith("d/notes/topics/tp.html")
    home = (out / "index.html").read_text(encoding="utf-8")
    assert "2 entries" in home and "entrys" not in home
    assert "1 unit," not in home and "1 unit." in home


@pytest.mark.parametrize(
    ("config", "folder", "heading"),
    [
        ('title = "我的 AI 基础设施笔记"\n', "vault-x", "我的 AI 基础设施笔记"),
        ("", "ai-infra_notes", "Ai infra notes"),
        ("", "vault1", "Study notes"),
    ],
)
def test_home_page_heading_is_the_vaults_title(
    run: Callable[..., Any],
    make_vault: Callable[..., Path],
    tmp_path: Path,
    config: str,
    folder: str,
    heading: str,
) -> None:
    out = tmp_path / "site"
    build(run, make_vault(NAMED, config=config, name=folder), out)
    home = (out / "index.html").read_text(encoding="utf-8")
    assert f"<h1>{heading}</h1>" in home
    assert re.search(rf'class="site-name" href="[^"]*">{re.escape(heading)}</a>', home)
    assert f"<h1>{folder}</h1>" not in home


NODE = shutil.which("node")
#: Queries of the bundled vault in both languages (the issue's "kv cache" first).
SAME_TOP = ["kv cache", "张量并行", "数据并行", "fsdp2", "flash attention", "投机解码"]
SAME_TOP += ["all-reduce"]


def static_search(out: Path, queries: list[str]) -> list[dict[str, Any]]:
    """What search-static.js answers over the site's search-index.json (run by node)."""
    script = (
        "const S = require(process.argv[1]);"
        "const idx = new S.StaticIndex(require(process.argv[2]));"
        "console.log(JSON.stringify(process.argv.slice(3).map((q) => idx.search(q, {limit: 5}))));"
    )
    static = Path(__file__).resolve().parent.parent / "src/studykb/web/static/search-static.js"
    assert NODE is not None
    done = subprocess.run(
        [NODE, "-e", script, str(static), str(out / "search-index.json"), *queries],
        capture_output=True,
        text=True,
        check=True,
    )
    answers: list[dict[str, Any]] = json.loads(done.stdout)
    return answers


@on_the_sites_worker
@pytest.mark.skipif(NODE is None, reason="needs node to run search-static.js")
def test_static_search_ranks_and_expands_as_the_cli(
    bundled_sites: dict[str, Any], bundled: Path, run: Callable[..., Any]
) -> None:
    """The static site's first hit is the CLI's, and a Chinese topic name brings the
    CLI's "also searched" names (the issue: Prefix Caching above KV Cache for "kv cache",
    nothing also searched for 张量并行)."""
    from studykb.session import Session

    out, _data = bundled_sites["alone"]
    answers = static_search(out, SAME_TOP)
    for query, answer in zip(SAME_TOP, answers, strict=True):
        result = run("search", query, "--json", "--limit", "1", vault=bundled)
        assert result.exit_code == 0, result.stderr
        cli_top = json.loads(result.stdout)["hits"][0]["title"]
        assert answer["hits"][0]["title"] == cli_top, query
    kb = Session.open(bundled)
    try:
        for query, answer in zip(SAME_TOP, answers, strict=True):
            if query in ("张量并行", "投机解码", "kv cache"):
                assert answer["also_searched"] == kb.also_searched(query) != [], query
    finally:
        kb.close()
