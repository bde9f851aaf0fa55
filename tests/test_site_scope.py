"""What a document is, per generator: only what the generator renders is read.

Hugo's archetypes (whose front matter is a Go template) and a README beside ``content/``,
mkdocs' files outside ``docs_dir`` or in ``exclude_docs``, Quartz's ``ignorePatterns`` and a
d2lbook book's ``exclusions`` (its ``_origin.md`` twins) are not documents; ``init --dry-run``
says why. A course under ``content/courses/`` is a course. Raw-HTML anchors are anchors.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from studykb.cli.app import cli, prepare
from studykb.vault import Vault


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, "utf-8")


def _docs(root: Path) -> tuple[set[str], list[str]]:
    vault = Vault.open(root)
    vault.refresh()
    docs = vault.documents()
    codes = [f"{p.path}:{p.code}" for p in vault.problems()]
    vault.close()
    return set(docs), codes


def test_hugo_reads_its_content_only(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "hugo.toml": 'baseURL = "https://x.org/"\n',
            "archetypes/default.md": '---\ntitle: "{{ replace .Name "-" " " | title }}"\n---\n',
            "layouts/shortcodes/x.md": "{{ .Inner }}\n",
            "README.md": "# Blog\n[[nothing]]\n",
            "content/posts/a.md": "---\ntitle: A\n---\n",
            "content/courses/cs336.md": "---\ntitle: CS336\n---\n",
        },
    )
    docs, problems = _docs(tmp_path)
    assert docs == {"content/posts/a.md", "content/courses/cs336.md"}
    assert problems == []
    vault = Vault.open(tmp_path)
    vault.refresh()
    assert vault.documents()["content/courses/cs336.md"].type == "course"
    vault.close()


def test_mkdocs_reads_docs_dir_less_exclude_docs(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "mkdocs.yml": "site_name: S\ndocs_dir: src\nexclude_docs: |\n  drafts/\n  *.tmp.md\n"
            "markdown_extensions:\n  - pymdownx.emoji:\n"
            "      emoji_index: !!python/name:material.extensions.emoji.twemoji\n",
            "README.md": "[[nowhere]]\n",
            "src/index.md": "# Home\n",
            "src/drafts/x.md": "[[nowhere]]\n",
            "src/y.tmp.md": "[[nowhere]]\n",
        },
    )
    docs, problems = _docs(tmp_path)
    assert docs == {"src/index.md"} and problems == []


def test_quartz_ignore_patterns_and_d2lbook_exclusions(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "quartz.config.ts": 'const config = { configuration: {\n  ignorePatterns: ["private",'
            ' "templates", "**/drafts"],\n} }\n',
            "docs/quartz.md": "[[nowhere]]\n",
            "content/a.md": "# A\n",
            "content/private/p.md": "[[nowhere]]\n",
            "content/x/drafts/d.md": "[[nowhere]]\n",
            "content/templates/t.md": "[[nowhere]]\n",
        },
    )
    docs, problems = _docs(tmp_path)
    assert docs == {"content/a.md"} and problems == []
    book = tmp_path / "book"
    _write(
        book,
        {
            "config.ini": "[build]\nexclusions = */*_origin.md README.md\n",
            "README.md": "[[nowhere]]\n",
            "chapter/intro.md": "# Intro\n:label:`sec_intro`\n",
            "chapter/intro_origin.md": "# Intro\n:label:`sec_intro`\n",
            "chapter/next.md": "# Next\nSee :numref:`sec_intro`.\n",
        },
    )
    docs, problems = _docs(book)
    assert docs == {"chapter/intro.md", "chapter/next.md"} and problems == []


def test_init_dry_run_says_what_is_read(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {"hugo.toml": 'baseURL = "https://x.org/"\n', "content/a.md": "# A\n", "README.md": "x\n"},
    )
    prepare()
    result = CliRunner().invoke(cli, ["init", str(tmp_path), "--dry-run", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["files"] == 1 and data["generator"] == "hugo"
    assert data["scope"] == ["hugo content: content/"]


def test_raw_html_anchors_are_anchors(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "a.md": "+ [概述](#概述)\n+ [x](#x) [gone](#gone)\n\n"
            '### <span id="概述">1.概述</span>\n\n<a name="x"></a>\n\nText.\n',
            "b.md": "[a](a.md#概述)\n",
        },
    )
    _docs_, problems = _docs(tmp_path)
    assert problems == ["a.md:dangling-anchor"]


def test_a_bracketed_label_before_a_link_is_a_markdown_link(tmp_path: Path) -> None:
    _write(tmp_path, {"a.md": "See [[1]](b.md) and [[2]](https://x.org/).\n", "b.md": "# B\n"})
    vault = Vault.open(tmp_path)
    vault.refresh()
    links = {link.ref.text: link.state for link in vault.links()}
    vault.close()
    assert links == {"b.md": "ok", "https://x.org/": "external"}


def test_obsidian_names_a_note_by_its_file_and_drawings_are_not_notes(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            ".obsidian/app.json": "{}\n",
            "problem.md": "# Text Elements\nA note whose first heading is not its name.\n",
            "Other.md": "# Text Elements\n[[problem]] and ![[Sketch.excalidraw]]\n",
            "Sketch.excalidraw.md": "---\nexcalidraw-plugin: parsed\n---\n# Text Elements\n"
            "[[nowhere]]\n",
        },
    )
    vault = Vault.open(tmp_path)
    vault.refresh()
    docs = vault.documents()
    links = {link.ref.text: (link.state, link.target) for link in vault.links()}
    problems = vault.problems()
    vault.close()
    assert {d.title for d in docs.values()} == {"problem", "Other"}
    assert links["[[problem]]"] == ("ok", "problem.md")
    assert links["![[Sketch.excalidraw]]"][0] == "asset"
    assert problems == []


def test_mkdocs_attr_list_ids_are_anchors(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "mkdocs.yml": "site_name: S\nmarkdown_extensions: [attr_list]\n",
            "docs/a.md": "# A\n\n*   **`locale`**{ #mkdocs-locale }: the locale.\n\n"
            "A paragraph.\n{: #para .note }\n",
            "docs/b.md": "[l](a.md#mkdocs-locale) [p](a.md#para) [gone](a.md#gone)\n",
        },
    )
    _docs_, problems = _docs(tmp_path)
    assert problems == ["docs/b.md:dangling-anchor"]


def test_obsidian_heading_paths_as_obsidian_finds_them(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            ".obsidian/app.json": "{}\n",
            "uv.md": "- [[#extra option#cuda 11.8|cuda]]\n"
            '- [[#<font color="#ffc000">고화질</font>#정도|x]]\n- [[#nope#정도]]\n\n'
            "### extra option\n## other\n#### cuda 11.8\n"
            '## <font color="#ffc000">고화질</font>\n### 정도\n',
        },
    )
    _docs_, problems = _docs(tmp_path)
    assert problems == ["uv.md:dangling-anchor"]


def test_obsidian_and_quartz_find_a_linked_file_by_its_name(tmp_path: Path) -> None:
    for root, marker in ((tmp_path / "o", ".obsidian/app.json"), (tmp_path / "q", "x")):
        files = {
            marker: "{}\n",
            "notes/a.md": "![500](Pasted%20image%201.png) ![](gone.png)\n",
            "notes/attachments/Pasted image 1.png": "png\n",
        }
        if root.name == "q":
            files = {
                "quartz.config.ts": "export default {}\n",
                **{f"content/{k}": v for k, v in files.items() if k != "x"},
            }
        _write(root, files)
        _docs_, problems = _docs(root)
        assert len(problems) == 1 and problems[0].endswith(":missing-attachment"), problems


_HUGO_PAGES = {
    "content/posts/a.md": "---\ntitle: A\nslug: alpha\n---\n[b](/posts/b/) [self](/posts/alpha/)"
    " [gone](/posts/gone/)\n",
    "content/posts/b.md": "---\ntitle: B\n---\n# B\n",
    "content/_index.md": "---\ntitle: Home\n---\n[a](/posts/alpha/)\n",
}


def _site_links(root: Path) -> dict[str, str | None]:
    vault = Vault.open(root)
    vault.refresh()
    rows = vault.store.db.execute("SELECT text, target_key FROM refs WHERE style='site'")
    found = {text: key for text, key in rows}
    vault.close()
    return found


def test_generator_in_studykb_toml_gives_the_rules_of_the_config_file(tmp_path: Path) -> None:
    """``generator = "hugo"`` without a hugo.toml, at the vault's root or with the site in a
    folder of the repository, resolves site links as the configuration file would."""
    configured, named, nested = tmp_path / "c", tmp_path / "n", tmp_path / "s"
    _write(configured, {"hugo.toml": 'baseURL = "https://x.org/"\n', **_HUGO_PAGES})
    _write(named, {"studykb.toml": 'generator = "hugo"\n', **_HUGO_PAGES})
    _write(
        nested,
        {
            "studykb.toml": 'generator = "hugo"\n',
            "README.md": "# Repo\n",
            "tools/notes.md": "# not a page\n",
            **{f"website/{rel}": text for rel, text in _HUGO_PAGES.items()},
        },
    )
    want = _site_links(configured)
    assert want["/posts/b/"] == "content/posts/b.md" and want["/posts/gone/"] is None
    assert _site_links(named) == want
    prefixed = {k: v and f"website/{v}" for k, v in want.items()}
    assert _site_links(nested) == prefixed
    docs, problems = _docs(nested)
    assert docs == {f"website/{rel}" for rel in _HUGO_PAGES}
    assert problems == ["website/content/posts/a.md:dangling-link"]
    prepare()
    result = CliRunner().invoke(cli, ["init", str(nested), "--dry-run"])
    assert 'as a hugo site (generator = "hugo" in studykb.toml, its site in website/)' in (
        " ".join(result.output.split())
    )
    result = CliRunner().invoke(cli, ["init", str(configured), "--dry-run", "--json"])
    assert json.loads(result.output)["reason"] == "hugo.toml"


_MKDOCS_YML = """site_name: S
validation:
  anchors: warn
markdown_extensions:
  - attr_list
  - footnotes
  - toc:
      permalink: true
      slugify: !!python/object/apply:pymdownx.slugs.slugify {kwds: {case: lower}}
nav:
  - Start here: index.md
  - Guide:
    - The guide: guide.md
"""
_MKDOCS_PAGES = {
    "docs/index.md": "# Home\n\nSee [the guide](guide.md#a--b), [again](guide.md#a--b_1),"
    " [unicode](guide.md#ünïcode-ĥeading), [中文](guide.md#中文-标题),"
    " [code](guide.md#the-run_all-call), [custom](guide.md#mine), [para](guide.md#para),"
    " [note](#fn:1), [back](#fnref:1), [start](#home).\n\nA claim.[^1]\n\n"
    "[^1]: The note.\n",
    "docs/guide.md": "# Guide\n\n## A & B\n\n## A & B\n\n## Ünïcode Ĥeading\n\n"
    "## 中文 标题\n\n## The `run_all` call\n\n## Custom { #mine }\n\nText.\n{: #para }\n\n"
    "[planted](#a-b)\n",
}


def test_mkdocs_anchors_are_the_ones_mkdocs_build_makes(tmp_path: Path) -> None:
    """toc's slugify as mkdocs.yml names it (pymdownx's, read as data, never run),
    footnotes and attr_list: every anchor mkdocs resolves is clean, the one planted broken
    anchor (GitHub's slug of ``A & B``) is reported by both; nav gives the titles."""
    pytest.importorskip("mkdocs", reason="mkdocs comes with the dev extras")
    pytest.importorskip("pymdownx", reason="pymdown-extensions comes with the test extras")
    _write(tmp_path, {"mkdocs.yml": _MKDOCS_YML, **_MKDOCS_PAGES})
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-d", str(tmp_path / "out")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    said = [line for line in built.stderr.splitlines() if "WARNING" in line]
    assert len(said) == 1 and "'#a-b'" in said[0], built.stderr
    docs, problems = _docs(tmp_path)
    assert problems == ["docs/guide.md:dangling-anchor"]
    vault = Vault.open(tmp_path)
    vault.refresh()
    assert vault.documents()["docs/guide.md"].title == "The guide"
    assert vault.documents()["docs/index.md"].title == "Start here"
    vault.close()


_TABBED_YML = """site_name: S
validation:
  anchors: warn
markdown_extensions:
  - pymdownx.emoji
  - pymdownx.superfences
  - pymdownx.tabbed:
      alternate_style: true
      combine_header_slug: true
      slugify: !!python/object/apply:pymdownx.slugs.slugify
        kwds:
          case: lower
"""
_TABBED_PAGES = {
    "docs/index.md": "# Home\n\n"
    '=== "Before any heading"\n\n    Text.\n\n'
    "## Logo\n\n"
    '=== ":smile: Image"\n\n    An image.\n\n'
    '=== "Icon, bundled"\n\n    An icon.\n\n'
    "## Again\n\n"
    '=== "... or even me"\n\n    One.\n\n'
    '=== "... or even me"\n\n    Two.\n\n'
    '```\n=== "In code"\n```\n\n'
    "See [a](#home-before-any-heading), [b](#logo-image), [c](#logo-icon-bundled),"
    " [d](#again--or-even-me), [e](#again--or-even-me_1), [planted](#logo-missing),"
    " [code](#again-in-code).\n",
}


def test_mkdocs_tab_ids_are_the_ones_pymdownx_tabbed_makes(tmp_path: Path) -> None:
    """pymdownx.tabbed with a slugify gives each ``=== "Tab"`` an id (after the heading
    above's with ``combine_header_slug``; emoji left out; ``_1`` on a repeat): links to
    them are clean, as the page mkdocs builds holds them; a tab in a code block is no tab.
    (mkdocs' own anchor check runs before tabbed names the tabs, so it warns of all of
    them: the built HTML is what a reader's browser jumps in.)"""
    pytest.importorskip("mkdocs", reason="mkdocs comes with the dev extras")
    pytest.importorskip("pymdownx", reason="pymdown-extensions comes with the test extras")
    _write(tmp_path, {"mkdocs.yml": _TABBED_YML, **_TABBED_PAGES})
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-d", str(tmp_path / "out")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    html = (tmp_path / "out" / "index.html").read_text("utf-8")
    ids = set(re.findall(r'\bid="([^"]+)"', html))
    linked = re.findall(r"\]\(#([^)]+)\)", _TABBED_PAGES["docs/index.md"])
    assert sorted(set(linked) - ids) == ["again-in-code", "logo-missing"]
    vault = Vault.open(tmp_path)
    vault.refresh()
    found = sorted(p.message.split("'")[1] for p in vault.problems())
    vault.close()
    assert found == ["#again-in-code", "#logo-missing"]


def test_material_page_status_is_the_themes(tmp_path: Path) -> None:
    """Material for MkDocs reads ``status: new`` as the page's status in the navigation
    (``new``, ``deprecated``, the identifiers of ``extra.status``): no bad-field there;
    another word, or another theme, is still one."""
    pages = {
        f"docs/{word}.md": f"---\nstatus: {word}\n---\n# {word.title()}\n"
        for word in ("new", "deprecated", "beta", "shelved", "done")
    }
    material = tmp_path / "material"
    _write(
        material,
        {
            "mkdocs.yml": "site_name: S\ntheme:\n  name: material\nextra:\n  status:\n"
            "    beta: In beta\n",
            **pages,
        },
    )
    assert _docs(material)[1] == ["docs/shelved.md:bad-field"]
    vault = Vault.open(material)
    vault.refresh()
    assert vault.documents()["docs/done.md"].status == "done"
    assert vault.documents()["docs/new.md"].status is None
    vault.close()
    other = tmp_path / "other"
    _write(other, {"mkdocs.yml": "site_name: S\ntheme: readthedocs\n", **pages})
    assert sorted(_docs(other)[1]) == [
        "docs/beta.md:bad-field",
        "docs/deprecated.md:bad-field",
        "docs/new.md:bad-field",
        "docs/shelved.md:bad-field",
    ]


def test_a_footnote_is_never_a_link_reference_definition(tmp_path: Path) -> None:
    """``[^1]: [title](https://x.org/a)`` is a footnote in GFM and every generator with
    footnotes (its link is read as a link); CommonMark alone took it for a link reference
    definition, making each ``[^1]`` a link to a file ``[title](https:/x.org/a)``. Python-
    Markdown without ``footnotes`` does the same, so there it stays a definition."""
    page = (
        "# A\n\nA claim[^1] and another[^2].\n\n"
        "[^1]: [三维凸包](https://example.org/hull)\n"
        "[^2]: [the other note](b.md)\n"
    )
    repo = tmp_path / "repo"
    _write(repo, {"a.md": page, "b.md": "# B\n"})
    assert _docs(repo)[1] == []
    vault = Vault.open(repo)
    vault.refresh()
    assert [link.target for link in vault.outgoing("a.md") if link.ref.style != "url"] == ["b.md"]
    vault.close()
    site = tmp_path / "site"
    _write(site, {"mkdocs.yml": "site_name: S\n", "docs/a.md": "A[^1].\n\n[^1]: gone.md\n"})
    assert _docs(site)[1] == ["docs/a.md:dangling-ref"]  # Python-Markdown: a link to gone.md
    _write(site, {"mkdocs.yml": "site_name: S\nmarkdown_extensions: [footnotes]\n"})
    assert _docs(site)[1] == []
