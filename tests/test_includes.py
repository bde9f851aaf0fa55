"""Included files' headings are anchors of the page that includes them.

Hugo's ``{{% include %}}`` and ``{{< readfile >}}`` and pymdownx.snippets' ``--8<--`` paste
another file into a page: a link to one of its headings, from the page itself or from
another page, is no dangling anchor; a link to a heading that is nowhere still is; an
include whose file is missing (or outside the vault) is a warning at its line.
"""

from __future__ import annotations

from pathlib import Path

from studykb.parse import parse_file
from studykb.parse.outline import Outline
from studykb.parse.reading import Reading
from studykb.vault import Vault


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, "utf-8")


def _problems(root: Path) -> list[tuple[str, int, str, str]]:
    vault = Vault.open(root)
    vault.refresh()
    out = [(p.path, p.line, p.code, p.message) for p in vault.problems()]
    vault.close()
    return out


HUGO = {
    "hugo.toml": 'baseURL = "https://x.org/"\n',
    "content/_common/install.md": "---\ntitle: Common\n---\n\n## Install Hugo\n\nSteps.\n",
    "content/docs/guide.md": (
        "---\ntitle: Guide\n---\n\n"  # lines 1-4
        '{{% include "/_common/install" %}}\n\n'  # 5
        "See [installing](#install-hugo) and [nothing](#nowhere).\n\n"  # 7
        '{{< readfile file="shared/part.md" markdown="true" >}}\n\n'  # 9
        "Then [read](#from-readfile).\n\n"  # 11
        '{{% include "/no/such/page" %}}\n\n'  # 13
        '{{< readfile file="../outside.md" >}}\n'  # 15
    ),
    "shared/part.md": "## From readfile\n",
    "content/docs/other.md": (
        "---\ntitle: Other\n---\n\n"
        '[a]({{< ref "docs/guide.md#install-hugo" >}})\n\n'  # 5
        '[b]({{< ref "docs/guide.md#not-there" >}})\n'  # 7
    ),
}


def test_hugo_included_headings_are_anchors(tmp_path: Path) -> None:
    vault = tmp_path / "site"
    _write(vault, HUGO)
    (tmp_path / "outside.md").write_text("## Outside\n", "utf-8")
    found = _problems(vault)
    anchors = [(p, ln) for p, ln, code, _m in found if code == "dangling-anchor"]
    assert anchors == [("content/docs/guide.md", 7), ("content/docs/other.md", 7)]
    missing = [(p, ln, m) for p, ln, code, m in found if code == "missing-attachment"]
    assert [(p, ln) for p, ln, _m in missing] == [
        ("content/docs/guide.md", 13),
        ("content/docs/guide.md", 15),
    ]
    assert "/no/such/page" in missing[0][2] and "../outside.md" in missing[1][2]


def test_an_edit_to_the_included_file_is_seen(tmp_path: Path) -> None:
    _write(tmp_path, HUGO)
    before = [(p, ln) for p, ln, code, _m in _problems(tmp_path) if code == "dangling-anchor"]
    assert ("content/docs/other.md", 7) in before
    include = tmp_path / "content/_common/install.md"
    include.write_text(include.read_text("utf-8") + "\n## Not there\n", "utf-8")
    after = [(p, ln) for p, ln, code, _m in _problems(tmp_path) if code == "dangling-anchor"]
    assert after == [("content/docs/guide.md", 7)]


MKDOCS = {
    "mkdocs.yml": (
        "site_name: x\nmarkdown_extensions:\n  - toc\n"
        "  - pymdownx.snippets:\n      base_path: [includes]\n"
    ),
    "includes/shared.md": "## Shared part\n",
    "docs/secret.md": "# Secret\n\n## Hidden\n",
    "docs/index.md": (
        "# Home\n\n"  # 1
        '--8<-- "shared.md"\n\n'  # 3
        "[a](#shared-part) [b](#missing)\n\n"  # 5
        ';--8<-- "escaped.md"\n\n'  # 7
        '--8<-- "gone.md"\n\n'  # 9
        '--8<-- "../docs/secret.md"\n\n'  # 11
        "[c](#hidden)\n"  # 13
    ),
    "docs/other.md": "# Other\n\n[c](index.md#shared-part)\n\n[d](index.md#nope)\n",
}


def test_mkdocs_snippets_headings_are_anchors(tmp_path: Path) -> None:
    _write(tmp_path, MKDOCS)
    found = _problems(tmp_path)
    anchors = [(p, ln) for p, ln, code, _m in found if code == "dangling-anchor"]
    assert anchors == [("docs/index.md", 5), ("docs/index.md", 13), ("docs/other.md", 5)]
    missing = [(p, ln) for p, ln, code, _m in found if code == "missing-attachment"]
    # base_path is never left: ../docs/secret.md is not read from includes/
    assert missing == [("docs/index.md", 9), ("docs/index.md", 11)]


def test_snippet_lines_as_pymdownx_reads_them() -> None:
    body = (
        '--8<-- "a.md"\n'
        ';--8<-- "no.md"\n'
        "--8<--\n"
        "b.md:3:5\n"
        "; c.md\n"
        "https://x.org/d.md\n"
        "--8<--\n"
        "```\n"
        "--8<-- 'e.md:part'\n"
        "```\n"
    )
    reading = Reading(generator="mkdocs", snippets=True)
    parsed = parse_file("docs/x.md", body.encode(), reading)
    includes = Outline.from_json(parsed.outline).includes
    assert [(i.target, i.line) for i in includes] == [("a.md", 1), ("b.md", 4), ("e.md", 9)]
    # without the extension, the lines are text
    assert not Outline.from_json(parse_file("docs/x.md", body.encode()).outline).includes
