"""d2lbook / Sphinx cross references in Markdown, as a markdown-it-py plugin.

d2lbook (github.com/d2l-ai/d2l-book, ``docs/user/markdown.md``), used by "Dive into Deep
Learning" (d2l-en, d2l-zh), writes Sphinx roles in Markdown, each followed by an inline code
span:

- ``:label:`sec_attention``` right after a section heading, an image or a table defines a
  label; ``:eqlabel:`eq_softmax``` after a ``$$ ... $$`` equation defines an equation label.
- ``:ref:`sec_x``` (the section's title), ``:numref:`sec_x``` (its number) and
  ``:eqref:`eq_x``` reference a label, in this file or another one. Sphinx's
  ``:ref:`text <label>``` form is read too.
- ``:cite:`key1,key2``` and ``:citet:`key``` cite bibliography entries: not documents.
- ``:bibliography:`../refs.bib``` names the bibliography file; ``:width:`400px``` and
  ``:height:`` size an image: neither is a reference.

Each role becomes a ``sphinx_role`` token (``meta``: ``role``, ``kind`` of ``label``,
``reference``, ``citation`` or ``other``, ``targets`` (a list: ``cite`` may hold several),
``text`` (the title of ``:ref:`text <label>```), ``line`` within the inline content);
since it is an inline rule, roles in code spans and code blocks are never read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token

#: role -> kind
ROLES = MappingProxyType(
    {
        "label": "label",
        "eqlabel": "label",
        "ref": "reference",
        "numref": "reference",
        "eqref": "reference",
        "cite": "citation",
        "citet": "citation",
        "citep": "citation",
        "bibliography": "other",
        "width": "other",
        "height": "other",
    }
)
_ROLE = re.compile(r":([a-z]+):(`+)(?!`)(.+?)(?<!`)\2(?!`)", re.S)
_TITLED = re.compile(r"^(.*?)\s*<([^<>]+)>$", re.S)


@dataclass(frozen=True)
class LabelDef:
    """A label defined with ``:label:`` or ``:eqlabel:``."""

    #: The label (``sec_attention``).
    name: str
    #: 1-based line of the ``:label:`` role.
    line: int
    #: ``section`` (after a heading), ``figure`` (after an image), ``table``, ``equation``
    #: (``:eqlabel:``), or ``other``.
    kind: str
    #: For a section label: the heading's inline text; else ``""``.
    heading: str = ""


@dataclass(frozen=True)
class RoleRef:
    """A ``:ref:``, ``:numref:``, ``:eqref:`` or ``:cite:`` use."""

    #: The role name: ``ref``, ``numref``, ``eqref``, ``cite``, ``citet``...
    role: str
    #: The label or citation key.
    target: str
    #: 1-based line.
    line: int
    #: The title given in ``:ref:`title <label>```, else ``""``.
    text: str = ""


@dataclass(frozen=True)
class Roles:
    """Everything d2lbook-style roles say in one body."""

    labels: list[LabelDef] = field(default_factory=list)
    references: list[RoleRef] = field(default_factory=list)
    citations: list[RoleRef] = field(default_factory=list)


def _rule(state: StateInline, silent: bool) -> bool:
    pos = state.pos
    src = state.src
    if src[pos] != ":":
        return False
    if pos > 0 and (src[pos - 1].isascii() and src[pos - 1].isalnum() or src[pos - 1] == ":"):
        return False
    found = _ROLE.match(src, pos, state.posMax)
    if found is None or found.group(1) not in ROLES:
        return False
    if not silent:
        role = found.group(1)
        kind = ROLES[role]
        body = found.group(3).strip()
        text = ""
        titled = _TITLED.match(body)
        if titled is not None and kind == "reference":
            text, body = titled.group(1), titled.group(2).strip()
        if kind == "citation":
            targets = [key.strip() for key in body.split(",") if key.strip()]
        else:
            targets = [body] if body else []
        token = state.push("sphinx_role", "", 0)
        token.content = body
        token.markup = found.group(0)
        token.meta = {
            "role": role,
            "kind": kind,
            "targets": targets,
            "text": text,
            "line": src.count("\n", 0, pos),
        }
    state.pos = found.end()
    return True


def _render(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    meta = tokens[idx].meta
    if meta["kind"] == "label":
        return ""
    return f'<span class="{meta["role"]}">{",".join(meta["targets"])}</span>'


def sphinx_roles_plugin(md: MarkdownIt) -> None:
    """``md.use(sphinx_roles_plugin)``: d2lbook roles become ``sphinx_role`` tokens."""
    md.inline.ruler.before("backticks", "sphinx_role", _rule)
    md.add_render_rule("sphinx_role", _render)


_BLOCK_ENDS = frozenset(
    {
        "heading_close",
        "table_close",
        "math_block",
        "math_block_eqno",
        "paragraph_close",
        "fence",
        "code_block",
        "bullet_list_close",
        "ordered_list_close",
        "blockquote_close",
        "html_block",
        "hr",
    }
)


def _label_kind(role: str, previous: Token | None, inline: Token) -> str:
    if role == "eqlabel":
        return "equation"
    children = inline.children or []
    if any(child.type == "image" for child in children):
        return "figure"
    if previous is None:
        return "other"
    if previous.type == "heading_close":
        return "section"
    if previous.type == "table_close":
        return "table"
    if previous.type in ("math_block", "math_block_eqno"):
        return "equation"
    return "other"


def read_roles(tokens: Iterable[Token]) -> Roles:
    """Labels, references and citations among the tokens of a parse (with this plugin).

    A ``:label:`` on the line after a heading (its own paragraph, as d2lbook writes it)
    is that section's label; ``LabelDef.heading`` holds the heading's text.
    """
    out = Roles()
    previous: Token | None = None  # the last block that ended before this inline content
    last_heading = ""
    in_table = 0
    tokens = list(tokens)
    for pos, token in enumerate(tokens):
        if token.type == "inline" and pos > 0 and tokens[pos - 1].type == "heading_open":
            last_heading = token.content
        if token.type == "table_open":
            in_table += 1
        elif token.type in _BLOCK_ENDS:
            in_table -= token.type == "table_close"
            previous = token
            continue
        if token.type != "inline" or not token.children or token.map is None:
            continue
        for child in token.children:
            if child.type != "sphinx_role":
                continue
            meta = child.meta
            line = token.map[0] + meta["line"] + 1
            if meta["kind"] == "label":
                kind = "table" if in_table else _label_kind(meta["role"], previous, token)
                for name in meta["targets"]:
                    out.labels.append(
                        LabelDef(name, line, kind, last_heading if kind == "section" else "")
                    )
            elif meta["kind"] == "reference":
                for name in meta["targets"]:
                    out.references.append(RoleRef(meta["role"], name, line, meta["text"]))
            elif meta["kind"] == "citation":
                for name in meta["targets"]:
                    out.citations.append(RoleRef(meta["role"], name, line))
    return out
