"""A markdown-it-py plugin for ``[[target]]``, ``[[target|label]]``, ``[[target#heading]]`` and
``![[target]]``.

It adds an inline rule before ``link`` that emits one ``wikilink`` token whose ``meta``
holds ``target``, ``anchor``, ``label`` and ``embed``. ``[[1]](url)`` (a footnote-like
label written in brackets) is left to the Markdown link rule. Because it is an inline rule,
wikilinks inside code spans, code blocks and math never become tokens.
"""

from __future__ import annotations

import re
from html import escape
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline

#: A wikilink inside a plain string (front matter values): same grammar as the plugin.
WIKILINK_RE = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")
#: What follows ``[[``: the inside of a wikilink, then ``]]``.
_INNER = re.compile(r"(?:[^\[\]\n]|\](?!\]))*\]\]")


def split_target(inner: str) -> tuple[str, str, str]:
    """``target#anchor|label`` -> (target, anchor, label).

    Obsidian's ``\\|`` in tables counts as ``|``.
    """
    inner = inner.replace("\\|", "|")
    target, _, label = inner.partition("|")
    target, _, anchor = target.partition("#")
    return target.strip(), anchor.strip(), label.strip()


def _rule(state: StateInline, silent: bool) -> bool:
    src = state.src
    pos = state.pos
    embed = src.startswith("!", pos)
    start = pos + 1 if embed else pos
    if not src.startswith("[[", start):
        return False
    # up to the first "]]", with no "[" or line break before it; a regex that stops at
    # the next "[" keeps a line of thousands of "[" linear (str.find was quadratic)
    found = _INNER.match(src, start + 2, state.posMax)
    if found is None:
        return False
    end = found.end() - 2
    inner = src[start + 2 : end]
    if not inner.strip():
        return False
    if src.startswith("(", end + 2) and not embed:
        return False  # "[[1]](url)": a Markdown link whose text is "[1]"
    if not silent:
        target, anchor, label = split_target(inner)
        token = state.push("wikilink", "", 0)
        token.content = inner
        token.markup = src[pos : end + 2]
        token.meta = {"target": target, "anchor": anchor, "label": label, "embed": embed}
    state.pos = end + 2
    return True


def _render(self: Any, tokens: list[Any], idx: int, options: Any, env: Any) -> str:
    meta = tokens[idx].meta
    text = meta["label"] or meta["target"] or meta["anchor"]
    href = meta["target"] + (f"#{meta['anchor']}" if meta["anchor"] else "")
    return f'<a class="wikilink" href="{escape(href)}">{escape(text)}</a>'


def wikilinks_plugin(md: MarkdownIt) -> None:
    """``md.use(wikilinks_plugin)``."""
    md.inline.ruler.before("link", "wikilink", _rule)
    md.add_render_rule("wikilink", _render)
