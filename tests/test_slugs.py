"""Heading anchors per generator: tables of heading text -> anchor, each row with its source."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from studykb.parse.slugs import (
    FLAVOURS,
    Heading,
    anchors,
    deunicode,
    find_heading,
    index,
    plain_text,
    slug,
    split_attributes,
)


def _headings(*texts: str, level: int = 2) -> list[Heading]:
    return [Heading(text, level, n + 1) for n, text in enumerate(texts)]


# (heading text as written, expected anchor); the comment says where the rule comes from
GITHUB = [
    ("Hello World", "hello-world"),
    # github-slugger fixtures "Characters: dash/underscore/dot"
    ("heading with a - dash", "heading-with-a---dash"),
    ("heading with an _ underscore", "heading-with-an-_-underscore"),
    ("heading with a period.txt", "heading-with-a-periodtxt"),
    (
        "exchange.bind_headers(exchange, routing [, bindCallback])",
        "exchangebind_headersexchange-routing--bindcallback",
    ),
    # html-pipeline PUNCTUATION_REGEXP /[^\p{Word}\- ]/: "&" dropped, both spaces kept
    ("A & B", "a--b"),
    # github-slugger "Non-ascii": ♥ and emoji dropped, en dash dropped, CJK and Cyrillic kept
    ("I ♥ unicode", "i--unicode"),
    ("😄 unicode emoji", "-unicode-emoji"),
    ("en–dash", "endash"),
    ("Привет non-latin 你好", "привет-non-latin-你好"),
    ("apostrophe’s should be trimmed", "apostrophes-should-be-trimmed"),
    # GitHub slugs the rendered text: markup, link targets and entities are not text
    ("**Bold** and `code`", "bold-and-code"),
    ("[Link](https://x.com) text", "link-text"),
    ("A &amp; B", "a--b"),
    ("Use `__init__` here", "use-__init__-here"),
    ("__init__ strong", "init-strong"),
    ("snake_case name", "snake_case-name"),
    ("<code>tag</code> stripped", "tag-stripped"),
    (r"Escaped \*star\*", "escaped-star"),
    ("C++ / C#", "c--c"),
    ("v1.0.0 (Apr 21, 2019)", "v100-apr-21-2019"),
    ("深度学习：入门", "深度学习入门"),  # full-width colon is punctuation
]

# Hugo 0.111.3 (Debian), autoHeadingIDType "github": every row rendered and read back
HUGO = [
    ("A & B", "a--b"),
    ("[Link](http://x.com) text", "linkhttpxcom-text"),  # Goldmark slugs the source line
    ("**Bold** and `code`", "bold-and-code"),
    ("Emoji 😄 here", "emoji--here"),
    ("Café naïve", "café-naïve"),
    ("A &amp; B", "a-amp-b"),  # source, not text: the entity's letters stay
    ("深度学习 入门", "深度学习-入门"),
    ("Ⅳ Roman", "-roman"),  # unicode.IsDigit is Nd only
    ("Hindi हिन्दी", "hindi-हनद"),  # marks dropped (autoid.go keeps letters and digits)
    ("under_score‿x", "under_scorex"),  # only "_" of the connectors
    ("C++ / C#", "c--c"),
    ("get_page", "get_page"),
    ("Custom {#my-id}", "my-id"),  # parser.attribute.title (on by default)
    ("", "heading"),  # an empty id becomes "heading"
]

# autoid.go: blackfriday.SanitizedAnchorName; github-ascii: RemoveAccents then ASCII only
HUGO_BLACKFRIDAY = [
    ("A & B", "a-b"),
    ("v1.0.0 (Apr 21, 2019)", "v1-0-0-apr-21-2019"),  # goldmark issue #46 (blackfriday ids)
    ("under_score", "under-score"),
    ("Café", "café"),
]
HUGO_ASCII = [
    ("Café naïve", "cafe-naive"),
    ("深度学习 入门", "-"),
]

# Zola slugs.rs tests (can_slugify_anchors) and the slug crate's doc tests
ZOLA_ON = [
    ("input", "input"),
    ("test ", "test"),
    ("tes t", "tes-t"),
    ("dot. ", "dot"),
    ("日本", "ri-ben"),
    ("héhé", "hehe"),
    ("test (hey)", "test-hey"),
    ("My Test String!!!1!1", "my-test-string-1-1"),
    ("  --test_-_cool", "test-cool"),
    ("Æúű--cool?", "aeuu-cool"),
    ("You & Me", "you-me"),
    ("get_page", "get-page"),
    ("`get_page()` function", "get-page-function"),
    ("Something exciting!", "something-exciting"),  # docs: content/linking.md
    ("Something manual! {#manual}", "manual"),
]
ZOLA_SAFE = [("test ", "test_"), ("tes t", "tes_t"), ("test (hey)", "test_hey"), ("日本", "日本")]
ZOLA_OFF = [("test ", "test_"), ("test (hey)", "test_(hey)"), ("héhé", "héhé")]

# GitLab docs "Heading IDs and links" + Gitlab::Utils::Markdown#string_to_anchor
GITLAB = [
    ("This heading has spaces in it", "this-heading-has-spaces-in-it"),
    ("This heading has a 😃 in it", "this-heading-has-a-in-it"),
    ("This heading has Unicode in it. 한글", "this-heading-has-unicode-in-it-한글"),
    ("This heading has 3.5 in it (and parentheses)", "this-heading-has-35-in-it-and-parentheses"),
    (
        "This heading has  multiple spaces and --- hyphens",
        "this-heading-has-multiple-spaces-and-hyphens",
    ),
    ("123", "anchor-123"),  # digits-only ids would clash with issue references
]


@pytest.mark.parametrize(("text", "expected"), GITHUB)
def test_github(text: str, expected: str) -> None:
    assert slug(text, "github") == expected


@pytest.mark.parametrize(("text", "expected"), HUGO)
def test_hugo(text: str, expected: str) -> None:
    assert anchors([Heading(text, 2, 1)], "hugo") == [expected]


@pytest.mark.parametrize(("text", "expected"), HUGO_BLACKFRIDAY)
def test_hugo_blackfriday(text: str, expected: str) -> None:
    assert slug(text, "hugo", id_type="blackfriday") == expected


@pytest.mark.parametrize(("text", "expected"), HUGO_ASCII)
def test_hugo_github_ascii(text: str, expected: str) -> None:
    assert slug(text, "hugo", id_type="github-ascii") == expected


@pytest.mark.parametrize(("text", "expected"), ZOLA_ON)
def test_zola_on(text: str, expected: str) -> None:
    assert anchors([Heading(text, 2, 1)], "zola") == [expected]


@pytest.mark.parametrize(("text", "expected"), ZOLA_SAFE)
def test_zola_safe(text: str, expected: str) -> None:
    assert slug(text, "zola", strategy="safe") == expected


@pytest.mark.parametrize(("text", "expected"), ZOLA_OFF)
def test_zola_off(text: str, expected: str) -> None:
    assert slug(text, "zola", strategy="off") == expected


@pytest.mark.parametrize(("text", "expected"), GITLAB)
def test_gitlab(text: str, expected: str) -> None:
    assert slug(text, "gitlab") == expected


# --- duplicates --------------------------------------------------------------------------------


def test_github_duplicates_follow_github_slugger_fixtures() -> None:
    # github-slugger test/fixtures.json, "Repetition (1)".."(5)" and "More repetition"
    texts = ["echo", "echo", "echo 1", "echo-1", "echo", "foxtrot-1", "foxtrot", "foxtrot"]
    assert anchors(_headings(*texts), "github") == [
        "echo",
        "echo-1",
        "echo-1-1",
        "echo-1-2",
        "echo-2",
        "foxtrot-1",
        "foxtrot",
        "foxtrot-2",
    ]


def test_hugo_duplicates_and_explicit_ids() -> None:
    # Hugo 0.111.3: Dup, Dup, dup-1 -> dup, dup-1, dup-1-1; explicit ids are registered in
    # document order (Goldmark's IDs.Put), so a later auto id steps around them
    hs = _headings("Dup", "Dup", "dup-1", "Intro {#intro}", "Intro", "!!!", "")
    assert anchors(hs, "hugo") == [
        "dup",
        "dup-1",
        "dup-1-1",
        "intro",
        "intro-1",
        "heading",
        "heading-1",
    ]


def test_explicit_id_field_wins() -> None:
    hs = [Heading("Setup", 2, 1, explicit_id="install"), Heading("Install", 2, 3)]
    assert anchors(hs, "hugo") == ["install", "install-1"]
    assert anchors(hs, "github") == ["install", "install-1"]


def test_zola_duplicates() -> None:
    # docs content/linking.md: "Example code" twice -> example-code, example-code-1
    hs = _headings("Something exciting!", "Example code", "Something else", "Example code")
    assert anchors(hs, "zola") == [
        "something-exciting",
        "example-code",
        "something-else",
        "example-code-1",
    ]


def test_gitlab_counter_is_per_id() -> None:
    # Banzai TableOfContentsFilter: headers[id] counter, no check against made ids
    hs = _headings("a", "a", "a 1")
    assert anchors(hs, "gitlab") == ["a", "a-1", "a-1"]


def test_hugo_definition_terms_only_when_asked() -> None:
    hs = [Heading("Term", 0, 1), Heading("Term", 2, 3)]
    assert anchors(hs, "hugo") == ["", "term"]
    assert anchors(hs, "hugo", definition_terms=True) == ["term", "term-1"]
    assert anchors([Heading("!!", 0, 1)], "hugo", definition_terms=True) == ["id"]


def test_hugo_uses_the_last_line_of_a_setext_heading() -> None:
    # Goldmark's generateAutoHeadingID reads node.Lines() last line
    assert anchors([Heading("First line\nSecond line", 1, 1)], "hugo") == ["second-line"]


def test_hugo_attributes_off() -> None:
    assert anchors([Heading("Custom {#my-id}", 2, 1)], "hugo", attributes=False) == ["custom-my-id"]


# --- attribute blocks and plain text -------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "dialect", "expected"),
    [
        ("Title {#id}", "goldmark", ("Title", "id")),
        ("Title {#id .cls key=value}", "goldmark", ("Title", "id")),
        ("Title {.cls}", "goldmark", ("Title", None)),
        ('Title {id="x y"}', "goldmark", ("Title", "x y")),
        ("Sets {a, b}", "goldmark", ("Sets {a, b}", None)),  # not attributes: stays text
        ("Title {#1-s.-incarnata}", "goldmark", ("Title", "1-s")),  # hugo#6548
        ("Title {#1-s.-incarnata}", "pulldown", ("Title", "1-s.-incarnata")),
        ("No braces", "goldmark", ("No braces", None)),
        (r"Escaped \{#id}", "goldmark", (r"Escaped \{#id}", None)),
    ],
)
def test_split_attributes(text: str, dialect: str, expected: tuple[str, str | None]) -> None:
    assert split_attributes(text, dialect) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain", "plain"),
        ("**b** *i* ~~s~~ ==h==", "b i s h"),
        ("[label](url.md) and ![alt](img.png)", "label and alt"),
        ("[[Note|shown]] and [[Other]]", "shown and Other"),
        ("`a*b*c` code", "a*b*c code"),
        ("`` a`b ``", "a`b"),
        ("&lt;tag&gt; &#35;", "<tag> #"),
        ("<span class='x'>in</span>", "in"),
        ("<https://example.org>", "https://example.org"),
    ],
)
def test_plain_text(text: str, expected: str) -> None:
    assert plain_text(text) == expected


def test_deunicode() -> None:
    assert deunicode("Привет") == "Privet"
    assert deunicode("深度学习").split() == ["shen", "du", "xue", "xi"]
    assert deunicode("Straße") == "Strasse"


# --- find_heading ---------------------------------------------------------------------------------


def test_find_by_anchor_and_by_heading_text() -> None:
    hs = _headings("Getting Started", "A & B", "深度学习")
    assert find_heading(hs, "getting-started", "github") is hs[0]
    assert find_heading(hs, "Getting Started", "github") is hs[0]  # raw text slugs to it
    assert find_heading(hs, "a--b", "github") is hs[1]
    assert find_heading(hs, "user-content-a--b", "github") is hs[1]
    assert find_heading(hs, "%E6%B7%B1%E5%BA%A6%E5%AD%A6%E4%B9%A0", "github") is hs[2]
    assert find_heading(hs, "missing", "github") is None
    assert find_heading(hs, "", "github") is None


def test_find_duplicate_numbered() -> None:
    hs = _headings("Setup", "Usage", "Setup")
    assert find_heading(hs, "setup-1", "github") is hs[2]
    assert find_heading(hs, "setup-1", "hugo") is hs[2]
    assert find_heading(hs, "setup-1", "zola") is hs[2]


def test_find_zola_get_page() -> None:
    hs = _headings("`get_page`", "Other")
    assert find_heading(hs, "get-page", "zola") is hs[0]
    assert find_heading(hs, "get_page", "zola") is hs[0]  # text that slugs to it
    assert find_heading(hs, "get_page", "hugo") is hs[0]


def test_find_hugo_custom_id() -> None:
    hs = _headings("Install {#setup}", "Usage")
    assert find_heading(hs, "setup", "hugo") is hs[0]
    assert find_heading(hs, "install", "hugo") is None  # the custom id replaces the slug


def test_find_obsidian_text_case_insensitive() -> None:
    hs = _headings("Step 1: Install", "**Bold** heading", "C# basics")
    assert find_heading(hs, "step 1: install", "obsidian") is hs[0]
    assert find_heading(hs, "Step 1 Install", "obsidian") is hs[0]  # ":" is not needed
    assert find_heading(hs, "Bold heading", "obsidian") is hs[1]
    # hyphens and punctuation count as spacing, so a slug-like subpath still finds it
    assert find_heading(hs, "step-1-install", "obsidian") is hs[0]
    assert find_heading(hs, "step 2", "obsidian") is None
    assert find_heading(hs, "^block1", "obsidian") is None


def test_find_obsidian_nested() -> None:
    hs = [
        Heading("Note", 1, 1),
        Heading("Setup", 2, 3),
        Heading("Linux", 3, 5),
        Heading("Usage", 2, 7),
        Heading("Linux", 3, 9),
    ]
    assert find_heading(hs, "Usage#Linux", "obsidian") is hs[4]
    assert find_heading(hs, "Setup#Linux", "obsidian") is hs[2]
    assert find_heading(hs, "Note#Usage#Linux", "obsidian") is hs[4]
    assert find_heading(hs, "Linux", "obsidian") is hs[2]  # the first one
    assert find_heading(hs, "Linux#Usage", "obsidian") is None  # order matters
    assert find_heading(hs, "Missing#Linux", "obsidian") is None


def test_index_reused() -> None:
    hs = _headings("One", "Two")
    idx = index(hs, "github")
    assert idx.anchors == ["one", "two"]
    assert idx.find("two") is hs[1]


def test_bad_flavour_and_option() -> None:
    with pytest.raises(ValueError):
        anchors([], "pandoc")
    with pytest.raises(TypeError):
        anchors([], "github", id_type="github")
    with pytest.raises(ValueError):
        anchors([], "hugo", id_type="pandoc")


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_every_flavour_handles_odd_text(flavour: str) -> None:
    hs = _headings("", "   ", "`", "[", "{#}", "&", "\\", "🙂", "a" * 5000)
    assert len(anchors(hs, flavour)) == len(hs)


def _probes(monkeypatch: pytest.MonkeyPatch, hs: list[Heading], flavour: str) -> int:
    """How many names :func:`anchors` looked up to number ``hs``."""
    from studykb.parse import slugs

    count = [0]
    has = slugs._Taken.has

    def counted(self: object, name: str) -> bool:
        count[0] += 1
        return has(self, name)  # type: ignore[arg-type]

    monkeypatch.setattr(slugs._Taken, "has", counted)
    anchors(hs, flavour)
    monkeypatch.setattr(slugs._Taken, "has", has)
    return count[0]


@pytest.mark.parametrize("flavour", ["github", "hugo", "zola"])
def test_numbering_headings_grows_linearly(monkeypatch: pytest.MonkeyPatch, flavour: str) -> None:
    """Work per heading stays the same however many headings share a name (the timing
    is in benchmarks/bench_bounds.py)."""
    for texts in (
        lambda n: [f"Section {k} – **part** `x_{k}` & more" for k in range(n)],
        lambda n: ["Example"] * n,  # every one numbered: example, example-1, ...
        lambda n: ["Example", "Example-1", "Example"] * (n // 3),  # numbers taken by hand
    ):
        small = _probes(monkeypatch, _headings(*texts(600)), flavour)
        large = _probes(monkeypatch, _headings(*texts(6000)), flavour)
        assert large <= 10 * small + 10 and large <= 3 * 6000
    assert anchors(_headings("Example", "Example-1", "Example", "Example"), "github") == [
        "example",
        "example-1",
        "example-2",
        "example-3",
    ]


# --- the fixture sites: anchors as the generator renders them ------------------------------------


def _site_headings(path: Path) -> list[Heading]:
    from markdown_it import MarkdownIt

    from studykb.parse.shortcodes import shortcodes_plugin

    lines = path.read_text(encoding="utf-8").split("\n")
    if lines and lines[0] in ("---", "+++"):  # blank the front matter, keep line numbers
        end = lines.index(lines[0], 1)
        lines[: end + 1] = [""] * (end + 1)
    tokens = MarkdownIt("commonmark").use(shortcodes_plugin).parse("\n".join(lines))
    return [
        Heading(tokens[n + 1].content, int(tok.tag[1]), tok.map[0] + 1)
        for n, tok in enumerate(tokens)
        if tok.type == "heading_open" and tok.map
    ]


SITES = Path(__file__).parent / "fixtures" / "sites"


@pytest.mark.parametrize("name", ["hugo", "zola", "github"])
def test_fixture_site_anchors(name: str) -> None:
    from studykb.vault.flavour import detect

    site = detect(SITES / name)
    expected = json.loads((SITES / name / "expected.json").read_text(encoding="utf-8"))
    for rel, wanted in expected["anchors"].items():
        headings = _site_headings(SITES / name / rel)
        assert anchors(headings, site.heading_flavour, **site.heading_options) == wanted, rel
    # every same-site anchor in the references names a heading of its target
    for ref in expected["references"]:
        if ref["anchor"] and ref["target"].endswith(".md"):
            headings = _site_headings(SITES / name / ref["target"])
            found = find_heading(
                headings, ref["anchor"], site.heading_flavour, **site.heading_options
            )
            assert found is not None, ref


def test_obsidian_fixture_heading_links() -> None:
    expected = json.loads((SITES / "obsidian" / "expected.json").read_text(encoding="utf-8"))
    for ref in expected["references"]:
        if "heading_line" not in ref:
            continue
        headings = _site_headings(SITES / "obsidian" / ref["target"])
        found = find_heading(headings, ref["anchor"], "obsidian")
        assert found is not None and found.line == ref["heading_line"], ref
