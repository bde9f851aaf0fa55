"""Reading a Markdown body: references with their lines, the title, outline, tags and text.

One pass over markdown-it's tokens (:func:`studykb.parse.markdown.markdown`): wikilinks,
Markdown links and images, bare URLs, Hugo ``ref``/``relref`` shortcodes and d2lbook roles
become references; ``#tags`` become tags; headings and ``:label:`` roles make the outline.
Shortcode bodies that are not Markdown (``{{< code-toggle >}}``'s TOML) are read as code.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import Any

from markdown_it.token import Token

from studykb.parse.heading_text import plain_text
from studykb.parse.includes import shortcode_include, snippet_includes
from studykb.parse.links import Fragment, RawRef, hugo_ref, link_target, wikilink
from studykb.parse.markdown import TOO_COMPLEX, bare_urls, markdown
from studykb.parse.markers import marker_lines
from studykb.parse.mkdocs_slugs import mkdocs_slug, unique
from studykb.parse.outline import Include, Label, Outline
from studykb.parse.reading import DRAWING, GITHUB, Reading
from studykb.parse.slugs import Heading

#: Block tokens whose text is code: read into the plain text, never for references.
_CODE_BLOCKS = ("fence", "code_block", "shortcode_block")
#: An ``attr_list`` block holding an id (``{ #x }``, ``{: #x .cls }``).
_ATTR_ID = re.compile(r"\{:?\s*(?:[.\w-]+(?:=\S+)?\s+)*#([\w-]+)[^{}]*\}")
#: An ``id`` or ``name`` attribute in raw HTML.
#: A footnote reference or, at a line's start with ``:``, its definition (``[^1]:``).
_FOOTNOTE = re.compile(r"(^[ \t]*)?\[\^([^\]\s]+)\](:)?", re.M)
_HTML_ID = re.compile(r"""<[a-zA-Z][^>]*?\s(id|name)\s*=\s*["']([^"'<>]+)["']""")


@dataclass
class Body:
    refs: list[RawRef] = field(default_factory=list)
    title: str | None = None
    headings: list[str] = field(default_factory=list)
    """Headings as plain text (search, completion)."""
    outline: list[Heading] = field(default_factory=list)
    """Headings as written, with levels and lines (anchors)."""
    labels: list[Label] = field(default_factory=list)
    ids: list[Label] = field(default_factory=list)
    """Anchors written in raw HTML (``<a id="x">``, ``<span id="概述">``, ``name=``)."""
    tags: list[str] = field(default_factory=list)
    """Inline ``#tags``, without ``#``, in order, each once."""
    fragments: list[Fragment] = field(default_factory=list)
    """Same-page ``#anchor`` links."""
    includes: list[Include] = field(default_factory=list)
    """Files pasted into the page (``parse/includes.py``)."""
    text: str = ""
    summary: str = ""
    too_complex: bool = False
    """Some paragraphs were read as plain text (see ``markdown.MAX_INLINE_COST``)."""

    def the_outline(self) -> Outline:
        return Outline(
            tuple(self.outline), tuple(self.labels), tuple(self.ids), tuple(self.includes)
        )


@dataclass
class _Walk:
    """What the inline reader needs besides the token: where and by which rules."""

    path: str
    reading: Reading
    body: Body
    #: The page's URL where pages are named by URLs (Hugo), else ``""``.
    page_url: str = ""


def read_body(
    body: str, first_line: int, path: str, reading: Reading = GITHUB, page_url: str = ""
) -> Body:
    """Parse ``body`` (which starts on ``first_line`` of the file at vault path ``path``;
    ``page_url``: its URL on a Hugo site, where relative page links start)."""
    out = Body()
    env: dict[str, object] = {}
    tokens = markdown(reading.shortcodes, reading.definition_ids, reading.footnotes).parse(
        body, env
    )
    out.too_complex = bool(env.get(TOO_COMPLEX))
    walk = _Walk(path, reading, out, page_url)
    parts: list[str] = []
    heading: Token | None = None
    term = False
    # the region ``studykb sidebar --write`` generates is not the author's: skip it
    skip = marker_lines(tokens).region
    for tok in tokens:
        if skip and tok.map and skip[0] <= tok.map[0] <= skip[1]:
            continue
        ttype = tok.type
        if ttype in ("heading_open", "dt_open"):
            heading, term = (tok, False) if ttype == "heading_open" else (None, True)
            continue
        if ttype == "html_block":
            _html_ids(tok.content, first_line + (tok.map[0] if tok.map else 0), out)
        if ttype in _CODE_BLOCKS:
            parts.append(tok.content)
            continue
        base = first_line + (tok.map[0] if tok.map else 0)
        if ttype == "shortcode_ref":
            _add(out, _shortcode_ref(tok.meta, tok.markup, base, walk))
            continue
        if ttype == "shortcode":
            _include(out, shortcode_include(tok.meta, tok.markup, base))
        if ttype != "inline":
            continue
        text = _inline(tok, base, walk, math=heading is not None)
        if heading is not None:
            _heading(out, heading, tok, text, base)
            heading = None
        elif term:  # a definition term: an anchor (level 0), never a title
            out.outline.append(Heading(tok.content, 0, base))
            term = False
        elif not out.summary and text and not text.startswith(("!", "<")):
            out.summary = text
        parts.append(text)
    out.text = "\n".join(parts)
    if reading.snippets:
        out.includes.extend(snippet_includes(body, first_line))
    if reading.tab_ids and "===" in body:
        _tab_ids(body, tokens, first_line, reading, out)
    return out


#: pymdownx.tabbed's tab: ``=== "Title"`` (``===!``, ``===+`` too) at the start of a line.
_TAB = re.compile(r'^={3}(?:\+|\+!|!\+|!)? +"(.*?)" *$')
_EMOJI = re.compile(r":[\w+-]+:")


def _tab_ids(body: str, tokens: list[Token], first_line: int, reading: Reading, out: Body) -> None:
    """The ids pymdownx.tabbed gives tabs when it has a ``slugify``: the title's slug
    (after the id of the heading above and the separator, with ``combine_header_slug``),
    made unique among the page's ids as toc does (``_1``, ``_2``)."""
    options = dict(reading.tab_ids)
    code: set[int] = set()
    for tok in tokens:
        if tok.map and tok.type in (*_CODE_BLOCKS, "html_block"):
            code.update(range(tok.map[0], tok.map[1]))
    tabs = [
        (i, found.group(1))
        for i, line in enumerate(body.split("\n"))
        if i not in code and (found := _TAB.match(line))
    ]
    if not tabs:
        return
    headings = [h for h in out.outline if h.level > 0]
    anchors = Outline(tuple(headings)).index(reading).anchors
    taken = {a for a in anchors if a} | {label.name for label in out.ids}
    separator = str(options.get("separator") or "-")
    for index, title in tabs:
        line = first_line + index
        text = _EMOJI.sub("", title) if options.get("emoji") else title
        tab = mkdocs_slug(html.unescape(plain_text(text)).strip(), options)
        if options.get("combine_header_slug"):
            above = [a for h, a in zip(headings, anchors, strict=True) if h.line < line]
            if above and above[-1]:
                tab = above[-1] + separator + tab
        tab = unique(tab, taken)
        taken.add(tab)
        out.ids.append(Label(tab, line))


def _include(out: Body, found: Include | None) -> None:
    if found is not None:
        out.includes.append(found)


def _heading(out: Body, opening: Token, inline: Token, text: str, line: int) -> None:
    level = int(opening.tag[1])
    out.headings.append(text)
    out.outline.append(Heading(inline.content, level, line))
    # a title is a heading written as one: an ATX "# ..." or a one-line setext heading,
    # never a paragraph that an "===" line below happens to turn into one
    one_line = opening.markup.startswith("#") or "\n" not in inline.content.strip()
    if level == 1 and out.title is None and one_line and text:
        out.title = text


def _add(out: Body, found: RawRef | Fragment | None) -> None:
    if isinstance(found, Fragment):
        out.fragments.append(found)
    elif found is not None:
        out.refs.append(found)


def _shortcode_ref(
    meta: dict[str, Any], markup: str, line: int, walk: _Walk
) -> RawRef | Fragment | None:
    return hugo_ref(
        line, markup, meta["target"], meta["anchor"], meta["lang"], walk.path, walk.reading
    )


class _Cursor:
    """Lines within one inline token, counted on its source (``tok.content``).

    Code spans fold their line breaks into spaces and inline math or HTML may hold some:
    counting softbreak tokens alone drifts after those.
    """

    def __init__(self, src: str, line: int) -> None:
        self.src = src
        self.pos = 0
        self.line = line

    def seek(self, needle: str) -> int:
        """Move past the next ``needle``; return the line where it starts."""
        found = self.src.find(needle, self.pos) if needle else -1
        if found == -1:
            return self.line
        self.line += self.src.count("\n", self.pos, found)
        start = self.line
        self.line += needle.count("\n")
        self.pos = found + len(needle)
        return start


def _inline(tok: Token, base: int, walk: _Walk, math: bool = False) -> str:
    """The plain text of ``tok`` (with its ``$math$`` when ``math``: a heading's text is all
    there is of it); its references and tags go to ``walk.body``."""
    cursor = _Cursor(tok.content or "", base)
    if walk.reading.generator == "mkdocs" and "{" in (tok.content or ""):
        _attr_ids(tok.content, base, walk.body)
    if "footnotes" in walk.reading.extensions and "[^" in (tok.content or ""):
        _footnote_ids(tok.content, base, walk.body)
    words: list[str] = []
    in_link = 0
    for child in tok.children or ():
        ctype = child.type
        if ctype in ("softbreak", "hardbreak"):
            cursor.seek("\n")
            words.append("\n")
        elif ctype == "text":
            words.append(child.content)
            if not in_link:
                _bare_urls(child.content, cursor.line, walk.body)
        elif ctype == "code_inline":
            words.append(child.content)
            cursor.seek(child.markup)  # the opening backticks ...
            cursor.seek(child.markup)  # ... and the closing ones
        elif ctype in ("math_inline", "math_inline_double", "html_inline"):
            cursor.seek(child.content)
            if ctype == "html_inline":
                _html_ids(child.content, cursor.line, walk.body)
            if math and ctype != "html_inline":
                words.append(child.markup + child.content + child.markup)
        elif ctype == "link_open":
            in_link += 1
            _add(
                walk.body,
                link_target(
                    str(child.attrs.get("href", "")),
                    walk.path,
                    cursor.line,
                    walk.reading,
                    walk.page_url,
                ),
            )
        elif ctype == "link_close":
            in_link -= 1
        elif ctype == "image":
            _image(child, cursor, walk, words)
        else:
            _special(child, cursor, walk, words)
    return "".join(words).strip()


def _html_ids(html: str, line: int, out: Body) -> None:
    """The ``id``/``name`` attributes of raw HTML: anchors a ``#fragment`` may name."""
    for found in _HTML_ID.finditer(html):
        out.ids.append(Label(found.group(2), line + html.count("\n", 0, found.start())))


def _attr_ids(text: str, line: int, out: Body) -> None:
    """``**locale**{ #mkdocs-locale }``: an id that mkdocs' ``attr_list`` gives an element."""
    for found in _ATTR_ID.finditer(text):
        out.ids.append(Label(found.group(1), line + text.count("\n", 0, found.start())))


def _footnote_ids(text: str, line: int, out: Body) -> None:
    """Python-Markdown's ``footnotes`` ids: ``fn:1`` on the note, ``fnref:1`` on its first
    reference (``fnref2:1`` on the second...)."""
    refs: dict[str, int] = {}
    for found in _FOOTNOTE.finditer(text):
        label, at = found.group(2), line + text.count("\n", 0, found.start())
        if found.group(3) and found.group(1) is not None:
            out.ids.append(Label(f"fn:{label}", at))
            continue
        refs[label] = refs.get(label, 0) + 1
        n = refs[label]
        out.ids.append(Label(f"fnref{n if n > 1 else ''}:{label}", at))


def _bare_urls(text: str, line: int, out: Body) -> None:
    """The bare URLs of one text token, each with its line: line breaks are counted from
    the URL before (counting from the start each time was quadratic: 3.6 MB of
    ``<http://a`` took a quarter of an hour)."""
    at = 0
    for offset, url in bare_urls(text):
        line += text.count("\n", at, offset)
        at = offset
        out.refs.append(RawRef(line, url, url, "url"))


def _image(child: Token, cursor: _Cursor, walk: _Walk, words: list[str]) -> None:
    words.append(child.content)
    _add(
        walk.body,
        link_target(str(child.attrs.get("src", "")), walk.path, cursor.line, walk.reading),
    )
    for grandchild in child.children or ():
        if grandchild.type in ("softbreak", "hardbreak"):
            cursor.seek("\n")


def _special(child: Token, cursor: _Cursor, walk: _Walk, words: list[str]) -> None:
    """Tokens of the studykb plugins: wikilinks, tags, roles, shortcodes."""
    ctype = child.type
    meta = child.meta
    out = walk.body
    if ctype == "wikilink":
        words.append(meta["label"] or meta["target"])
        at = cursor.seek(child.markup)
        found = wikilink(
            at, child.markup, meta["target"], meta["anchor"], meta["label"], walk.reading
        )
        if isinstance(found, RawRef) and is_attachment(found.target):
            found.attachment = found.optional = True
        _add(out, found)
    elif ctype == "hashtag":
        words.append(child.markup)
        cursor.seek(child.markup)
        if meta["tag"] not in out.tags:
            out.tags.append(meta["tag"])
    elif ctype == "sphinx_role":
        at = cursor.seek(child.markup)
        _role(meta, child.markup, at, out)
    elif ctype == "shortcode_ref":
        words.append(meta["label"])
        at = cursor.seek(child.markup)
        _add(out, _shortcode_ref(meta, child.markup, at, walk))
    elif ctype == "shortcode_inline":
        at = cursor.seek(child.markup)
        _include(out, shortcode_include(meta, child.markup, at))


def _role(meta: dict[str, Any], markup: str, line: int, out: Body) -> None:
    if meta["kind"] == "label":
        out.labels.extend(Label(name, line) for name in meta["targets"])
    elif meta["kind"] == "reference":
        out.refs.extend(RawRef(line, markup, name, "label", name) for name in meta["targets"])


#: Extensions of files a note links to or embeds that are not documents. A closed list:
#: Dendron names such as ``lang.go`` or ``a.b.c`` are notes, and must be able to dangle.
ATTACHMENT_EXTS = frozenset(
    (
        "png",
        "jpg",
        "jpeg",
        "gif",
        "svg",
        "webp",
        "bmp",
        "ico",
        "tif",
        "tiff",
        "avif",
        "heic",
        "pdf",
        "epub",
        "djvu",
        "mp3",
        "wav",
        "ogg",
        "m4a",
        "flac",
        "mp4",
        "webm",
        "mov",
        "mkv",
        "avi",
        "ogv",
        "csv",
        "tsv",
        "xls",
        "xlsx",
        "doc",
        "docx",
        "ppt",
        "pptx",
        "odt",
        "ods",
        "odp",
        "zip",
        "gz",
        "tgz",
        "tar",
        "7z",
        "canvas",
        "excalidraw",
        "drawio",
        "ipynb",
        "txt",
        "json",
        "yaml",
        "yml",
        "toml",
        "html",
        "htm",
        "css",
        "tex",
        "bib",
    )
)


def is_attachment(target: str) -> bool:
    """``![[diagram.png]]``: a file that is not a document (an image, a PDF, an Excalidraw
    drawing ``x.excalidraw.md``)."""
    if target.lower().endswith((DRAWING, DRAWING[:-3])):
        return True
    dot = target.rfind(".")
    return dot != -1 and "/" not in target[dot:] and target[dot + 1 :].lower() in ATTACHMENT_EXTS
