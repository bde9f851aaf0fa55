"""Fixture sites of each generator, read as that generator renders them.

Each folder under tests/fixtures/sites/ holds a small site (Hugo with shortcodes, content/en
and {#id}; Zola; Obsidian with nested headings; Dendron; GitHub README-style docs; a
d2lbook chapter) and an ``expected.json`` written from the generator's rules (for Hugo,
checked against a real build). The vault must find exactly those references, anchors,
labels, tags and problems.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from studykb.parse.body import read_body
from studykb.parse.frontmatter import split
from studykb.parse.outline import Outline
from studykb.vault import Link, Vault
from studykb.vault.checks import AttachmentRef, Files, attachment_path

SITES = Path(__file__).parent / "fixtures" / "sites"
NAMES = sorted(p.name for p in SITES.iterdir() if (p / "expected.json").is_file())


def _expected(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SITES / name / "expected.json").read_text("utf-8"))
    return data


@pytest.fixture
def site(tmp_path: Path, request: pytest.FixtureRequest) -> Vault:
    """The fixture site copied to a temporary folder and refreshed."""
    name = request.param
    root = tmp_path / name
    shutil.copytree(SITES / name, root, ignore=shutil.ignore_patterns(".studykb"))
    vault = Vault.open(root)
    vault.refresh()
    yield vault
    vault.close()


def _files(vault: Vault) -> Files:
    from studykb.vault.scan import scan

    found = scan(vault.config)
    return Files(vault.root, found.attachments, found.attachment_names)


def _target(vault: Vault, link: Link, files: Files) -> str | None:
    if link.target is not None:
        doc = vault.document(link.target)
        return doc.path if doc else None
    ref = link.ref
    if link.state == "asset":
        return attachment_path(
            AttachmentRef(ref.path, ref.line, ref.text, ref.target, ref.style), files, vault.reading
        )
    if link.state == "external" and ref.style == "path" and files.at(ref.target):
        return ref.target  # a file without an extension (LICENSE)
    return None


def _fragments(vault: Vault) -> list[tuple[str, int, str]]:
    """(path, line, anchor) of the same-page links of every file."""
    out = []
    for path in sorted(vault.store.files.stamps()):
        parts = split((vault.root / path).read_text("utf-8"))
        body = read_body(parts.body, parts.body_line, path, vault.reading)
        out.extend((path, f.line, f.anchor) for f in body.fragments)
    return out


def _found_references(vault: Vault) -> set[tuple[str, int, str | None, str]]:
    files = _files(vault)
    found = {
        (lk.ref.path, lk.ref.line, _target(vault, lk, files), lk.ref.anchor)
        for lk in vault.links()
        if lk.ref.style != "url"
    }
    found |= {(path, line, path, anchor) for path, line, anchor in _fragments(vault)}
    return found


@pytest.mark.parametrize("site", NAMES, indirect=True)
def test_generator_and_content_folders(site: Vault) -> None:
    expected = _expected(site.root.name)
    assert site.site.generator == expected["generator"]
    assert list(site.site.content_dirs) == expected["content_dirs"]


@pytest.mark.parametrize("site", NAMES, indirect=True)
def test_references_are_the_ones_the_generator_makes(site: Vault) -> None:
    expected = _expected(site.root.name)
    want = {(r["source"], r["line"], r["target"], r["anchor"]) for r in expected["references"]}
    assert _found_references(site) == want


@pytest.mark.parametrize("site", NAMES, indirect=True)
def test_problems_are_exactly_the_real_ones(site: Vault) -> None:
    expected = _expected(site.root.name)
    got = {(p.path, p.line, p.code) for p in site.problems()}
    assert got == {(p["path"], p["line"], p["code"]) for p in expected["problems"]}


@pytest.mark.parametrize("site", NAMES, indirect=True)
def test_heading_ids_are_the_generators(site: Vault) -> None:
    expected = _expected(site.root.name)
    for path, ids in expected.get("anchors", {}).items():
        outline = Outline.from_json(site.outline(path))
        assert [a for a in outline.anchors(site.reading) if a] == ids, path


@pytest.mark.parametrize("site", ["obsidian"], indirect=True)
def test_obsidian_subpaths_name_the_nested_heading(site: Vault) -> None:
    expected = _expected("obsidian")
    for ref in expected["references"]:
        if "heading_line" not in ref:
            continue
        outline = Outline.from_json(site.outline(ref["target"]))
        assert outline.find(ref["anchor"], site.reading) == ref["heading_line"], ref


@pytest.mark.parametrize("site", ["obsidian"], indirect=True)
def test_inline_tags_are_tags(site: Vault) -> None:
    expected = _expected("obsidian")
    docs = {d.path: d for d in site.documents().values()}
    for tag in expected["tags"]:
        assert tag["tag"] in docs[tag["path"]].tags
    assert docs["Home.md"].tags[0] == "index"  # front matter first
    every = {t for d in docs.values() for t in d.tags}
    assert not {"not-a-tag", "123", "include"} & every


@pytest.mark.parametrize("site", ["d2lbook"], indirect=True)
def test_d2lbook_labels_and_citations(site: Vault) -> None:
    expected = _expected("d2lbook")
    labels = set()
    for path in sorted(site.store.files.stamps()):
        outline = Outline.from_json(site.outline(path))
        labels |= {(path, label.line, label.name) for label in outline.labels}
    assert labels == {(x["path"], x["line"], x["label"]) for x in expected["labels"]}
    keys = {c["key"] for c in expected["citations"]}
    assert not [lk for lk in site.links() if lk.ref.target in keys]
    # a label in code is not a reference, and every role reference resolves
    roles = [lk for lk in site.links() if lk.ref.style == "label"]
    assert len(roles) == 4 and all(lk.state == "ok" for lk in roles)


@pytest.mark.parametrize("site", ["dendron"], indirect=True)
def test_dendron_reads_labels_first(site: Vault) -> None:
    states = {lk.ref.text: (lk.state, lk.target) for lk in site.links()}
    assert states["[[Python|lang.python]]"] == ("ok", "notes/lang.python.md")
    assert states["[[setup steps|lang.python#install]]"] == ("ok", "notes/lang.python.md")


def test_label_fallback_only_in_dendron(tmp_path: Path) -> None:
    """``[[missing|Existing]]`` is a broken link outside Dendron, however the label reads."""
    (tmp_path / "Existing.md").write_text("# Existing\n", "utf-8")
    (tmp_path / "a.md").write_text("See [[missing|Existing]].\n", "utf-8")
    vault = Vault.open(tmp_path)
    vault.refresh()
    assert [(p.code, p.line) for p in vault.problems()] == [("dangling-ref", 1)]
    assert vault.backlinks("Existing.md") == []
    vault.close()
    (tmp_path / "dendron.yml").write_text("version: 5\n", "utf-8")
    vault = Vault.open(tmp_path)
    vault.refresh()  # other rules: every file is read again
    assert vault.problems() == []
    assert [lk.ref.path for lk in vault.backlinks("Existing.md")] == ["a.md"]
    vault.close()


def test_generator_from_studykb_toml(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("## C++ tips\n\n[x](#c-tips) [[b#Setup Notes]]\n", "utf-8")
    (tmp_path / "b.md").write_text("## Setup notes\n", "utf-8")
    vault = Vault.open(tmp_path)
    vault.refresh()
    assert vault.problems() == []
    vault.close()
    (tmp_path / "studykb.toml").write_text('generator = "zola"\n', "utf-8")
    vault = Vault.open(tmp_path)
    assert vault.site.generator == "zola"
    vault.refresh()  # Zola: "C++ tips" is #c-tips too; Obsidian-style text still matches
    assert vault.problems() == []
    vault.close()
    (tmp_path / "studykb.toml").write_text('headings = "gitlab"\n', "utf-8")
    (tmp_path / "a.md").write_text("## 2024\n\n## A -- B\n", "utf-8")
    vault = Vault.open(tmp_path)
    vault.refresh()  # GitLab's ids: digits get a prefix, runs of "-" become one
    assert Outline.from_json(vault.outline("a.md")).anchors(vault.reading) == [
        "anchor-2024",
        "a-b",
    ]
    vault.close()


def test_toc_marker_is_not_a_link(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n\n[[_TOC_]]\n\n## B\n", "utf-8")
    vault = Vault.open(tmp_path)
    vault.refresh()
    assert vault.problems() == [] and vault.links() == []
    vault.close()


def test_missing_attachments_are_warnings(tmp_path: Path) -> None:
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "a.png").write_bytes(b"png")
    (tmp_path / "a.md").write_text(
        "![ok](img/a.png) ![gone](img/b.png) ![[a.png]] ![[c.png]] [doc](files/x.pdf)\n", "utf-8"
    )
    vault = Vault.open(tmp_path)
    vault.refresh()
    got = {(p.code, p.severity, p.message.split(":")[0]) for p in vault.problems()}
    assert got == {
        ("missing-attachment", "warning", "'img/b.png'"),
        ("missing-attachment", "warning", "'![[c.png]]'"),
        ("missing-attachment", "warning", "'files/x.pdf'"),
    }
    (tmp_path / "img" / "b.png").write_bytes(b"png")  # only the other files changed
    vault.refresh()
    assert len(vault.problems()) == 2
    (tmp_path / "b.md").write_text("![[gone.png]]\n", "utf-8")  # an edit elsewhere
    vault.refresh()
    assert len(vault.problems()) == 3
    (tmp_path / "b.md").unlink()
    vault.refresh()
    assert len(vault.problems()) == 2
    vault.close()


def test_hugo_static_files_are_never_missing(tmp_path: Path) -> None:
    (tmp_path / "hugo.toml").write_text('baseURL = "https://x.org/"\n', "utf-8")
    (tmp_path / "content").mkdir()
    (tmp_path / "content" / "a.md").write_text(
        "![a](/images/not-here.png) ![b](/css/site.css)\n", "utf-8"
    )
    vault = Vault.open(tmp_path)
    vault.refresh()
    assert vault.problems() == []
    vault.close()


def test_site_links_that_lead_nowhere_are_said(tmp_path: Path) -> None:
    (tmp_path / "hugo.toml").write_text(
        'baseURL = "https://x.org/"\ncontentDir = "site"\n', "utf-8"
    )
    (tmp_path / "site").mkdir()
    (tmp_path / "elsewhere").mkdir()
    links = " ".join(f"[p{n}](/p{n}/)" for n in range(12))
    (tmp_path / "site" / "a.md").write_text(links + "\n", "utf-8")
    for n in range(12):
        (tmp_path / "elsewhere" / f"p{n}.md").write_text("# P\n", "utf-8")
    vault = Vault.open(tmp_path)
    stats = vault.refresh()
    assert stats.notice is not None and "12 site-absolute links" in stats.notice
    vault.close()
    (tmp_path / "hugo.toml").write_text(
        'baseURL = "https://x.org/"\ncontentDir = "elsewhere"\n', "utf-8"
    )
    vault = Vault.open(tmp_path)
    stats = vault.refresh()
    assert stats.notice is None or "site-absolute" not in stats.notice
    vault.close()


# --- outputs of real-sized vaults: the graph --------------------------------------------------


def _run(root: Path, *args: str) -> Any:
    from click.testing import CliRunner

    from studykb.cli.app import cli, prepare

    prepare()
    return CliRunner().invoke(cli, ["--vault", str(root), *args])


def test_graph_json_keeps_documents_that_share_an_id(tmp_path: Path) -> None:
    """Two ``index.md`` (id ``index``... or the same front-matter id) stay two nodes."""
    import networkx as nx

    for folder in ("lecture1", "lecture2"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "notes.md").write_text(f"# {folder}\n\n[[summary]]\n", "utf-8")
    (tmp_path / "summary.md").write_text("# Summary\n\n[one](lecture1/notes.md)\n", "utf-8")
    result = _run(tmp_path, "graph", "--format", "json")
    data = json.loads(result.output)
    assert sorted(n["id"] for n in data["nodes"]) == [
        "lecture1/notes.md",
        "lecture2/notes.md",
        "summary.md",
    ]
    assert {n["name"] for n in data["nodes"]} == {"notes", "summary"}
    graph = nx.DiGraph()
    graph.add_nodes_from(n["id"] for n in data["nodes"])
    graph.add_edges_from((e["source"], e["target"]) for e in data["edges"])
    assert graph.number_of_nodes() == 3 and graph.number_of_edges() == 3


def test_graph_says_when_dot_or_mermaid_will_choke(tmp_path: Path) -> None:
    from studykb.outputs import graph_export as ge

    for n in range(ge.DOT_MAX_NODES + 1):
        (tmp_path / f"n{n}.md").write_text(f"# N{n}\n\n[[n{n + 1}]] [[n{n + 2}]]\n", "utf-8")
    dot = _run(tmp_path, "graph", "--format", "dot")
    assert "sfdp" in dot.stderr and "--type" in dot.stderr and dot.exit_code == 0
    mermaid = _run(tmp_path, "graph", "--format", "mermaid")
    assert "Mermaid draws at most 500 edges" in mermaid.stderr
    small = _run(tmp_path, "graph", "--format", "mermaid", "--type", "topic")
    assert small.stderr == ""


def test_output_folders_are_made(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n\n[[b]]\n", "utf-8")
    (tmp_path / "b.md").write_text("# B\n", "utf-8")
    out = tmp_path / "data" / "studykb" / "sidebar.json"
    assert _run(tmp_path, "sidebar", "--format", "json", "-o", str(out)).exit_code == 0
    assert "a.md" in json.loads(out.read_text("utf-8"))
    graph = tmp_path / "out" / "g" / "graph.dot"
    assert _run(tmp_path, "graph", "--format", "dot", "-o", str(graph)).exit_code == 0
    assert graph.read_text("utf-8").startswith("digraph")


# --- where a site generator puts pages (the sidebar data file) --------------------------------


def _pages(tmp_path: Path, files: dict[str, str]) -> Any:
    from studykb.outputs.site_pages import SitePages

    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, "utf-8")
    vault = Vault.open(tmp_path)
    vault.refresh()
    docs = vault.documents()
    vault.close()
    return SitePages(vault.site, docs)


def test_jekyll_pages_and_posts(tmp_path: Path) -> None:
    pages = _pages(
        tmp_path,
        {
            "_config.yml": "baseurl: /blog\n",
            "about.md": "# About\n",
            "docs/index.md": "# Docs\n",
            "_posts/2024-01-02-hello-world.md": "---\ncategories: [news]\n---\n# Hi\n",
            "fixed.md": "---\npermalink: /elsewhere/\n---\n",
        },
    )
    assert pages.key("about.md", "about.md") == "about.md"
    assert pages.href("about.md", "about.md") == "/blog/about.html"
    assert pages.href("docs/index.md", "docs/index.md") == "/blog/docs/"
    post = "_posts/2024-01-02-hello-world.md"
    assert pages.href(post, post) == "/blog/news/2024/01/02/hello-world.html"
    assert pages.href("fixed.md", "fixed.md") == "/blog/elsewhere/"
    (tmp_path / "_config.yml").write_text("permalink: pretty\n", "utf-8")
    pretty = _pages(tmp_path, {})
    assert pretty.href("about.md", "about.md") == "/about/"
    assert pretty.href(post, post) == "/news/2024/01/02/hello-world/"


def test_hugo_languages_and_ugly_urls(tmp_path: Path) -> None:
    pages = _pages(
        tmp_path,
        {
            "hugo.toml": 'defaultContentLanguage = "en"\nuglyURLs = true\n'
            'contentDir = "content/en"\n'
            '[languages.en]\n[languages.zh]\ncontentDir = "content/zh"\n',
            "content/en/docs/a.md": "# A\n",
            "content/zh/docs/a.md": "# A\n",
            "content/zh/docs/_index.md": "# Docs\n",
        },
    )
    assert pages.key("content/zh/docs/a.md", "content/zh/docs/a.md") == "docs/a.md"
    assert pages.href("content/en/docs/a.md", "content/en/docs/a.md") == "/docs/a.html"
    assert pages.href("content/zh/docs/a.md", "content/zh/docs/a.md") == "/zh/docs/a.html"
    assert pages.href("content/zh/docs/_index.md", "content/zh/docs/_index.md") == "/zh/docs/"
    assert pages.language_key("content/zh/docs/a.md", "docs/a.md") == "zh/docs/a.md"
