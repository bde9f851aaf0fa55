"""markdown-it-py plugins for generator syntax: Hugo shortcodes, inline #tags, d2lbook roles.

Each test parses a small document with ``MarkdownIt("commonmark").use(plugin)`` and checks the
tokens and their lines.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.dollarmath import dollarmath_plugin

from studykb.parse.inline_tags import InlineTag, inline_tags, inline_tags_plugin, match_tag
from studykb.parse.shortcodes import parse_args, read_tag, ref_targets, shortcodes_plugin
from studykb.parse.sphinx_refs import LabelDef, RoleRef, read_roles, sphinx_roles_plugin
from studykb.parse.wikilinks import wikilinks_plugin


def _flat(tokens: list[Token]) -> list[Token]:
    out: list[Token] = []
    for token in tokens:
        out.append(token)
        out.extend(token.children or [])
    return out


def _types(tokens: list[Token], *types: str) -> list[Token]:
    return [t for t in _flat(tokens) if t.type in types]


# --- Hugo shortcodes ------------------------------------------------------------------------


@pytest.fixture
def hugo() -> MarkdownIt:
    return MarkdownIt("commonmark").use(shortcodes_plugin).use(wikilinks_plugin)


CODE_TOGGLE = """\
# Menus

Define menu entries in the site configuration:
{{< code-toggle file=hugo >}}
[[menus.main]]
name = 'Home'
pageRef = '/'

[[menus.main]]
name = 'Products'
{{< /code-toggle >}}

After the block.
"""


def test_code_toggle_body_is_raw(hugo: MarkdownIt) -> None:
    # Hugo's own docs (content/en/content-management/menus.md): 119 false wikilinks before
    tokens = hugo.parse(CODE_TOGGLE)
    assert _types(tokens, "wikilink") == []
    [block] = _types(tokens, "shortcode_block")
    assert block.meta["name"] == "code-toggle"
    assert block.meta["params"] == {"positional": [], "named": {"file": "hugo"}}
    assert block.meta["delimiter"] == "<"
    assert block.map == [3, 11]  # 0-based, lines 4-11 of the file
    assert block.content.startswith("[[menus.main]]\n")
    assert block.content.endswith("name = 'Products'\n")
    # what follows is ordinary Markdown on the right line
    after = [t for t in tokens if t.type == "inline"][-1]
    assert after.content == "After the block." and after.map == [12, 13]


def test_percent_body_is_markdown(hugo: MarkdownIt) -> None:
    src = "{{% note %}}\nSee [[Other]] and **bold**.\n{{% /note %}}\n\n[[After]]\n"
    tokens = hugo.parse(src)
    kinds = [t.type for t in tokens]
    assert kinds[0] == "shortcode_open" and "shortcode_close" in kinds
    links = _types(tokens, "wikilink")
    assert [w.meta["target"] for w in links] == ["Other", "After"]
    inline = [t for t in tokens if t.type == "inline"]
    assert [t.map for t in inline] == [[1, 2], [4, 5]]


def test_markdown_names_option(hugo: MarkdownIt) -> None:
    src = '{{< details summary="More" >}}\n[[Inside]]\n{{< /details >}}\n'
    assert [w.meta["target"] for w in _types(hugo.parse(src), "wikilink")] == ["Inside"]
    raw = MarkdownIt("commonmark").use(shortcodes_plugin, markdown_names=()).use(wikilinks_plugin)
    tokens = raw.parse(src)
    assert _types(tokens, "wikilink") == []
    assert _types(tokens, "shortcode_block")[0].meta["markdown"] is False


def test_highlight_and_nested(hugo: MarkdownIt) -> None:
    src = """{{< tabs >}}
{{< tab "Go" >}}
x := [[a]]
{{< /tab >}}
{{< /tabs >}}
{{< highlight go "linenos=table,hl_lines=8" >}}
m := map[string][]int{}
{{< /highlight >}}
"""
    tokens = hugo.parse(src)
    assert _types(tokens, "wikilink") == []
    blocks = _types(tokens, "shortcode_block")
    assert [b.meta["name"] for b in blocks] == ["tabs", "highlight"]
    assert blocks[1].meta["params"]["positional"] == ["go", "linenos=table,hl_lines=8"]
    assert [b.map for b in blocks] == [[0, 5], [5, 8]]


def test_self_closing_and_standalone(hugo: MarkdownIt) -> None:
    src = (
        '{{< figure src="/images/x.png" alt="An \\"x\\" >}}" >}}\n\n'
        "{{< youtube w7Ft2ymGmfc />}}\n\ntext\n"
    )
    tokens = hugo.parse(src)
    shortcodes = _types(tokens, "shortcode")
    assert [s.meta["name"] for s in shortcodes] == ["figure", "youtube"]
    assert shortcodes[0].meta["params"]["named"]["src"] == "/images/x.png"
    assert shortcodes[0].meta["params"]["named"]["alt"] == 'An "x" >}}'
    assert [s.map for s in shortcodes] == [[0, 1], [2, 3]]


def test_multiline_tag(hugo: MarkdownIt) -> None:
    src = '{{< figure\n  src="a.png"\n  title="A"\n>}}\n\nNext\n'
    tokens = hugo.parse(src)
    [figure] = _types(tokens, "shortcode")
    assert figure.map == [0, 4]
    assert figure.meta["params"]["named"] == {"src": "a.png", "title": "A"}


def _refs(tokens: list[Token]) -> list[tuple[str, str, str]]:
    return [
        (t.meta["target"], t.meta["anchor"], t.meta["label"])
        for t in _types(tokens, "shortcode_ref")
    ]


def test_ref_and_relref(hugo: MarkdownIt) -> None:
    src = (
        'See [the docs]({{< ref "docs/intro.md#setup" >}}) and\n'
        '{{< relref path="/blog/post.md" lang="fr" >}}, [here]({{< ref "#local" >}}).\n'
        '{{% ref "old.md" %}}\n'
    )
    tokens = hugo.parse(src)
    assert _refs(tokens) == [
        ("docs/intro.md", "setup", "the docs"),
        ("/blog/post.md", "", ""),
        ("", "local", "here"),
        ("old.md", "", ""),
    ]
    lines = [t.meta["line"] for t in _types(tokens, "shortcode_ref")]
    assert lines == [0, 1, 1, 2]
    relref = _types(tokens, "shortcode_ref")[1]
    assert relref.meta["kind"] == "relref" and relref.meta["lang"] == "fr"
    # markup is the exact source, so a reader's cursor can find it
    assert all(t.markup in src for t in _types(tokens, "shortcode_ref"))


def test_ref_alone_on_a_line(hugo: MarkdownIt) -> None:
    [ref] = _types(hugo.parse('{{< ref "x.md" >}}\n'), "shortcode_ref")
    assert ref.meta["target"] == "x.md" and ref.map == [0, 1]


def test_escaped_shortcode_is_text(hugo: MarkdownIt) -> None:
    src = 'Write {{</* ref "x.md" */>}} to link.\n'
    tokens = hugo.parse(src)
    assert _types(tokens, "shortcode_ref", "shortcode_inline") == []
    [inline] = [t for t in tokens if t.type == "inline"]
    assert "".join(c.content for c in inline.children or []) == 'Write {{< ref "x.md" >}} to link.'


def test_shortcode_in_code_is_code(hugo: MarkdownIt) -> None:
    src = '```\n{{< ref "x.md" >}}\n```\n\n`{{< ref "y.md" >}}`\n\n    {{< ref "z.md" >}}\n'
    assert _types(hugo.parse(src), "shortcode_ref", "shortcode", "shortcode_block") == []


def test_inline_paired_shortcode(hugo: MarkdownIt) -> None:
    tokens = hugo.parse("Press {{< kbd >}}Ctrl+[[x]]{{< /kbd >}} now.\n")
    [short] = _types(tokens, "shortcode_inline")
    assert short.meta["name"] == "kbd" and short.content == "Ctrl+[[x]]"
    assert _types(tokens, "wikilink") == []


def test_shortcode_interrupts_paragraph_and_lists(hugo: MarkdownIt) -> None:
    src = "- item\n\n  {{< code >}}\n  [[a]]\n  {{< /code >}}\n"
    tokens = hugo.parse(src)
    assert _types(tokens, "wikilink") == []
    assert _types(tokens, "shortcode_block")[0].map == [2, 5]


def test_unclosed_paired_name_is_standalone(hugo: MarkdownIt) -> None:
    tokens = hugo.parse("{{< figure src=a.png >}}\n\n{{< figure src=b.png >}}\n\n[[Real]]\n")
    assert len(_types(tokens, "shortcode")) == 2
    assert [w.meta["target"] for w in _types(tokens, "wikilink")] == ["Real"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ('"a" b name="c d"', (["a", "b"], {"name": "c d"})),
        ('`raw "x"` k=v', (['raw "x"'], {"k": "v"})),
        ("", ([], {})),
    ],
)
def test_parse_args(args: str, expected: tuple[list[str], dict[str, Any]]) -> None:
    assert parse_args(args) == expected


def test_read_tag() -> None:
    tag = read_tag("{{< /note >}}", 0)
    assert tag is not None and tag.closing and tag.name == "note"
    tag = read_tag("{{< name />}}", 0)
    assert tag is not None and tag.self_closing
    assert read_tag("{{ .Title }}", 0) is None
    assert read_tag("{{< unterminated", 0) is None


def test_ref_targets_on_a_string() -> None:
    dest = '{{< ref "posts/foo.md#part-2" >}}'
    assert ref_targets(dest) == [("posts/foo.md", "part-2", 0)]
    assert ref_targets("no shortcode here") == []
    assert ref_targets('{{% relref path="a.md" %}} {{< figure >}}') == [("a.md", "", 0)]


# --- inline #tags ---------------------------------------------------------------------------


@pytest.fixture
def tags_md() -> MarkdownIt:
    return MarkdownIt("commonmark").use(inline_tags_plugin).use(wikilinks_plugin)


TAGS_DOC = """\
# Heading #intitle

#start of a line, #nested/tag, #深度学习，more
C# and page#anchor &#123; #123 #y1984 `#code` \\#escaped
[#linktext](#x) [[Note#Heading]] <https://x.com/#frag> https://x.com/#frag

```
#fenced
```

    #indented-code

- item #in-list
> quote #in-quote

#tag. #emoji🚀 #1-2
"""


def test_inline_tags(tags_md: MarkdownIt) -> None:
    # rules: help.obsidian.md "Tag format"
    assert inline_tags(tags_md.parse(TAGS_DOC)) == [
        InlineTag("intitle", 1),
        InlineTag("start", 3),
        InlineTag("nested/tag", 3),
        InlineTag("深度学习", 3),
        InlineTag("y1984", 4),
        InlineTag("in-list", 13),
        InlineTag("in-quote", 14),
        InlineTag("tag", 16),
        InlineTag("emoji🚀", 16),
        InlineTag("1-2", 16),
    ]


def test_heading_marker_is_not_a_tag(tags_md: MarkdownIt) -> None:
    assert inline_tags(tags_md.parse("# Title\n## Sub\n#notheading\n")) == [
        InlineTag("notheading", 3)
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("#tag", "tag"),
        ("#a/b/c", "a/b/c"),
        ("#1984", None),
        ("#y1984", "y1984"),
        ("#tag,next", "tag"),
        ("#with space", "with"),
        ("#", None),
        ("# spaced", None),
        ("#中文标签。", "中文标签"),
        ("#x_y-z", "x_y-z"),
    ],
)
def test_match_tag(text: str, expected: str | None) -> None:
    assert match_tag(text) == expected


def test_tag_lines_in_a_long_paragraph(tags_md: MarkdownIt) -> None:
    src = "one\n`code\nspan` two\n#three\n"
    assert inline_tags(tags_md.parse(src)) == [InlineTag("three", 4)]


# --- d2lbook roles --------------------------------------------------------------------------


@pytest.fixture
def d2l() -> MarkdownIt:
    return (
        MarkdownIt("commonmark")
        .enable("table")
        .use(dollarmath_plugin, double_inline=True)
        .use(sphinx_roles_plugin)
    )


D2L_DOC = """\
# 注意力机制
:label:`chap_attention`

如 :numref:`sec_attention-cues` 所示，见 :ref:`标题 <sec_x>`。

![A cat](../img/cat.jpg)
:width:`300px`
:label:`fig_cat`

$$y = \\mathrm{softmax}(x)$$
:eqlabel:`eq_softmax`

In :eqref:`eq_softmax`, see :cite:`Bahdanau.Cho.Bengio.2014,Vaswani.2017`.

`:numref:`in_code``

```python
# :numref:`fenced`
```

| a | b |
|---|---|
| 1 | 2 |
:label:`tab_x`

a:numref:`notarole`
"""


def test_d2lbook_roles(d2l: MarkdownIt) -> None:
    roles = read_roles(d2l.parse(D2L_DOC))
    assert roles.labels == [
        LabelDef("chap_attention", 2, "section", "注意力机制"),
        LabelDef("fig_cat", 8, "figure"),
        LabelDef("eq_softmax", 11, "equation"),
        LabelDef("tab_x", 24, "table"),
    ]
    assert roles.references == [
        RoleRef("numref", "sec_attention-cues", 4),
        RoleRef("ref", "sec_x", 4, "标题"),
        RoleRef("eqref", "eq_softmax", 13),
    ]
    assert roles.citations == [
        RoleRef("cite", "Bahdanau.Cho.Bengio.2014", 13),
        RoleRef("cite", "Vaswani.2017", 13),
    ]


def test_d2l_roles_render_without_code(d2l: MarkdownIt) -> None:
    html = d2l.render("See :numref:`sec_x`.\n")
    assert "<code>" not in html and "sec_x" in html


# --- the fixture sites ------------------------------------------------------------------------

SITES = Path(__file__).parent / "fixtures" / "sites"


def _expected(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SITES / name / "expected.json").read_text("utf-8"))
    return data


def _body(path: Path) -> str:
    """The file with its front matter blanked, so token lines are file lines."""
    lines = path.read_text(encoding="utf-8").split("\n")
    if lines and lines[0] in ("---", "+++"):
        end = lines.index(lines[0], 1)
        lines[: end + 1] = [""] * (end + 1)
    return "\n".join(lines)


def _md_files(name: str) -> list[Path]:
    return sorted(p for p in (SITES / name).rglob("*.md") if ".obsidian" not in p.parts)


def test_hugo_fixture_refs(hugo: MarkdownIt) -> None:
    wanted = {(r["source"], r["line"]) for r in _expected("hugo")["references"]}
    for path in _md_files("hugo"):
        rel = path.relative_to(SITES / "hugo").as_posix()
        tokens = hugo.parse(_body(path))
        assert _types(tokens, "wikilink") == [], rel  # [[menus.main]] is TOML
        for block in tokens:
            if block.type != "inline" or block.map is None:
                continue
            for child in block.children or []:
                if child.type == "shortcode_ref":
                    assert (rel, block.map[0] + child.meta["line"] + 1) in wanted


def test_obsidian_fixture_tags(tags_md: MarkdownIt) -> None:
    found = []
    for path in _md_files("obsidian"):
        rel = path.relative_to(SITES / "obsidian").as_posix()
        found += [
            {"path": rel, "line": t.line, "tag": t.name}
            for t in inline_tags(tags_md.parse(_body(path)))
        ]
    assert sorted(found, key=str) == sorted(_expected("obsidian")["tags"], key=str)


def test_d2lbook_fixture_roles(d2l: MarkdownIt) -> None:
    expected = _expected("d2lbook")
    labels: list[dict[str, Any]] = []
    refs: list[dict[str, Any]] = []
    cites: list[dict[str, Any]] = []
    for path in _md_files("d2lbook"):
        rel = path.relative_to(SITES / "d2lbook").as_posix()
        roles = read_roles(d2l.parse(_body(path)))
        labels += [
            {"path": rel, "line": x.line, "label": x.name, "kind": x.kind} for x in roles.labels
        ]
        refs += [
            {"source": rel, "line": x.line, "role": x.role, "label": x.target}
            for x in roles.references
        ]
        cites += [{"source": rel, "line": x.line, "key": x.target} for x in roles.citations]
    assert sorted(labels, key=str) == sorted(expected["labels"], key=str)
    defined = {x["label"]: x["path"] for x in labels}
    resolved = [
        {
            "source": r["source"],
            "line": r["line"],
            "role": r["role"],
            "target": defined[r["label"]],
            "anchor": r["label"],
        }
        for r in refs
    ]
    wanted = [r for r in expected["references"] if "role" in r]
    assert sorted(resolved, key=str) == sorted(wanted, key=str)
    assert cites == expected["citations"]
