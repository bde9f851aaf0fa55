"""A heading's text as generators read it: its attribute block (``## Title {#id .cls}``)
split off, and its inline Markdown as plain text (what GitHub, GitLab and Zola slug)."""

from __future__ import annotations

import re
from html import unescape

# --- attribute blocks: ``## Title {#id .class}`` ---------------------------------------------

_ATTR_BLOCK = re.compile(r"^(.*?)[ \t]*(?<!\\)\{([^{}\n]*)\}[ \t]*$", re.S)
# Goldmark (Hugo) ends an id at "." (issue gohugoio/hugo#6548: {#1-s.-incarnata} -> id "1-s");
# pulldown-cmark (Zola) reads an id up to white space.
_ATTR_ITEM_GOLDMARK = re.compile(
    r"""\s*(?:\#([^\s.#{}]+)|\.([^\s.#{}]+)|([A-Za-z_:][\w:.-]*)\s*=\s*("[^"]*"|'[^']*'|[^\s"'{}]+))"""
)
_ATTR_ITEM_PULLDOWN = re.compile(
    r"""\s*(?:\#([^\s{}]+)|\.([^\s{}]+)|([A-Za-z_:][\w:.-]*)\s*=\s*("[^"]*"|'[^']*'|[^\s"'{}]+))"""
)


def split_attributes(text: str, dialect: str = "goldmark") -> tuple[str, str | None]:
    """``"Title {#id .cls}"`` -> ``("Title", "id")``; text without an attribute block is kept.

    ``dialect`` is ``"goldmark"`` (Hugo: ``parser.attribute.title``) or ``"pulldown"`` (Zola).
    A brace group that is not made only of ``#id``, ``.class`` and ``key=value`` items is
    heading text (``## Sets {a, b}`` keeps its braces).
    """
    if "{" not in text:
        return text, None
    found = _ATTR_BLOCK.match(text)
    if found is None:
        return text, None
    inner = found.group(2)
    item = _ATTR_ITEM_GOLDMARK if dialect == "goldmark" else _ATTR_ITEM_PULLDOWN
    pos, ident = 0, None
    inner_end = len(inner.rstrip())
    if inner_end == 0:
        return text, None
    while pos < inner_end:
        part = item.match(inner, pos)
        if part is None or part.end() == pos:
            return text, None
        if part.group(1) is not None:
            ident = part.group(1)
        elif part.group(3) == "id":
            ident = part.group(4).strip("\"'")
        pos = part.end()
    return found.group(1), ident


# --- plain text of inline Markdown ---------------------------------------------------------

_NEEDS_WORK = re.compile(r"[`*_\[\]<>&\\~=!]")
_CODE_SPAN = re.compile(r"(?<![`\\])(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
_INLINE = re.compile(
    r"""\\(?P<esc>[!-/:-@\[-`{-~])"""
    r"""|!?\[\[(?P<wtarget>[^\[\]|#\n]*)(?:\#(?P<wanchor>[^\[\]|\n]*))?(?:\|(?P<wlabel>[^\[\]\n]*))?\]\]"""
    r"""|!\[(?P<alt>[^\[\]]*)\](?:\([^()\s]*(?:\s+"[^"]*")?\)|\[[^\]]*\])"""
    r"""|\[(?P<label>[^\[\]]*)\](?:\([^()\s]*(?:\s+"[^"]*")?\)|\[[^\]]*\])"""
    r"""|<(?P<auto>[A-Za-z][A-Za-z0-9+.-]{1,31}:[^<>\s]*)>"""
    r"""|(?P<tag></?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>)"""
    r"""|(?P<entity>&(?:\#[0-9]{1,7}|\#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});)"""
    # emphasis delimiters that can open or close (CommonMark flanking rules, without pairing)
    r"""|(?P<emph>(?:\*+|~~|==)(?=\S)|(?<=\S)(?:\*+|~~|==)"""
    r"""|(?<![^\W_])_+(?=\S)|(?<=\S)_+(?![^\W_]))"""
)


def _inline_sub(found: re.Match[str]) -> str:
    kind = found.lastgroup
    if kind == "esc":
        return found.group("esc")
    if kind in ("wtarget", "wanchor", "wlabel"):
        label = found.group("wlabel")
        if label is not None:
            return _plain_segment(label)
        anchor = found.group("wanchor")
        target = found.group("wtarget")
        return f"{target} > {anchor}" if anchor and target else (target or anchor or "")
    if kind == "alt":
        return _plain_segment(found.group("alt"))
    if kind == "label":
        return _plain_segment(found.group("label"))
    if kind == "auto":
        return found.group("auto")
    if kind == "entity":
        return unescape(found.group("entity"))
    return ""  # an HTML tag or an emphasis marker


def _plain_segment(text: str) -> str:
    if _NEEDS_WORK.search(text) is None:
        return text
    return _INLINE.sub(_inline_sub, text)


def plain_text(text: str) -> str:
    """The text a reader sees for inline Markdown: markup, link targets and tags left out.

    ``**Bold** [link](x.md) `a_b` &amp;`` -> ``Bold link a_b &``. A light, regex-based
    rendering, good for headings; code spans keep their content as written.
    """
    if _NEEDS_WORK.search(text) is None:
        return text
    if "`" not in text:
        return _plain_segment(text)
    out: list[str] = []
    pos = 0
    for code in _CODE_SPAN.finditer(text):
        out.append(_plain_segment(text[pos : code.start()]))
        body = code.group(2).replace("\n", " ")
        if len(body) > 2 and body[0] == " " and body[-1] == " " and body.strip(" "):
            body = body[1:-1]  # CommonMark strips one space on each side
        out.append(body)
        pos = code.end()
    out.append(_plain_segment(text[pos:]))
    return "".join(out)
