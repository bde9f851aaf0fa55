"""A markdown-it-py plugin that reads Hugo shortcodes the way Hugo does.

Hugo (gohugo.io/content-management/shortcodes/) calls a shortcode with
``{{< name args >}}`` or ``{{% name args %}}``; one that takes content is closed with
``{{< /name >}}``, and ``{{< name />}}`` closes itself. The two delimiters differ in what
happens to the content between the tags:

- ``{{< >}}``: the content is handed to the shortcode's template as it is (``.Inner``); it is
  not Markdown unless the template renders it. ``code-toggle``, ``highlight`` and ``code``
  bodies are TOML, YAML or code, so ``[[menus.main]]`` in them is not a wikilink.
- ``{{% %}}``: the content is Markdown, rendered with the page.

``{{</* name */>}}`` is Hugo's way of showing a shortcode without calling it: it renders as
``{{< name >}}`` text.

Tokens this plugin adds (every block token carries ``map``; inline ones carry ``markup``, the
exact source, and ``meta["line"]``, the line within the inline content, from 0):

``shortcode_block``
    a shortcode with a raw body: ``content`` is the body; no reference is in it. ``meta``:
    ``name``, ``args`` (as written), ``params`` (positional list and named dict),
    ``delimiter`` (``"<"`` or ``"%"``), ``markdown`` (True when the body is Markdown but could
    not be parsed in place: the reader may parse ``content`` itself).
``shortcode_open`` / ``shortcode_close``
    around a Markdown body (``{{% %}}``, or a name in ``markdown_names``): the tokens
    between are ordinary Markdown, to be read like the rest of the page.
``shortcode``
    a block-level shortcode without a body (``{{< figure src="x.png" >}}``).
``shortcode_inline``
    the same inside a paragraph; a paired one keeps its raw body in ``content``.
``shortcode_ref``
    ``{{< ref "x.md#a" >}}`` / ``relref``, alone or as a link destination
    (``[text]({{< ref "x.md" >}})``): a reference. ``meta``: ``target`` (``""`` for the same
    page), ``anchor``, ``kind`` (``ref`` or ``relref``), ``lang``, ``output_format``,
    ``label`` (the link text, or ``""``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline

#: Names whose ``{{< >}}`` body Hugo's own or popular themes' templates render as Markdown
#: (Hugo's embedded ``details``; admonitions of Docsy, Hextra, Book, Relearn...).
MARKDOWN_NAMES = frozenset(
    {
        "details",
        "note",
        "tip",
        "warning",
        "caution",
        "important",
        "hint",
        "notice",
        "alert",
        "callout",
        "admonition",
        "expand",
        "tab",
        "blocks/section",
        "blocks/feature",
    }
)
#: Shortcodes that name another page.
REF_NAMES = frozenset({"ref", "relref"})

_CLOSE_DELIM = MappingProxyType({"<": ">}}", "%": "%}}"})
_OPEN = re.compile(r"\{\{([<%])(?!/\*)[ \t\n]*(/)?[ \t\n]*([^\s/<>%{}\"'`]+)")
_ARG = re.compile(
    r"""\s*(?:([A-Za-z_][\w-]*)\s*=\s*)?("(?:[^"\\]|\\.)*"|`[^`]*`|[^\s"`=]+)""", re.S
)
_QUOTE_START = re.compile(r'["`]')
_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"|`[^`]*`', re.S)
_ESCAPED = re.compile(r"\{\{([<%])/\*(.*?)\*/([>%])\}\}", re.S)
_REF_IN_TEXT = re.compile(r"\{\{([<%])[ \t]*(ref|relref)\b(.*?)([>%])\}\}", re.S)
_LINK_TO_REF = re.compile(
    r"""\[((?:[^\[\]\\]|\\.|\[[^\[\]]*\])*)\]\(\s*<?\s*(\{\{([<%])[ \t]*(ref|relref)\b"""
    r"""(?:(?!\}\}).)*?[>%]\}\})\s*>?(?:\s+"[^"]*")?\s*\)""",
    re.S,
)


@dataclass(frozen=True)
class Tag:
    """One shortcode tag as written."""

    #: The shortcode's name (``figure``, ``ref``, ``blocks/cover``).
    name: str
    #: ``"<"`` or ``"%"``.
    delimiter: str
    #: True for ``{{< /name >}}``.
    closing: bool
    #: True for ``{{< name />}}``.
    self_closing: bool
    #: The arguments as written.
    args: str
    #: Offsets of the tag in the source: ``[start, end)``.
    start: int
    end: int
    #: Positional arguments, unquoted.
    positional: list[str] = field(default_factory=list)
    #: Named arguments, unquoted.
    named: dict[str, str] = field(default_factory=dict)

    @property
    def params(self) -> dict[str, Any]:
        """``{"positional": [...], "named": {...}}``."""
        return {"positional": list(self.positional), "named": dict(self.named)}


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return re.sub(r"\\(.)", r"\1", value[1:-1])
    if len(value) >= 2 and value[0] == value[-1] == "`":
        return value[1:-1]
    return value


def parse_args(args: str) -> tuple[list[str], dict[str, str]]:
    """Hugo's shortcode arguments: ``"a" b name="c"`` -> (``["a", "b"]``, ``{"name": "c"}``)."""
    positional: list[str] = []
    named: dict[str, str] = {}
    pos = 0
    text = args.strip()
    while pos < len(text):
        found = _ARG.match(text, pos)
        if found is None or found.end() == pos:
            pos += 1
            continue
        value = _unquote(found.group(2))
        if found.group(1):
            named[found.group(1)] = value
        else:
            positional.append(value)
        pos = found.end()
    return positional, named


def read_tag(src: str, pos: int, limit: int | None = None) -> Tag | None:
    """The shortcode tag that starts at ``src[pos]``, or None."""
    found = _OPEN.match(src, pos, len(src) if limit is None else limit)
    if found is None:
        return None
    delim = found.group(1)
    close = _CLOSE_DELIM[delim]
    # the tag ends at the first closing delimiter outside a quoted argument
    scan = found.end()
    end = -1
    stop = len(src) if limit is None else limit
    while scan < stop:
        nxt = src.find(close, scan, stop)
        if nxt == -1:
            return None
        opening = _QUOTE_START.search(src, scan, nxt)
        if opening is None:
            end = nxt
            break
        quote = _QUOTED.match(src, opening.start(), stop)
        scan = quote.end() if quote is not None else opening.start() + 1
    if end == -1:
        return None
    inner = src[found.end() : end]
    self_closing = inner.rstrip().endswith("/")
    if self_closing:
        inner = inner.rstrip()[:-1]
    name = found.group(3)
    positional, named = parse_args(inner)
    return Tag(
        name,
        delim,
        found.group(2) is not None,
        self_closing,
        inner.strip(),
        pos,
        end + len(close),
        positional,
        named,
    )


def ref_target(tag: Tag) -> tuple[str, str]:
    """(target, anchor) of a ``ref``/``relref`` tag: ``"x.md#a"`` -> (``"x.md"``, ``"a"``)."""
    path = tag.named.get("path") or (tag.positional[0] if tag.positional else "")
    target, _, anchor = path.partition("#")
    return target.strip(), anchor.strip()


def ref_targets(text: str) -> list[tuple[str, str, int]]:
    """Every ``ref``/``relref`` call in ``text`` (a link destination, a front-matter value):
    ``(target, anchor, offset)``."""
    out: list[tuple[str, str, int]] = []
    for found in _REF_IN_TEXT.finditer(text):
        tag = read_tag(text, found.start())
        if tag is not None and tag.name in REF_NAMES and not tag.closing:
            target, anchor = ref_target(tag)
            out.append((target, anchor, found.start()))
    return out


def _ref_meta(tag: Tag, label: str = "") -> dict[str, Any]:
    target, anchor = ref_target(tag)
    return {
        "name": tag.name,
        "kind": tag.name,
        "target": target,
        "anchor": anchor,
        "lang": tag.named.get("lang", ""),
        "output_format": tag.named.get("outputFormat", ""),
        "label": label,
        "args": tag.args,
    }


def _tag_meta(tag: Tag) -> dict[str, Any]:
    return {"name": tag.name, "args": tag.args, "params": tag.params, "delimiter": tag.delimiter}


def _find_close(src: str, tag: Tag, stop: int) -> Tag | None:
    """The tag that closes ``tag`` before ``stop``, minding nested tags of the same name."""
    depth = 0
    pos = tag.end
    while True:
        pos = src.find("{{", pos, stop)
        if pos == -1:
            return None
        other = read_tag(src, pos, stop)
        if other is None or other.name != tag.name:
            pos += 2
            continue
        if other.closing:
            if depth == 0:
                return other
            depth -= 1
        elif not other.self_closing:
            depth += 1
        pos = other.end


# --- block rule -------------------------------------------------------------------------------


def _line_of(state: StateBlock, offset: int, start_line: int, end_line: int) -> int:
    """The line (from ``start_line``) whose span holds ``offset``."""
    line = start_line
    while line < end_line - 1 and state.eMarks[line] < offset:
        line += 1
    return line


def _rest_is_blank(src: str, start: int, end: int) -> bool:
    return not src[start:end].strip()


def _make_block_rule(markdown_names: frozenset[str]) -> Any:
    return functools.partial(_block_rule, markdown_names)


def _block_rule(
    markdown_names: frozenset[str],
    state: StateBlock,
    start_line: int,
    end_line: int,
    silent: bool,
) -> bool:
    """A shortcode tag at the start of a block: alone, or with its body and closing tag."""
    if state.sCount[start_line] - state.blkIndent >= 4:
        return False
    pos = state.bMarks[start_line] + state.tShift[start_line]
    src = state.src
    if not src.startswith("{{", pos) or src.startswith(("{{</*", "{{%/*"), pos):
        return False
    stop = state.eMarks[end_line - 1]
    tag = read_tag(src, pos, stop)
    if tag is None:
        return False
    tag_last = _line_of(state, tag.end - 1, start_line, end_line)
    closing_tag: Tag | None = None
    if not tag.closing and not tag.self_closing:
        closing_tag = _find_close(src, tag, stop)
    if closing_tag is None:
        return _lone_tag(state, tag, start_line, tag_last, silent)
    return _paired_tags(
        markdown_names, state, tag, closing_tag, start_line, end_line, tag_last, silent
    )


def _lone_tag(state: StateBlock, tag: Tag, start_line: int, tag_last: int, silent: bool) -> bool:
    """A tag alone (``shortcode_ref`` or ``shortcode``): it must be all there is on its
    line(s)."""
    src = state.src
    if silent or not _rest_is_blank(src, tag.end, state.eMarks[tag_last]):
        # a lone tag does not end a paragraph; inside one it is read inline
        return False
    if tag.name in REF_NAMES and not tag.closing:
        token = state.push("shortcode_ref", "", 0)
        token.meta = _ref_meta(tag)
    else:
        token = state.push("shortcode", "", 0)
        token.meta = {**_tag_meta(tag), "closing": tag.closing}
    token.markup = src[tag.start : tag.end]
    token.meta["line"] = 0
    token.block = True
    token.map = [start_line, tag_last + 1]
    state.line = tag_last + 1
    return True


def _paired_tags(
    markdown_names: frozenset[str],
    state: StateBlock,
    tag: Tag,
    closing_tag: Tag,
    start_line: int,
    end_line: int,
    tag_last: int,
    silent: bool,
) -> bool:
    """A tag, its body and its closing tag: Markdown read in place between
    ``shortcode_open`` and ``shortcode_close``, else one ``shortcode_block``."""
    src = state.src
    close_first = _line_of(state, closing_tag.start, start_line, end_line)
    close_last = _line_of(state, closing_tag.end - 1, start_line, end_line)
    if not _rest_is_blank(src, closing_tag.end, state.eMarks[close_last]):
        return False
    if silent:
        return True
    markdown_body = tag.delimiter == "%" or tag.name in markdown_names
    body_fits = (
        close_first > tag_last
        and _rest_is_blank(src, tag.end, state.eMarks[tag_last])
        and _rest_is_blank(src, state.bMarks[close_first], closing_tag.start)
    )
    if markdown_body and body_fits:
        _markdown_body(state, tag, closing_tag, start_line, tag_last, close_first, close_last)
    else:
        token = state.push("shortcode_block", "", 0)
        token.meta = {**_tag_meta(tag), "markdown": markdown_body}
        token.content = _strip_body(src[tag.end : closing_tag.start])
        token.markup = src[tag.start : tag.end]
        token.block = True
        token.map = [start_line, close_last + 1]
    state.line = close_last + 1
    return True


def _markdown_body(
    state: StateBlock,
    tag: Tag,
    closing_tag: Tag,
    start_line: int,
    tag_last: int,
    close_first: int,
    close_last: int,
) -> None:
    """``shortcode_open``, the body's lines read as Markdown, ``shortcode_close``."""
    src = state.src
    token = state.push("shortcode_open", "", 1)
    token.meta = _tag_meta(tag)
    token.markup = src[tag.start : tag.end]
    token.block = True
    token.map = [start_line, close_last + 1]
    old_parent, old_max = state.parentType, state.lineMax
    state.parentType = "shortcode"
    state.lineMax = close_first
    state.md.block.tokenize(state, tag_last + 1, close_first)
    state.parentType, state.lineMax = old_parent, old_max
    token = state.push("shortcode_close", "", -1)
    token.meta = {"name": tag.name}
    token.markup = src[closing_tag.start : closing_tag.end]
    token.block = True
    token.map = [close_first, close_last + 1]


def _strip_body(body: str) -> str:
    """The body without the line break after the opening tag and the blank before the close."""
    if body.startswith("\r\n"):
        body = body[2:]
    elif body.startswith("\n"):
        body = body[1:]
    tail = body.rstrip(" \t")
    return tail if tail.endswith("\n") or not tail.strip() else body


# --- inline rule ------------------------------------------------------------------------------


def _make_inline_rule(markdown_names: frozenset[str]) -> Any:
    def rule(state: StateInline, silent: bool) -> bool:
        src = state.src
        pos = state.pos
        if src.startswith("[", pos):
            return _link_to_ref(state, silent)
        if not src.startswith("{{", pos):
            return False
        escaped = _ESCAPED.match(src, pos, state.posMax)
        if escaped is not None:
            if not silent:
                token = state.push("text", "", 0)
                token.content = "{{" + escaped.group(1) + escaped.group(2) + escaped.group(3) + "}}"
            state.pos = escaped.end()
            return True
        tag = read_tag(src, pos, state.posMax)
        if tag is None:
            return False
        end = tag.end
        body = ""
        if not tag.closing and not tag.self_closing and tag.name not in REF_NAMES:
            closing_tag = _find_close(src, tag, state.posMax)
            if closing_tag is not None:
                body = src[tag.end : closing_tag.start]
                end = closing_tag.end
        if not silent:
            if tag.name in REF_NAMES and not tag.closing:
                token = state.push("shortcode_ref", "", 0)
                token.meta = _ref_meta(tag)
            else:
                token = state.push("shortcode_inline", "", 0)
                token.meta = {
                    **_tag_meta(tag),
                    "closing": tag.closing,
                    "markdown": tag.delimiter == "%" or tag.name in markdown_names,
                }
                token.content = body
            token.markup = src[pos:end]
            token.meta["line"] = src.count("\n", 0, pos)
        state.pos = end
        return True

    return rule


def _link_to_ref(state: StateInline, silent: bool) -> bool:
    """``[text]({{< ref "x.md" >}})``: a Markdown link whose destination is a ref call."""
    src = state.src
    if src.find("{{", state.pos, state.posMax) == -1:
        return False
    found = _LINK_TO_REF.match(src, state.pos, state.posMax)
    if found is None:
        return False
    tag = read_tag(found.group(2), 0)
    if tag is None or tag.name not in REF_NAMES:
        return False
    if not silent:
        token = state.push("shortcode_ref", "", 0)
        token.meta = _ref_meta(tag, label=found.group(1))
        token.meta["line"] = src.count("\n", 0, state.pos)
        token.markup = found.group(0)
    state.pos = found.end()
    return True


def _render_nothing(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    return ""


def shortcodes_plugin(md: MarkdownIt, markdown_names: Collection[str] = MARKDOWN_NAMES) -> None:
    """``md.use(shortcodes_plugin)``; ``markdown_names``: ``{{< >}}`` shortcodes whose body is
    Markdown (the default: :data:`MARKDOWN_NAMES`; pass ``()`` to treat every body as raw)."""
    names = frozenset(markdown_names)
    md.block.ruler.before(
        "fence",
        "hugo_shortcode",
        _make_block_rule(names),
        {"alt": ["paragraph", "reference", "blockquote", "list"]},
    )
    md.inline.ruler.before("link", "hugo_shortcode", _make_inline_rule(names))
    for name in (
        "shortcode_block",
        "shortcode_open",
        "shortcode_close",
        "shortcode",
        "shortcode_inline",
        "shortcode_ref",
    ):
        md.add_render_rule(name, _render_nothing)
