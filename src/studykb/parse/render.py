"""A note's body as HTML for the web view (``studykb serve`` and ``studykb site``).

The same Markdown the parser reads (CommonMark, GFM tables, ``$``/``$$`` math,
wikilinks), rendered with the vault's own link rules and nothing a note could use to
run code in the reader's browser:

* raw HTML is never passed through: markdown-it runs with ``html`` off, so ``<script>``
  in a note shows as text;
* a link becomes a link only when it goes somewhere safe: a document of the vault (the
  reference as the vault resolved it, asked of :class:`Links`), a file of the vault
  (an image), an ``http``/``https``/``mailto`` address or an anchor on the page;
  ``javascript:``, ``data:`` and every other scheme become plain text;
* images load only from the vault: a remote image becomes a link to it (no request
  leaves the reader's machine when a page opens);
* ``$...$`` becomes ``<span class="math inline">``, ``$$...$$`` ``<div class="math
  display">`` (KaTeX draws them in the browser, from their text);
* fenced code is highlighted by Pygments (``<div class="highlight">``);
* headings get GitHub-style ids, so ``[[note#Some heading]]`` lands on them;
* the region ``studykb sidebar --write`` generates is left out (the page shows its own
  sidebar), and so is the first level-1 heading when it repeats the title.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape
from typing import Any, Protocol
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.common.utils import unescapeAll
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.footnote import footnote_plugin
from mdit_py_plugins.tasklists import tasklists_plugin

from studykb.parse.frontmatter import split
from studykb.parse.markdown import _as_written, _inline_rule
from studykb.parse.markers import find_markers
from studykb.parse.slugs import slug
from studykb.parse.wikilinks import wikilinks_plugin
from studykb.runtime import process

#: Schemes a link may keep; anything else (javascript:, data:, vbscript:, file:) is text.
SAFE_SCHEMES = ("http", "https", "mailto")
#: Files a note may show inline, by extension.
IMAGE_EXTS = frozenset((".png", ".jpg", ".jpeg", ".gif", ".webp", ".svg", ".avif", ".bmp"))
#: Code longer than this is shown without highlighting (Pygments is slow on megabytes).
HIGHLIGHT_MAX = 200_000
_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*):")


class Links(Protocol):
    """Where the links of one note go; the caller knows the vault and its pages."""

    def reference(self, written: str, anchor: str) -> str | None:
        """The href of the document a reference written as ``written`` (``[[x|y]]``, a
        relative path, a URL) resolved to, with ``anchor`` as written (``Setup#Linux``, a
        slug, ``^block``) made the id of what it names there, or None."""
        ...

    def local(self, anchor: str) -> str:
        """The id on this page of what ``#anchor`` (as written) names."""
        ...

    def title(self, written: str) -> str | None:
        """The title of the document ``written`` resolved to (what ``[[id]]`` without a
        label shows: a reader knows the note by its title, not its id), or None."""
        ...

    def asset(self, target: str) -> str | None:
        """The href of a file of the vault that the note names (an image), or None."""
        ...


@dataclass(frozen=True)
class Heading:
    level: int
    text: str
    anchor: str


@dataclass(frozen=True)
class Rendered:
    """A note's body as HTML, and its headings."""

    html: str
    headings: tuple[Heading, ...] = field(default=())


def heading_anchor(text: str) -> str:
    """The id a heading gets (GitHub's rule), also the slug of ``[[note#text]]``."""
    return slug(text, "github") or "section"


def render_note(text: str, links: Links, *, title: str = "") -> Rendered:
    """The body of a whole file's ``text`` (front matter skipped) as safe HTML."""
    parts = split(text, load=False)  # the front matter is not shown: not read either
    env: dict[str, Any] = {"links": links, "headings": []}
    md = _markdown()
    tokens = md.parse(parts.body, env)
    region = find_markers(text).region if "studykb:sidebar" in text else None
    if region is not None:
        shift = parts.body_line - 1
        tokens = _without(tokens, region[0] - shift, region[1] - shift)
    tokens = _without_title(tokens, title)
    _number_headings(tokens, env)
    html = md.renderer.render(tokens, md.options, env)
    return Rendered(html, tuple(env["headings"]))


@process.memo(maxsize=1)
def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.use(dollarmath_plugin, double_inline=True)
    md.use(wikilinks_plugin)
    md.use(tasklists_plugin)
    md.use(footnote_plugin)
    md.core.ruler.at("inline", _inline_rule)  # the parser's budget for pathological notes
    md.core.ruler.push("studykb_links", _links_rule)
    md.core.ruler.push("studykb_block_ids", _block_ids)
    md.normalizeLink = _as_written  # type: ignore[method-assign]
    md.validateLink = _valid_link  # type: ignore[method-assign]
    for name, rule in (
        ("wikilink", _wikilink),
        ("math_inline", _math_inline),
        ("math_inline_double", _math_display_inline),
        ("math_block", _math_block),
        ("math_block_label", _math_block),
        ("fence", _fence),
        ("code_block", _code_block),
        ("image", _image),
    ):
        md.add_render_rule(name, rule)
    return md


def _valid_link(url: str) -> bool:
    """Whether markdown-it may make a link of ``url`` at all (the link rule decides more)."""
    found = _SCHEME.match(url.strip())
    return found is None or found.group(1).lower() in SAFE_SCHEMES


def _without(tokens: list[Token], first: int, last: int) -> list[Token]:
    """``tokens`` without the top-level blocks that start on lines first..last."""
    out: list[Token] = []
    skipping = False
    for tok in tokens:
        if skipping:
            skipping = not (tok.level == 0 and tok.nesting == -1)
            continue
        if tok.level == 0 and tok.map and first <= tok.map[0] <= last:
            skipping = tok.nesting == 1
            continue
        out.append(tok)
    return out


def _without_title(tokens: list[Token], title: str) -> list[Token]:
    """Without the first level-1 heading when it says the title (the page shows it)."""
    for i, tok in enumerate(tokens[:-2]):
        if tok.type == "heading_open" and tok.tag == "h1":
            inline = tokens[i + 1]
            if title and inline.content.strip() == title.strip():
                return tokens[:i] + tokens[i + 3 :]
            return tokens
    return tokens


def _numbered(texts: Sequence[str]) -> list[str]:
    """The ids headings with these texts get, in order (``-1``, ``-2`` on repeats)."""
    taken: dict[str, int] = {}
    out = []
    for text in texts:
        base = heading_anchor(text)
        n = taken.get(base, 0)
        taken[base] = n + 1
        out.append(base if n == 0 else f"{base}-{n}")
    return out


def heading_ids(headings: Sequence[tuple[str, int, int]], title: str = "") -> dict[int, str]:
    """Line -> the id :func:`render_note` gives the heading there, for (inline text as
    written, level, line) headings of a file (``parse.outline``): what a link from another
    page must name. The first level-1 heading is not shown when it says ``title``."""
    shown = [h for h in headings if h[1] > 0]
    first = next((h for h in shown if h[1] == 1), None)
    if first is not None and title and first[0].strip() == title.strip():
        shown.remove(first)
    return {h[2]: anchor for h, anchor in zip(shown, _numbered([h[0] for h in shown]), strict=True)}


def _number_headings(tokens: list[Token], env: dict[str, Any]) -> None:
    at = [i for i, tok in enumerate(tokens) if tok.type == "heading_open" and i + 1 < len(tokens)]
    texts = [tokens[i + 1].content for i in at]
    for i, text, anchor in zip(at, texts, _numbered(texts), strict=True):
        tokens[i].attrSet("id", anchor)
        env["headings"].append(Heading(int(tokens[i].tag[1]), text, anchor))


#: An Obsidian block id at the end of a block (``text ^id``), or alone below it.
_BLOCK_ID = re.compile(r"(?:^|\s)\^([A-Za-z0-9-]+)\s*$")


def _block_ids(state: StateCore) -> None:
    """``text ^block-1`` ends a block Obsidian names ``#^block-1``: the block gets the id
    ``^block-1`` and the marker is not shown; a paragraph of only ``^id`` names the block
    above it (a table, a list, a quote) and goes."""
    tokens = state.tokens
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        marked = tok.type == "inline" and i > 0 and "^" in tok.content  # the regex, once
        found = _BLOCK_ID.search(tok.content) if marked else None
        if found is None:
            i += 1
            continue
        block_id = "^" + found.group(1)
        opening = tokens[i - 1]
        alone = not tok.content[: found.start()].strip() and opening.type == "paragraph_open"
        above = _block_above(tokens, i - 1) if alone else None
        if above is not None:
            above.attrSet("id", block_id)
            del tokens[i - 1 : i + 2]  # paragraph_open, inline, paragraph_close
            i -= 1
            continue
        opening.attrSet("id", block_id)
        _drop_marker(tok, found.group(0))
        i += 1


def _block_above(tokens: list[Token], opening: int) -> Token | None:
    """The opening token of the block that ends just before ``tokens[opening]``."""
    if opening == 0 or tokens[opening - 1].nesting != -1:
        return None
    level = tokens[opening - 1].level
    for j in range(opening - 2, -1, -1):
        if tokens[j].level == level and tokens[j].nesting == 1:
            return tokens[j]
    return None


def _drop_marker(inline: Token, marker: str) -> None:
    """The inline token without its trailing `` ^id`` text."""
    children = inline.children or []
    for child in reversed(children):
        if child.type == "text" and child.content.rstrip().endswith(marker.strip()):
            child.content = child.content.rstrip()[: -len(marker.strip())].rstrip()
            return


# -- links ------------------------------------------------------------------------------------
def _links_rule(state: StateCore) -> None:
    """Decide every ``[label](href)``: a page of the vault, a safe address, or text."""
    links: Links = state.env["links"]
    for block in state.tokens:
        children = block.children or []
        for i, tok in enumerate(children):
            if tok.type != "link_open":
                continue
            href = _link_href(str(tok.attrGet("href") or ""), links)
            if href is None:
                _demote(children, i)
                continue
            tok.attrSet("href", href)
            if _SCHEME.match(href) and not href.lower().startswith("mailto:"):
                tok.attrSet("class", "external")
                tok.attrSet("rel", "noopener noreferrer")


def _link_href(written: str, links: Links) -> str | None:
    href = written.strip()
    if not href:
        return None
    if href.startswith("#"):
        return "#" + links.local(unquote(href[1:])) if href[1:] else None
    scheme = _SCHEME.match(href)
    if scheme is None or scheme.group(1).lower() in ("http", "https"):
        anchor = unquote(href.partition("#")[2]) if scheme is None else ""
        found = links.reference(written, anchor)
        if found is not None:
            return found
    if scheme is not None:
        return href if scheme.group(1).lower() in SAFE_SCHEMES else None
    if href.startswith("//"):
        return None
    return links.asset(href)


def _demote(children: list[Token], i: int) -> None:
    """A link that goes nowhere safe: its label stays, as a span."""
    opening = children[i]
    opening.tag = "span"
    opening.attrs = {"class": "dead-link"}
    for tok in children[i + 1 :]:
        if tok.type == "link_close":
            tok.tag = "span"
            return


def _wikilink(
    self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]
) -> str:
    tok = tokens[idx]
    meta = tok.meta
    links: Links = env["links"]
    anchor = meta["anchor"] or ""
    label = escape(meta["label"] or _shown(links, tok.markup, meta) or meta["anchor"])
    if meta["target"]:
        href = links.reference(tok.markup, anchor)
    else:  # [[#heading]]: on this page
        href = f"#{links.local(anchor)}" if anchor else None
    if href is None and meta["embed"] and _is_image(meta["target"]):
        src = links.asset(meta["target"])
        if src is not None:
            return f'<img class="embed" src="{escape(src)}" alt="{label}" loading="lazy">'
    css = "wikilink embed" if meta["embed"] else "wikilink"
    if href is None:
        return f'<span class="{css} dead-link" title="not found in the vault">{label}</span>'
    return f'<a class="{css}" href="{escape(href)}">{label}</a>'


def _shown(links: Links, written: str, meta: dict[str, Any]) -> str:
    """What an unlabelled ``[[target]]`` shows: the title of the document it resolved
    to (then the heading, ``Title › Setup``), else the target as written."""
    target = meta["target"]
    if not target or meta["embed"]:
        return str(target or "")
    title = links.title(written)
    if not title:
        return str(target)
    return f"{title} › {meta['anchor']}" if meta["anchor"] else title


def _is_image(target: str) -> bool:
    dot = target.rfind(".")
    return dot > 0 and target[dot:].lower() in IMAGE_EXTS


def _image(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    tok = tokens[idx]
    src = str(tok.attrGet("src") or "").strip()
    alt = escape(self.renderInlineAsText(tok.children or [], options, env))
    scheme = _SCHEME.match(src)
    if scheme is not None:
        if scheme.group(1).lower() in ("http", "https"):  # never loaded from elsewhere
            return (
                f'<a class="external image-link" href="{escape(src)}" '
                f'rel="noopener noreferrer">{alt or "image"}</a>'
            )
        return f'<span class="dead-link">{alt}</span>'
    local = env["links"].asset(src) if src and not src.startswith("//") else None
    if local is None:
        return f'<span class="dead-link" title="not found in the vault">{alt}</span>'
    return f'<img src="{escape(local)}" alt="{alt}" loading="lazy">'


# -- math and code ----------------------------------------------------------------------------
def _math_inline(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    return f'<span class="math inline">{escape(tokens[idx].content)}</span>'


def _math_display_inline(
    self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any
) -> str:
    return f'<span class="math display">{escape(tokens[idx].content)}</span>'


def _math_block(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    return f'<div class="math display">{escape(tokens[idx].content)}</div>\n'


def _fence(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    tok = tokens[idx]
    info = unescapeAll(tok.info).strip()
    lang = info.split(maxsplit=1)[0] if info else ""
    if lang.lower() in ("math", "latex-math"):
        return f'<div class="math display">{escape(tok.content)}</div>\n'
    return highlight(tok.content, lang)


def _code_block(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    return highlight(tokens[idx].content, "")


def highlight(code: str, lang: str) -> str:
    """``code`` as Pygments' ``<div class="highlight"><pre>`` (plain when the language is
    unknown or the code is very long); always escaped."""
    lexer = _lexer(lang.lower()) if lang and len(code) <= HIGHLIGHT_MAX else None
    if lexer is None:
        return f'<div class="highlight"><pre><code>{escape(code)}</code></pre></div>\n'
    # deferred: pygments loads only to highlight code
    from pygments import highlight as pygmentize

    return str(pygmentize(code, lexer, _formatter()))


@process.memo(maxsize=256)
def _lexer(lang: str) -> Any:
    # deferred: pygments loads only to highlight code
    from pygments.lexers import get_lexer_by_name

    # deferred: pygments loads only to highlight code
    from pygments.util import ClassNotFound

    try:
        return get_lexer_by_name(lang, stripnl=False, ensurenl=True)
    except ClassNotFound:
        return None


@process.memo(maxsize=1)
def _formatter() -> Any:
    # deferred: pygments loads only to highlight code
    from pygments.formatters import HtmlFormatter

    return HtmlFormatter(cssclass="highlight", nowrap=False)
