"""Properties of the parser on arbitrary input: it never raises, and every line it reports
lies inside the file (and, for wikilinks, holds the link).
"""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from studykb.parse import normalize_url, parse_file

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: Pieces that reach the interesting corners of the parser.
FRAGMENTS = st.sampled_from(
    [
        "---",
        "+++",
        "...",
        "{",
        "}",
        "[",
        "]",
        "[[",
        "]]",
        "![[",
        "|",
        "#",
        "\\|",
        "`",
        "```",
        "~~~",
        "    ",
        "$",
        "$$",
        "<div>",
        "</div>",
        "<!--",
        "-->",
        "\n",
        "\r\n",
        "\r",
        "\t",
        "\ufeff",
        "\x00",
        "title: x",
        "id: a",
        "tags: [a, b",
        "requires:",
        "  - ",
        "{ref: a}",
        "units:",
        "  - id: u1",
        "[[a]]",
        "[[b|B]]",
        "[[c#H]]",
        "[x](y.md)",
        "[x](../../etc/p)",
        "[x](/abs/)",
        "[x](@/z.md)",
        "https://e.com/a/?utm_x=1#f",
        "www.e.com",
        "<https://e.org>",
        "a = 1",
        '"k": [',
        "&amp;",
        "*",
        "_",
        "> ",
        "- ",
        "1. ",
        "| a | b |",
        "|---|---|",
        "中文",
        "😀",
        "é",
        " ",
        "x",
    ]
)
DOCUMENTS = st.lists(st.one_of(FRAGMENTS, st.text(max_size=8)), max_size=60).map("".join)
PATHS = st.sampled_from(
    [
        "a.md",
        "notes/b.md",
        "courses/c.md",
        "x/y/z/index.md",
        "topics/t.md",
        "entries/e.md",
        "lists/l.md",
    ]
)


def check(path: str, raw: bytes) -> None:
    parsed = parse_file(path, raw)
    text = raw.decode("utf-8-sig", errors="replace")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    count = max(len(lines), 1)
    assert parsed.documents and parsed.documents[0].key == path
    for ref in parsed.references:
        assert 1 <= ref.line <= count, (ref, count)
        assert ref.source.split("#", 1)[0] == path
        if ref.kind == "link" and ref.text.startswith(("[[", "![[")) and "\x00" not in text:
            assert ref.text.replace("\\|", "|") in lines[ref.line - 1].replace("\\|", "|"), ref
    for problem in parsed.problems:
        assert 0 <= problem.line <= count, (problem, count)
        assert problem.path == path
    for doc in parsed.documents:
        assert 1 <= doc.line <= count
        assert doc.title and isinstance(doc.title, str)


@SETTINGS
@given(PATHS, st.text())
def test_any_text_parses(path: str, text: str) -> None:
    check(path, text.encode("utf-8", "surrogatepass"))


@SETTINGS
@given(PATHS, st.binary())
def test_any_bytes_parse(path: str, raw: bytes) -> None:
    check(path, raw)


@SETTINGS
@given(PATHS, DOCUMENTS)
def test_markdown_like_text_parses(path: str, text: str) -> None:
    check(path, text.encode("utf-8", "surrogatepass"))


@SETTINGS
@given(DOCUMENTS)
@example("---\ntitle: [unclosed\n---\nbody\n")
@example('+++\ntitle = "x"\n+++\n\nbody\n')
@example("\n\n---\na: 1\n...\nbody")
def test_the_body_is_found_alike_with_or_without_reading_the_front_matter(text: str) -> None:
    from studykb.parse.frontmatter import split

    read, skipped = split(text), split(text, load=False)
    assert (skipped.body, skipped.body_line, skipped.fm_format) == (
        read.body,
        read.body_line,
        read.fm_format,
    )
    if read.fm_format in ("yaml", "toml"):
        assert skipped.meta == {}


WORD = st.text(st.characters(whitelist_categories=("L", "N")), min_size=1, max_size=8)


@SETTINGS
@given(
    st.lists(
        st.lists(st.one_of(WORD, WORD.map(lambda w: f"[[{w}]]")), max_size=6),
        min_size=1,
        max_size=20,
    ),
    st.booleans(),
    st.sampled_from(["\n", "\r\n"]),
)
def test_wikilinks_are_found_on_their_line(
    paragraphs: list[list[str]], front: bool, eol: str
) -> None:
    lines = [" ".join(words) for words in paragraphs]
    head = ["---", "title: t", "---"] if front else []
    text = eol.join(head + lines) + eol
    parsed = parse_file("n.md", text.encode())
    found = [(r.line, r.target) for r in parsed.references]
    from studykb.parse.links import NOT_LINKS  # [[TOC]]: GitLab's table of contents

    expected = [
        (len(head) + i + 1, w[2:-2])
        for i, words in enumerate(paragraphs)
        for w in words
        if w.startswith("[[") and w[2:-2] not in NOT_LINKS
    ]
    assert found == expected


@SETTINGS
@given(
    st.lists(
        st.sampled_from(["[[a]]", "[x](y.md)", "https://e.com/p", "[[b|c]]", "text"]), max_size=8
    ).map(" ".join),
    st.sampled_from(
        ["```\n{}\n```", "~~~\n{}\n~~~", "    {}", "`{}`", "$${}$$", "$$\n{}\n$$", "<!-- {} -->"]
    ),
)
def test_nothing_in_code_or_math_is_a_link(inner: str, wrapper: str) -> None:
    if "`" in wrapper and "`" in inner:
        return
    parsed = parse_file("n.md", ("before\n\n" + wrapper.format(inner) + "\n").encode())
    assert parsed.references == ()


URLS = st.builds(
    lambda scheme, host, path, query, frag: f"{scheme}://{host}{path}{query}{frag}",
    st.sampled_from(["http", "HTTPS", "https"]),
    st.sampled_from(["example.com", "Example.COM", "a.b.org", "x.org:8080"]),
    st.sampled_from(["", "/", "/a", "/a/", "/A/b/", "/%20x"]),
    st.sampled_from(["", "?a=1", "?utm_source=x", "?a=1&utm_medium=y", "?UTM_x=1&b="]),
    st.sampled_from(["", "#", "#frag", "#a?b"]),
)


@SETTINGS
@given(URLS)
def test_url_normalisation_is_idempotent_and_drops_noise(url: str) -> None:
    once = normalize_url(url)
    assert normalize_url(once) == once
    assert "#" not in once
    assert "utm_" not in once.lower()
    assert not once.endswith("/")
    scheme, _, rest = once.partition("://")
    assert scheme == scheme.lower()
    assert rest.split("/", 1)[0] == rest.split("/", 1)[0].lower()


#: Plain inline text: words, Chinese, spaces, tabs, line breaks and the punctuation that
#: starts no inline rule (``#``, ``:``, ``-``, ``]``...).
PLAIN_WORD = st.sampled_from(
    [
        "a",
        "word",
        "中文",
        "#",
        ":",
        "-",
        "+",
        "=",
        "@",
        "^",
        "{",
        "}",
        "~",
        "%",
        "]",
        ">",
        "|",
        "https://e.com/a",
        "www.x.org",
        "é",
        "😀",
        ".",
        ",",
    ]
)
PLAIN_GAP = st.sampled_from(["", " ", "  ", "   ", "\t", " \t"])
PLAIN_LINE = st.tuples(PLAIN_GAP, st.lists(PLAIN_WORD, min_size=1, max_size=6), PLAIN_GAP).map(
    lambda t: t[0] + " ".join(t[1]) + t[2]
)
PLAIN = st.lists(PLAIN_LINE, min_size=1, max_size=6).map("\n".join)


@SETTINGS
@given(PLAIN)
@example("a  \nb")
@example("a \n\t b\t\nc   \n d")
def test_plain_inline_shortcut_builds_the_tokens_of_the_inline_parser(text: str) -> None:
    """The shortcut for inline content without markup gives markdown-it's own tokens."""
    from studykb.parse.markdown import markdown, plain_inline

    md = markdown()
    for content in {text, text.strip(), text.strip(" \t\n")}:
        if not content:
            continue
        full: list = []
        md.inline.parse(content, md, {}, full)
        fast = plain_inline(content)
        assert [(t.type, t.tag, t.content, t.markup, t.level, t.nesting) for t in fast] == [
            (t.type, t.tag, t.content, t.markup, t.level, t.nesting) for t in full
        ]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abcdefgh"), st.sampled_from("abcdefgh")), max_size=24))
def test_loops_found_on_the_peeled_graph_are_all_the_loops(pairs) -> None:
    """Peeling off documents that cannot be on a loop (checks._on_loops) changes none of
    the ``cycle`` problems networkx finds on the whole ``requires`` graph."""
    from studykb.graph import loops
    from studykb.vault.checks import _cycles, _on_loops

    edges = [(s, t, f"{s}.md", n) for n, (s, t) in enumerate(pairs, 1)]
    whole = sorted(loops(edges))
    assert sorted(loops(_on_loops(edges))) == whole
    assert len(_cycles(edges)) == len(whole)
    assert not _on_loops(edges) or whole
