"""Vaults in the wild: small copies of Obsidian, Hugo, Zola and Dendron layouts.

Each must check clean (no false problems), and its links must really resolve: the
backlink counts below were worked out by hand from the fixture files.
"""

from __future__ import annotations

import pytest

from conftest import FLAVOURS, run_json

FLAVOUR_NAMES = ("obsidian", "hugo", "zola", "dendron")

#: flavour -> {query: number of backlinks}
BACKLINKS = {
    "obsidian": {
        "Home": 5,  # Alpha, Archive/Ideas, My Note, 笔记, Transformers
        "Alpha": 5,  # Home x2, Projects/Ideas, Beta (alias), Daily (alias)
        "Beta": 3,  # Home [[Beta#Goals]], [[Beta#^goal-block]], Alpha
        "Projects/Ideas": 2,  # Home, Alpha (path-qualified: two Ideas.md exist)
        "Archive/Ideas": 1,  # Home
        "My Note": 2,  # [[My Note]] and [my note](Projects/My%20Note.md)
        "笔记": 1,
        "Transformers": 1,  # two folders deep, by name alone
        "2024-01-01": 1,  # from inside a callout
    },
    "hugo": {
        "content/posts/foo/index.md": 4,  # /posts/foo/ x2, the same again from bar, index.md
        "content/posts/bar.md": 1,  # ../bar/ from the foo bundle
        "content/docs/bar.md": 3,  # /docs/bar.md, ../docs/bar.md, bar.md
        "content/docs/_index.md": 1,  # /docs/
        "content/posts/_index.md": 1,  # /posts/
    },
    "zola": {
        "content/blog/post.md": 3,  # @/blog/post.md from home, other-post, intro
        "content/blog/other-post.md": 2,  # @/blog/other-post.md and other-post.md
        "content/blog/_index.md": 1,
        "content/docs/intro/index.md": 1,  # @/docs/intro/index.md#setup
        "content/_index.md": 1,  # @/_index.md
    },
    "dendron": {
        "lang": 2,
        "lang.python": 5,  # lang, lang.go, data x2 (link + embed), [[Python|lang.python]]
        "lang.python.data": 1,
        "lang.go": 3,  # lang, rust, [[Go, for contrast|lang.go]] (label first)
        "lang.rust": 2,
        "pro.project": 1,
        "root": 0,
    },
}

DOCUMENTS = {"obsidian": 9, "hugo": 6, "zola": 5, "dendron": 7}  # hugo: not archetypes/


@pytest.mark.parametrize("name", FLAVOUR_NAMES)
def test_flavour_checks_clean(name: str, flavour, run) -> None:
    vault = flavour(name)
    code, data = run_json(run, "check", vault=vault)
    assert data["problems"] == []
    assert code == 0
    _, built = run_json(run, "build", vault=vault)
    assert built["documents"] == DOCUMENTS[name]
    assert built["problems"] == 0


@pytest.mark.parametrize("name", FLAVOUR_NAMES)
def test_flavour_links_resolve(name: str, flavour, open_vault) -> None:
    from studykb.vault.lookup import find

    vault = open_vault(flavour(name))
    for query, count in BACKLINKS[name].items():
        doc = find(vault, query)
        got = vault.backlinks(doc.key)
        assert len(got) == count, (query, [(lk.ref.path, lk.ref.text) for lk in got])
    bad = [lk for lk in vault.links() if lk.state in ("dangling", "ambiguous", "outside")]
    assert bad == []


def test_flavour_fixtures_are_untouched_by_a_build(flavour, run) -> None:
    from conftest import tree_hashes

    for name in FLAVOUR_NAMES:
        vault = flavour(name)
        before = tree_hashes(vault)
        run("build", vault=vault)
        assert tree_hashes(vault) == before
        assert tree_hashes(FLAVOURS / name) == before  # the copy matches the fixture


def test_obsidian_details(flavour, open_vault) -> None:
    vault = open_vault(flavour("obsidian"))
    docs = {d.path: d for d in vault.documents().values()}
    assert ".obsidian/ignored.md" not in docs  # hidden folders are not read
    assert docs["Projects/Alpha.md"].aliases == ("A-project",)
    assert docs["Projects/Alpha.md"].tags == ("project", "area/infra")
    assert docs["Projects/Beta.md"].tags == ("project",)
    assert docs["Home.md"].aliases == ("Start", "首页")
    assert docs["Projects/Ideas.md"].id == docs["Archive/Ideas.md"].id == "Ideas"
    # the embeds of present attachments are links to assets, not problems
    states = {lk.ref.text: lk.state for lk in vault.outgoing("Home.md")}
    assert states["![[diagram.png]]"] == "asset"
    assert states["![[paper.pdf]]"] == "asset"
    assert states["[[Beta#Goals]]"] == "ok"


def test_hugo_content_folder_as_the_vault(flavour, run) -> None:
    """The content folder alone is a vault too: /docs/bar.md is then vault-absolute."""
    content = flavour("hugo") / "content"
    code, data = run_json(run, "check", vault=content)
    assert (code, data["problems"]) == (0, [])
    code, data = run_json(run, "backlinks", "docs/bar.md", vault=content)
    assert code == 0
    assert len(data["backlinks"]) == 3


def test_hugo_and_zola_front_matter(flavour, open_vault) -> None:
    hugo = open_vault(flavour("hugo"))
    foo = hugo.document("content/posts/foo/index.md")
    assert (foo.id, foo.title, foo.date, foo.tags) == (
        "foo",
        "Foo: a page bundle",
        "2024-02-03",
        ("hugo", "bundles"),
    )
    zola = open_vault(flavour("zola"))
    post = zola.document("content/blog/post.md")
    assert (post.title, post.date, post.tags) == ("First post", "2024-01-15", ("rust", "zola"))
    assert post.meta["extra"] == {"math": True}
    blog = zola.document("content/blog/_index.md")  # two blank lines before +++
    assert (blog.id, blog.title) == ("blog", "Blog")


def test_dendron_ids_and_epoch_dates(flavour, open_vault) -> None:
    vault = open_vault(flavour("dendron"))
    go = vault.document("notes/lang.go.md")
    assert go.id == "a1s2d3f4g5h6j7k8l9zxcv" and go.explicit_id
    assert go.title == "Go"
    assert go.date == "2021-11-09"  # created: 1636492398000 ms
    # a random id answers queries too
    from studykb.vault.lookup import find

    assert find(vault, "a1s2d3f4g5h6j7k8l9zxcv").path == "notes/lang.go.md"
