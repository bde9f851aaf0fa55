"""Inline ``#tags`` as Obsidian, zk and Foam read them, as a markdown-it-py plugin.

Obsidian's rules (help.obsidian.md/tags, "Tag format"): a tag is ``#`` followed by letters
(any script: ``#深度学习``), digits, ``_``, ``-`` and ``/`` (``#nested/tag``), with at least one
character that is not a digit (``#1984`` is not a tag, ``#y1984`` is); no spaces. Tags are
case-insensitive. The ``#`` starts a tag only at the start of a line or after white space, so
``C#``, ``page#anchor``, ``&#123;`` and URLs hold none.

Because this is an inline rule, code spans, code blocks, autolinks, HTML, escapes (``\\#no``),
link destinations and wikilinks (``[[Note#Heading]]``, with the wikilink plugin) never give a
tag; link *text* (``[#x](url)``) does not either. The ``#`` of an ATX heading is not inline
content, but a tag written in heading text (``## Plan #todo``) is one, as in Obsidian.

Each tag becomes a ``hashtag`` token: ``meta["tag"]`` is the name without ``#``,
``meta["line"]`` the line within the inline content (from 0), ``markup`` the source.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token

# Everything up to white space or punctuation other than _ - / (ASCII, general and CJK
# punctuation, full-width forms) is the tag's name.
_TAG = re.compile(
    r"#([^\s!-,.:-@\[-^`{-~\u00a1-\u00bf\u2000-\u206f\u2e00-\u2e7f\u3000-\u303f"
    r"\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65]+)"
)
_NOT_ALL_DIGITS = re.compile(r"[^0-9]")


@dataclass(frozen=True)
class InlineTag:
    """A ``#tag`` found in a body."""

    #: The tag's name as written, without ``#`` (``nested/tag``).
    name: str
    #: 1-based line in the parsed text (add the body's first line for a file line).
    line: int


def match_tag(text: str, pos: int = 0) -> str | None:
    """The tag name ``#...`` at ``text[pos]`` by Obsidian's rules, or None."""
    found = _TAG.match(text, pos)
    if found is None:
        return None
    name = found.group(1)
    if _NOT_ALL_DIGITS.search(name) is None:
        return None
    return name


def _rule(state: StateInline, silent: bool) -> bool:
    pos = state.pos
    src = state.src
    if src[pos] != "#" or state.linkLevel > 0:
        return False
    if pos > 0 and not src[pos - 1].isspace():
        return False
    name = match_tag(src, pos)
    if name is None:
        return False
    if not silent:
        token = state.push("hashtag", "", 0)
        token.content = name
        token.markup = "#" + name
        token.meta = {"tag": name, "line": src.count("\n", 0, pos)}
    state.pos = pos + 1 + len(name)
    return True


def _render(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    return f'<span class="tag">#{tokens[idx].content}</span>'


def inline_tags_plugin(md: MarkdownIt) -> None:
    """``md.use(inline_tags_plugin)``: ``#tag`` in text becomes a ``hashtag`` token."""
    md.inline.ruler.before("link", "hashtag", _rule)
    md.add_render_rule("hashtag", _render)


def inline_tags(tokens: Iterable[Token]) -> list[InlineTag]:
    """The tags among the tokens of a parse (with this plugin), each with its 1-based line."""
    out: list[InlineTag] = []
    for token in tokens:
        if token.type != "inline" or not token.children or token.map is None:
            continue
        for child in token.children:
            if child.type == "hashtag":
                out.append(InlineTag(child.meta["tag"], token.map[0] + child.meta["line"] + 1))
    return out
