"""Reading a Markdown body: references with their lines, the title, outline, tags and text.

One pass over markdown-it's tokens (:func:`studykb.parse.markdown.markdown`): wikilinks,
Markdown links and images, bare URLs, Hugo ``ref``/``relref`` shortcodes and d2lbook roles
become references; ``#tags`` become tags; headings and ``:label:`` roles make the outline.
Shortcode bodies that are not Markdown (``{{< code-toggle >}}``'s TOML) are read as code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from markdown_it.token import Token

from studykb.parse.links import Fragment, RawRef, hugo_ref, link_target, wikilink
from studykb.parse.markdown import TOO_COMPLEX, bare_urls, markdown
from studykb.parse.markers import marker_lines
from studykb.parse.outline import Label, Outline
from studykb.parse.reading import GITHUB, Reading
from studykb.parse.slugs import Heading

#: Block tokens whose text is code: read into the plain text, never for references.
_CODE_BLOCKS = ("fence", "code_block", "shortcode_block")


@dataclass
class Body:
    refs: list[RawRef] = field(default_factory=list)
    title: str | None = None
    headings: list[str] = field(default_factory=list)
    """Headings as plain text (search, completion)."""
    outline: list[Heading] = field(default_factory=list)
    """Headings as written, with levels and lines (anchors)."""
    labels: list[Label] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    """Inline ``#tags``, without ``#``, in order, each once."""
    fragments: list[Fragment] = field(default_factory=list)
    """Same-page ``#anchor`` links."""
    text: str = ""
    summary: str = ""
    too_complex: bool = False
    """Some paragraphs were read as plain text (see ``markdown.MAX_INLINE_COST``)."""

    def the_outline(self) -> Outline:
        return Outline(tuple(self.outline), tuple(self.labels))


@dataclass
class _Walk:
    """What the inline reader needs besides the token: where and by which rules."""

    path: str
    reading: Reading
    body: Body


def read_body(body: str, first_line: int, path: str, reading: Reading = GITHUB) -> Body:
    """Parse ``body`` (which starts on ``first_line`` of the file at vault path ``path``)."""
    out = Body()
    env: dict[str, object] = {}
    tokens = markdown(reading.shortcodes, reading.definition_ids).parse(body, env)
    out.too_complex = bool(env.get(TOO_COMPLEX))
    walk = _Walk(path, reading, out)
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
        if ttype in _CODE_BLOCKS:
            parts.append(tok.content)
            continue
        base = first_line + (tok.map[0] if tok.map else 0)
        if ttype == "shortcode_ref":
            _add(out, _shortcode_ref(tok.meta, tok.markup, base, walk))
            continue
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
    return out


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
            if math and ctype != "html_inline":
                words.append(child.markup + child.content + child.markup)
        elif ctype == "link_open":
            in_link += 1
            _add(
                walk.body,
                link_target(str(child.attrs.get("href", "")), walk.path, cursor.line, walk.reading),
            )
        elif ctype == "link_close":
            in_link -= 1
        elif ctype == "image":
            _image(child, cursor, walk, words)
        else:
            _special(child, cursor, walk, words)
    return "".join(words).strip()


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
        cursor.seek(child.markup)


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
    """``![[diagram.png]]``: a file that is not a document (an image, a PDF...)."""
    dot = target.rfind(".")
    return dot != -1 and "/" not in target[dot:] and target[dot + 1 :].lower() in ATTACHMENT_EXTS
