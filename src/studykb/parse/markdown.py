"""The markdown-it-py instance that reads notes, its fast inline rule, and bare URLs (the
body itself is read in ``parse/body.py``)."""

from __future__ import annotations

import re

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock, paragraph
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from mdit_py_plugins.dollarmath import dollarmath_plugin

from studykb.parse.inline_tags import inline_tags_plugin
from studykb.parse.sphinx_refs import sphinx_roles_plugin
from studykb.parse.wikilinks import wikilinks_plugin
from studykb.runtime import process

_SCHEME_RE = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
#: Extensions of files that are documents when linked without being found.
DOC_SUFFIX = ".md"


@process.memo(maxsize=8)
def markdown(
    shortcodes: bool = False, definitions: bool = False, footnotes: bool = True
) -> MarkdownIt:
    """CommonMark with GFM tables, ``$``/``$$`` math, wikilinks, inline ``#tags`` and
    d2lbook roles; with ``shortcodes``, Hugo's ``{{< >}}`` and ``{{% %}}`` too; with
    ``definitions``, definition lists (whose terms Hugo may give ids). With ``footnotes``
    (every generator but mkdocs without its ``footnotes`` extension), ``[^1]: text`` is a
    footnote, read as text with its links, never a link reference definition: CommonMark
    alone reads ``[^1]: [title](https://x.org)`` as one, which made each ``[^1]`` a link to
    the file ``[title](https:/x.org)``.

    Bare URLs are found on text tokens afterwards (see :func:`bare_urls`): the
    linkify core rule of markdown-it-py makes parsing about 2.5x slower.
    """
    md = MarkdownIt("commonmark").enable("table")
    md.use(dollarmath_plugin, double_inline=True)
    md.use(wikilinks_plugin)
    md.use(inline_tags_plugin)
    md.use(sphinx_roles_plugin)
    if shortcodes:
        # deferred: most vaults are not Hugo sites
        from studykb.parse.shortcodes import shortcodes_plugin

        md.use(shortcodes_plugin)
    if definitions:
        # deferred: Markdown plugins load only where Markdown is parsed
        from mdit_py_plugins.deflist import deflist_plugin

        md.use(deflist_plugin)
    if footnotes:
        md.block.ruler.before("reference", "footnote_definition", _footnote_definition, {"alt": []})
    md.core.ruler.at("inline", _inline_rule)
    # Link destinations are kept as written: markdown-it would percent-encode them and
    # punycode host names for an HTML ``href`` (a twentieth of the whole parse), which
    # link_target and normalize_url only undo. Nothing renders with this instance.
    md.normalizeLink = _as_written  # type: ignore[method-assign]
    return md


def _as_written(url: str) -> str:
    return url


#: The first line of a footnote's definition: ``[^label]:`` (up to three spaces before).
_FOOTNOTE_DEFINITION = re.compile(r" {0,3}\[\^[^\]\s]+\]:")


def _footnote_definition(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """A footnote's definition is a paragraph (its text and links are read), so that the
    ``reference`` rule after this one never takes it for a link reference definition."""
    begin = state.bMarks[start] + state.tShift[start]
    if state.sCount[start] - state.blkIndent >= 4:
        return False
    line = state.src[state.bMarks[start] : state.eMarks[start]]
    if not _FOOTNOTE_DEFINITION.match(line) or state.src[begin] != "[":
        return False
    if silent:
        return True
    return bool(paragraph(state, start, end, silent))


#: Characters where an inline rule of :func:`markdown` may start (escape, code, math,
#: emphasis, links, wikilinks, images, autolinks, HTML, entities, ``#tags``, shortcodes).
#: Inline content with none of them is only text and line breaks.
_INLINE_SPECIAL = re.compile(r"[\\`$*_\[!<&#{]")
#: markdown-it's inline parser is quadratic in the worst case (thousands of ``[`` or
#: ``*`` in one paragraph: 3 MB of ``[a](`` took a minute). Its cost is bounded by
#: (special characters x length) of a paragraph: above this a paragraph is read as plain
#: text (~0.1 s of parsing at most), and the file gets a ``too-complex`` warning.
MAX_INLINE_COST = 200_000_000
#: ... and a whole file's inline parsing by the sum of that cost over the paragraphs
#: parsed (about half a second at most): a paragraph that would take the sum past it is
#: plain text (the same warning). A count, not a clock: what a file's links and text are
#: never depends on how busy the machine is. Notes are far below it (a 0.6 MB note of
#: 12,000 paragraphs and 24,000 links costs about 2,000,000).
MAX_FILE_INLINE_COST = 1_000_000_000
TOO_COMPLEX = "studykb_too_complex"
#: markdown-it's block parser makes a token object (~0.4 KB, ~12 µs) for every heading,
#: list item, table cell, paragraph and line break, and nothing bounds how many: a
#: million heading lines (4 MB) took 49 s and 1.7 GB. A body estimated (see
#: :func:`pieces`) to make more than this many is not read as Markdown at all, and the
#: file gets a ``too-complex`` warning. 4.9 MB of this repository's notes is estimated
#: at 100,000 (87,000 tokens); at the bound, a body costs at most about 1.7 times that.
MAX_PIECES = 150_000
#: A line that is not blank: its text and its line break at least.
_LINE = re.compile(r"^[ \t]*\S", re.M)
#: A line opening a heading, a list item or a quote: the block's own tokens around it.
_MARKED = re.compile(r"^[ \t]*(?:#{1,6}|[-+*>]|\d{1,9}[.)])(?=[ \t]|$)", re.M)


def _inline_rule(state: StateCore) -> None:
    """markdown-it's ``inline`` core rule, with a shortcut for plain text and a budget.

    Most paragraphs, list items and headings of real notes (and ~80% of the synthetic
    vault's) hold no character where an inline rule could start; for those the
    children are built directly, exactly as the inline parser would (a property test
    holds the two to the same tokens), which saves about a third of the whole parse.
    A paragraph too costly to parse (see :data:`MAX_INLINE_COST`), or any once the
    file's budget (:data:`MAX_FILE_INLINE_COST`) is spent, becomes plain text and
    ``env[TOO_COMPLEX]`` is set.
    """
    md = state.md
    env = state.env
    spent = 0
    for token in state.tokens:
        if token.type != "inline":
            continue
        if token.children is None:
            token.children = []
        content = token.content
        specials = len(_INLINE_SPECIAL.findall(content))
        if not specials:
            token.children.extend(plain_inline(content))
            continue
        cost = specials * len(content)
        if cost > MAX_INLINE_COST or spent + cost > MAX_FILE_INLINE_COST:
            env[TOO_COMPLEX] = True
            token.children.extend(plain_inline(content))
            continue
        spent += cost
        md.inline.parse(content, md, env, token.children)


def pieces(body: str) -> int:
    """About how many tokens and references reading ``body`` makes: an upper bound, in
    time linear in its length (see :func:`counted`). Counted line by line only when the
    bound from the number of lines alone is over :data:`MAX_PIECES`, so a note of
    ordinary size pays six ``str.count`` calls."""
    quick = 7 * (body.count("\n") + 1) + _cells_and_links(body)
    return quick if quick <= MAX_PIECES else counted(body)


def counted(body: str) -> int:
    """The estimate of :func:`pieces`: four for each line that is not blank (a paragraph,
    its text; or a line break and the text after it), three more for a heading, list
    item or quote (a list's own opening and closing, a nested one's too), three for
    each table cell (``|``), two for each URL or wikilink, four for each Markdown link.
    Emphasis and other inline markup are bounded on their own (:data:`MAX_INLINE_COST`,
    :data:`MAX_FILE_INLINE_COST`)."""
    return 4 * len(_LINE.findall(body)) + 3 * len(_MARKED.findall(body)) + _cells_and_links(body)


def _cells_and_links(body: str) -> int:
    urls = body.count("://") + body.count("www.") + body.count("[[")
    return 3 * body.count("|") + 2 * urls + 4 * body.count("](")


def plain_inline(content: str) -> list[Token]:
    """The inline tokens of ``content`` that holds no inline markup: text and breaks.

    Follows markdown-it's ``newline`` rule: two or more spaces before a line break make
    a hard break (and are dropped), one space is dropped, and a line's leading spaces
    and tabs are skipped.
    """
    out: list[Token] = []
    lines = content.split("\n")
    last = len(lines) - 1
    for n, line in enumerate(lines):
        if n:
            line = line.lstrip(" \t")
        kind = "softbreak"
        if n < last:
            if line.endswith("  ") and line.strip(" "):
                line = line.rstrip(" ")
                kind = "hardbreak"
            elif line.endswith(" "):
                line = line[:-1]
        if line:
            text = Token("text", "", 0)
            text.content = line
            out.append(text)
        if n < last:
            out.append(Token(kind, "br", 0))
    return out


#: GitHub's extended autolinks: ``http(s)://`` or ``www.`` then a domain and a path. The
#: start may follow any non-word character (Chinese text often has no space before a URL);
#: the URL stops at whitespace, ``<`` and CJK characters. Only the scheme ignores case
#: (``(?i:...)``): ``re.I`` on the whole pattern folds every character of the CJK range
#: when it compiles, 3.5 ms at each start.
_AUTOLINK = re.compile(
    r"(?<![A-Za-z0-9/@.:_-])((?i:https?://|www\.)[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*"
    r"(?::\d+)?(?:[/?#][^\s<\u3000-\u9fff\uff00-\uffef]*)?)"
)
_TRAILING = "?!.,:*_~'\""


def bare_urls(text: str) -> list[tuple[int, str]]:
    """URLs in plain text as GitHub links them: ``http(s)://...`` and ``www....``.

    Returns (offset, url) pairs; ``www.`` links get ``http://`` like GitHub does. Trailing
    punctuation and an unbalanced ``)`` are not part of the link (GFM's rule).
    A regex rather than linkify-it: on a 10k-note vault linkify-it cost more than
    the whole Markdown parse.
    """
    if "://" not in text and "www." not in text:
        return []
    found = []
    for match in _AUTOLINK.finditer(text):
        url = _trimmed(match.group(1))
        if url.endswith(";") and re.search(r"&[A-Za-z0-9]+;$", url):
            url = url[: url.rindex("&")]
        host = url.split("://", 1)[-1]
        if not host or (url.lower().startswith("www.") and "." not in host[4:]):
            continue
        found.append((match.start(1), url if "://" in url else "http://" + url))
    return found


def _trimmed(url: str) -> str:
    """``url`` without its trailing punctuation, nor a ``)`` that closes nothing in it
    (GFM's rule). The brackets are counted once: counting them again at each ``)``
    dropped was quadratic in a URL ending in thousands of them."""
    opens, closes = url.count("("), url.count(")")
    end = len(url)
    while end:
        last = url[end - 1]
        if last in _TRAILING:
            end -= 1
        elif last == ")" and closes > opens:
            end -= 1
            closes -= 1
        else:
            break
    return url[:end]
