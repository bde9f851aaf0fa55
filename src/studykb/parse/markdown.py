"""Reading a Markdown body: references with their lines, the title, headings and plain text."""

from __future__ import annotations

import posixpath
import re
import time
from dataclasses import dataclass, field
from functools import lru_cache
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from mdit_py_plugins.dollarmath import dollarmath_plugin

from studykb.parse.markers import marker_lines
from studykb.parse.wikilinks import wikilinks_plugin

_SCHEME_RE = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
#: Extensions of files that are documents when linked without being found.
DOC_SUFFIX = ".md"


@lru_cache(maxsize=1)
def markdown() -> MarkdownIt:
    """CommonMark with GFM tables, ``$``/``$$`` math and wikilinks.

    Bare URLs are found on text tokens afterwards (see :func:`bare_urls`): the
    linkify core rule of markdown-it-py makes parsing about 2.5x slower.
    """
    md = MarkdownIt("commonmark").enable("table")
    md.use(dollarmath_plugin, double_inline=True)
    md.use(wikilinks_plugin)
    md.core.ruler.at("inline", _inline_rule)
    # Link destinations are kept as written: markdown-it would percent-encode them and
    # punycode host names for an HTML ``href`` (a twentieth of the whole parse), which
    # link_target and normalize_url only undo. Nothing renders with this instance.
    md.normalizeLink = _as_written  # type: ignore[method-assign]
    return md


def _as_written(url: str) -> str:
    return url


#: Characters where an inline rule of :func:`markdown` may start (escape, code, math,
#: emphasis, links, wikilinks, images, autolinks, HTML, entities). Inline content with
#: none of them is only text and line breaks.
_INLINE_SPECIAL = re.compile(r"[\\`$*_\[!<&]")
#: markdown-it's inline parser is quadratic in the worst case (thousands of ``[`` or
#: ``*`` in one paragraph: 3 MB of ``[a](`` took a minute). Its cost is bounded by
#: (special characters x length) of a paragraph: above this a paragraph is read as plain
#: text (~0.1 s of parsing at most), and the file gets a ``too-complex`` warning.
MAX_INLINE_COST = 200_000_000
#: ... and a whole file's inline parsing stops after this many seconds (the same warning).
INLINE_BUDGET_SECONDS = 1.0
TOO_COMPLEX = "studykb_too_complex"


def _inline_rule(state: StateCore) -> None:
    """markdown-it's ``inline`` core rule, with a shortcut for plain text and a budget.

    Most paragraphs, list items and headings of real notes (and ~80% of the synthetic
    vault's) hold no character where an inline rule could start; for those the
    children are built directly, exactly as the inline parser would (a property test
    holds the two to the same tokens), which saves about a third of the whole parse.
    A paragraph too costly to parse (see :data:`MAX_INLINE_COST`), or any once the
    file's budget is spent, becomes plain text and ``env[TOO_COMPLEX]`` is set.
    """
    md = state.md
    env = state.env
    deadline = None
    for token in state.tokens:
        if token.type != "inline":
            continue
        if token.children is None:
            token.children = []
        content = token.content
        specials = len(_INLINE_SPECIAL.findall(content)) if len(content) > 2000 else 1
        if not specials or not _INLINE_SPECIAL.search(content):
            token.children.extend(plain_inline(content))
            continue
        if deadline is None:
            deadline = time.perf_counter() + INLINE_BUDGET_SECONDS
        if specials * len(content) > MAX_INLINE_COST or time.perf_counter() > deadline:
            env[TOO_COMPLEX] = True
            token.children.extend(plain_inline(content))
            continue
        md.inline.parse(content, md, env, token.children)


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
    r"(?::\d+)?(?:[/?#][^\s<\u3000-\u9fff\uff00-\uffef]*)?)")
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
        url = match.group(1)
        while url and (url[-1] in _TRAILING or (url[-1] == ")" and
                                                url.count(")") > url.count("("))):
            url = url[:-1]
        if url.endswith(";") and re.search(r"&[A-Za-z0-9]+;$", url):
            url = url[: url.rindex("&")]
        host = url.split("://", 1)[-1]
        if not host or (url.lower().startswith("www.") and "." not in host[4:]):
            continue
        found.append((match.start(1), url if "://" in url else "http://" + url))
    return found


@dataclass
class RawRef:
    """A reference found in the body, before it becomes a :class:`~studykb.model.Reference`."""

    line: int
    text: str
    target: str
    style: str  # name | path | url
    anchor: str = ""
    optional: bool = False
    outside: bool = False


@dataclass
class Body:
    refs: list[RawRef] = field(default_factory=list)
    title: str | None = None
    headings: list[str] = field(default_factory=list)
    text: str = ""
    summary: str = ""
    too_complex: bool = False
    """Some paragraphs were read as plain text (see :data:`MAX_INLINE_COST`)."""


def read_body(body: str, first_line: int, path: str) -> Body:
    """Parse ``body`` (which starts on ``first_line`` of the file at vault path ``path``)."""
    out = Body()
    env: dict[str, object] = {}
    tokens = markdown().parse(body, env)
    out.too_complex = bool(env.get(TOO_COMPLEX))
    parts: list[str] = []
    heading_level = 0
    # the region ``studykb sidebar --write`` generates is not the author's: skip it
    skip = marker_lines(tokens).region
    for tok in tokens:
        if skip and tok.map and skip[0] <= tok.map[0] <= skip[1]:
            continue
        ttype = tok.type
        if ttype == "heading_open":
            heading_level = int(tok.tag[1])
            continue
        if ttype in ("fence", "code_block"):
            parts.append(tok.content)
            continue
        if ttype != "inline":
            continue
        base = first_line + (tok.map[0] if tok.map else 0)
        text = _inline(tok, base, path, out.refs)
        if heading_level:
            out.headings.append(text)
            if heading_level == 1 and out.title is None:
                out.title = text
            heading_level = 0
        elif not out.summary and text and not text.startswith(("!", "<")):
            out.summary = text
        parts.append(text)
    out.text = "\n".join(parts)
    return out


def _inline(tok, base: int, path: str, refs: list[RawRef]) -> str:  # type: ignore[no-untyped-def]
    # Lines are counted on the inline source (``tok.content``) with a cursor, because
    # code spans fold their line breaks into spaces and inline math or HTML may hold
    # some: counting softbreak tokens alone drifts after those.
    src = tok.content or ""
    cur = 0
    line = base
    words: list[str] = []
    in_link = 0

    def seek(needle: str) -> int:
        """Move the cursor past the next ``needle``; return the line where it starts."""
        nonlocal cur, line
        found = src.find(needle, cur) if needle else -1
        if found == -1:
            return line
        line += src.count("\n", cur, found)
        start = line
        line += needle.count("\n")
        cur = found + len(needle)
        return start

    for child in tok.children or ():
        ctype = child.type
        if ctype in ("softbreak", "hardbreak"):
            seek("\n")
            words.append("\n")
        elif ctype == "text":
            words.append(child.content)
            if not in_link:
                for offset, url in bare_urls(child.content):
                    extra = child.content.count("\n", 0, offset)
                    refs.append(RawRef(line + extra, url, url, "url"))
        elif ctype == "code_inline":
            words.append(child.content)
            seek(child.markup)  # the opening backticks ...
            seek(child.markup)  # ... and the closing ones
        elif ctype in ("math_inline", "math_inline_double", "html_inline"):
            seek(child.content)
        elif ctype == "wikilink":
            meta = child.meta
            words.append(meta["label"] or meta["target"])
            at = seek(child.markup)
            if meta["target"]:
                refs.append(RawRef(at, child.markup, meta["target"], "name", meta["anchor"]))
        elif ctype == "link_open":
            in_link += 1
            href = child.attrs.get("href", "")
            ref = link_target(str(href), path, line)
            if ref is not None:
                refs.append(ref)
        elif ctype == "link_close":
            in_link -= 1
        elif ctype == "image":
            words.append(child.content)
            for grandchild in child.children or ():
                if grandchild.type in ("softbreak", "hardbreak"):
                    seek("\n")
    return "".join(words).strip()


def link_target(href: str, path: str, line: int) -> RawRef | None:
    """Classify a Markdown link destination written in the file at ``path``.

    URLs are kept for URL resolution; ``#x`` anchors and non-document files are
    ignored; relative, site-absolute (Hugo) and ``@/`` (Zola) paths become path
    references. A path without ``.md`` that names no document is an ordinary
    site link, so it is marked optional.
    """
    href = href.strip()
    if not href or href.startswith("#"):
        return None
    if _SCHEME_RE.match(href):
        scheme = href.split(":", 1)[0].lower()
        if scheme in ("http", "https"):
            return RawRef(line, href, href, "url")
        return None
    if href.startswith("//"):
        return RawRef(line, href, "https:" + href, "url")
    raw = href
    href = unquote(href)
    target, _, anchor = href.partition("#")
    target = target.split("?", 1)[0]
    if not target:
        return None
    if target.startswith("@/"):  # Zola internal link
        joined = target[2:]
    elif target.startswith("/"):  # site-absolute (Hugo content root)
        joined = target.lstrip("/")
    else:
        joined = posixpath.join(posixpath.dirname(path), target)
    norm = posixpath.normpath(joined) if joined else "."
    ext = posixpath.splitext(norm)[1].lower()
    is_doc = ext == DOC_SUFFIX
    if ext and not is_doc and not _looks_like_name(ext):
        return None  # an image, a PDF...: not a document
    outside = norm == ".." or norm.startswith("../")
    return RawRef(line, raw, norm, "path", anchor, optional=not is_doc, outside=outside)


def _looks_like_name(ext: str) -> bool:
    """``dendron.notes.md`` has ``.notes`` as a false extension; real file types are short words."""
    return not ext[1:].isalnum() or len(ext) > 6 or ext[1:].isdigit()
