"""``[[note#heading]]`` naming a heading the note does not have is a ``dangling-anchor``."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from studykb.cli.app import cli, prepare

prepare()


def test_missing_heading_is_a_warning_with_its_line(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(
        "# A\n\nsee [[b#Nope]] and [[b#Sub Part]]\nand [b](b.md#sub-part) and [[b#^block]]\n",
        encoding="utf-8",
    )
    (tmp_path / "b.md").write_text("# B\n\n## Sub Part\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["--vault", str(tmp_path), "check", "--json"])
    assert result.exit_code == 0  # a warning, not an error
    problems = json.loads(result.output)["problems"]
    assert [(p["path"], p["line"], p["code"], p["severity"]) for p in problems] == [
        ("a.md", 3, "dangling-anchor", "warning")
    ]
    # the heading appears: the warning goes away
    (tmp_path / "b.md").write_text("# B\n\n## Sub Part\n\n## Nope\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["--vault", str(tmp_path), "check", "--json"])
    assert json.loads(result.output)["problems"] == []


def test_anchor_follows_a_reference_that_moves_to_another_target(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "a.md").write_text("see [[Target#Deep]]\n", encoding="utf-8")
    (tmp_path / "x" / "one.md").write_text(
        "---\ntitle: Target\n---\n## Shallow\n", encoding="utf-8"
    )
    runner = CliRunner()
    out = json.loads(runner.invoke(cli, ["--vault", str(tmp_path), "check", "--json"]).output)
    assert [p["code"] for p in out["problems"]] == ["dangling-anchor"]
    # an id beats a title: the reference now resolves to target.md, which has the heading
    (tmp_path / "target.md").write_text("## Deep\n", encoding="utf-8")
    out = json.loads(runner.invoke(cli, ["--vault", str(tmp_path), "check", "--json"]).output)
    assert out["problems"] == []


def _check(root: Path) -> list[tuple[str, int, str]]:
    result = CliRunner().invoke(cli, ["--vault", str(root), "check", "--json"])
    return [(p["path"], p["line"], p["code"]) for p in json.loads(result.output)["problems"]]


def test_check_and_go_to_definition_agree(tmp_path: Path) -> None:
    """One slug implementation: what check accepts, go-to-definition finds (issue 16:
    ``[[note#c-tips]]`` for ``## C++ tips`` was accepted, and jumped to line 0)."""
    from studykb.parse.reading import Reading
    from studykb.vault.buffers import anchor_line

    note = "---\ntitle: Note\n---\n# Note\n\n## C++ tips\n\n## Usage\n\n## Usage\n"
    (tmp_path / "note.md").write_text(note, encoding="utf-8")
    (tmp_path / "a.md").write_text(
        "[[note#c-tips]] [[note#C++ tips]] [u](note.md#usage-1)\n", encoding="utf-8"
    )
    assert _check(tmp_path) == []
    lines = note.split("\n")
    assert anchor_line(lines, "c-tips") == 5
    assert anchor_line(lines, "C++ tips") == 5
    assert anchor_line(lines, "usage-1") == 9
    assert anchor_line(lines, "nowhere") == 0
    hugo = Reading(generator="hugo", heading_flavour="hugo")
    assert anchor_line(["## Install {#setup}", "", "## Install"], "setup", hugo) == 0
    assert anchor_line(["## Install {#setup}", "", "## Install"], "install", hugo) == 2


def test_same_page_anchors_are_checked(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(
        "# A\n\n## Part one\n\n[ok](#part-one) [[#Part one]]\n"
        "[bad](#part-two) [[#Nothing]] [text](#:~:text=x)\n",
        encoding="utf-8",
    )
    assert _check(tmp_path) == [("a.md", 6, "dangling-anchor"), ("a.md", 6, "dangling-anchor")]


def test_anchors_follow_the_site_generator(tmp_path: Path) -> None:
    """A Hugo site: ids from the heading's source and ``{#id}``; Zola: ``get_page`` is
    ``get-page``; neither is a problem, a wrong one is."""
    (tmp_path / "hugo.toml").write_text('baseURL = "https://x.org/"\n', encoding="utf-8")
    (tmp_path / "content").mkdir()
    (tmp_path / "content" / "a.md").write_text(
        "## Using [modules](https://gohugo.io/m/)\n\n## Install {#setup}\n\n"
        "[m](#using-moduleshttpsgohugoiom) [s](#setup) [no](#install)\n",
        encoding="utf-8",
    )
    assert _check(tmp_path) == [("content/a.md", 5, "dangling-anchor")]
    zola = tmp_path / "zola"
    (zola / "content").mkdir(parents=True)
    (zola / "config.toml").write_text('base_url = "https://x.org"\n[markdown]\n', encoding="utf-8")
    (zola / "content" / "a.md").write_text(
        "+++\n+++\n## get_page\n\n[g](#get-page) [u](#get-pages)\n", encoding="utf-8"
    )  # Zola needs front matter in every page, even an empty one
    assert _check(zola) == [("content/a.md", 5, "dangling-anchor")]


def test_hugo_definition_terms_have_ids_when_configured(tmp_path: Path) -> None:
    """Hugo's docs link to definition terms (``autoDefinitionTermID``): ``#pageref``."""
    (tmp_path / "hugo.toml").write_text(
        "[markup.goldmark.parser]\nautoDefinitionTermID = true\n", encoding="utf-8"
    )
    (tmp_path / "content").mkdir()
    page = "## Props\n\npageRef\n: The logical path.\n\n[p](#pageref) [q](#nope)\n"
    (tmp_path / "content" / "a.md").write_text(page, encoding="utf-8")
    assert _check(tmp_path) == [("content/a.md", 6, "dangling-anchor")]
    (tmp_path / "hugo.toml").write_text('title = "x"\n', encoding="utf-8")  # option off
    assert _check(tmp_path) == [("content/a.md", 6, "dangling-anchor")] * 2


def test_a_page_whose_headings_the_site_code_makes_is_not_judged(tmp_path: Path) -> None:
    """``#### <!-- md:setting config.x -->`` (mkdocs-material's docs, turned into headings
    by a hook): studykb cannot know those ids, so anchors into that page are not judged;
    a page of plain headings still is."""
    (tmp_path / "a.md").write_text(
        "# A\n\n[dir](blog.md#config.blog_dir) and [x](plain.md#config.blog_dir)\n",
        encoding="utf-8",
    )
    (tmp_path / "blog.md").write_text(
        "# Blog\n\n## General\n\n#### <!-- md:setting config.blog_dir -->\n\nText.\n",
        encoding="utf-8",
    )
    (tmp_path / "plain.md").write_text("# Plain\n\n## General\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["--vault", str(tmp_path), "check", "--json"])
    problems = json.loads(result.output)["problems"]
    assert [(p["code"], p["message"].split(":")[0]) for p in problems] == [
        ("dangling-anchor", "'plain.md#config.blog_dir'")
    ]
