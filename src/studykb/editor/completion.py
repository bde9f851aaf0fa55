"""Completion of references in the editor: where the cursor is (inside ``[[``, after
``[[doc#``, in a front-matter reference list) and what a chosen name writes; which names
fit what is typed is :mod:`studykb.vault.names`'s (through :mod:`studykb.api`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from studykb.api import KEY_LINE, REF_KEYS, fences

if TYPE_CHECKING:
    from studykb.api import Candidate

#: Front-matter keys whose values are tags or topics, not references.
TAG_KEYS = ("tags", "covers")
_WIKI_OPEN = re.compile(r"!?\[\[([^\[\]\n]*)$")
#: ``[[NAME:path`` or ``[[NAME:path#symbol`` being typed (a code link, see the repos guide).
_CODE_OPEN = re.compile(r"^([A-Za-z0-9][\w.-]*):(?!//)(?!\s)([^#|@]*)(?:#([^@|]*))?$")
_ITEM_LINE = re.compile(r"^(\s*)-(\s|$)")
_NEEDS_QUOTES = re.compile(r"[,\[\]{}:#&*!|>'\"%@`]|^[-?]|\s$")


def insert_text(cand: Candidate, ctx: Completion) -> str:
    """What a chosen candidate writes at the cursor."""
    text = cand.insert
    if ctx.kind == "front" and not ctx.quoted and _NEEDS_QUOTES.search(text):
        text = json.dumps(text, ensure_ascii=False)
    return text + ctx.close


@dataclass(frozen=True)
class Completion:
    """Where completion applies at the cursor and what is typed so far."""

    kind: str
    """``wikilink`` (inside ``[[``), ``heading`` (after ``[[doc#``: headings, and the
    units of a course), ``code`` (after ``[[NAME:``: a path of repository ``key``),
    ``symbol`` (after ``[[NAME:path#``: ``key`` is ``NAME:path``), ``front`` (a
    front-matter reference list) or ``tag`` (front-matter ``tags`` and ``covers``)."""
    prefix: str
    start: int
    """Column where the typed prefix starts (the edit replaces start..cursor)."""
    close: str = ""
    """Text to add after the insertion (``]]`` when the link is not closed yet)."""
    key: str = ""
    """For ``front``: the front-matter key; for ``heading``: the target name."""
    quoted: bool = False


def completion_context(lines: list[str], line: int, col: int) -> Completion | None:
    """What to complete at (line, col), or None outside references."""
    if line >= len(lines):
        return None
    text = lines[line]
    before = text[:col]
    match = _WIKI_OPEN.search(before)
    if match:
        inner = match.group(1)
        if "|" in inner:
            return None  # typing the label
        close = "" if text[col:].lstrip().startswith("]]") else "]]"
        code = _CODE_OPEN.match(inner)
        if code:
            name, path, part = code.groups()
            if part is None:
                return Completion("code", path, col - len(path), close, name)
            return Completion("symbol", part, col - len(part), close, f"{name}:{path}")
        if "#" in inner:
            target, _, part = inner.partition("#")
            return Completion("heading", part, col - len(part), close, target.strip())
        start = col - len(inner)
        return Completion("wikilink", inner, start, close)
    fm = fences(lines, open_ended=True)  # unclosed while typing: to the end
    if fm is None or not fm[0] < line < fm[1]:
        return None
    key = _front_key(lines, line, fm[0], col)
    if key not in REF_KEYS and key not in TAG_KEYS:
        return None
    field_start = max(before.rfind(","), before.rfind("{")) + 1
    if re.match(r"\s*[\"']?reason[\"']?\s*:", before[field_start:]):
        return None  # the reason of `{ref: x, reason: ...}`
    seg = max(before.rfind(c) for c in ",[{:") + 1
    if seg == 0:
        item = _ITEM_LINE.match(before)
        seg = item.end() if item else 0
    start = seg + len(before[seg:]) - len(before[seg:].lstrip())
    quoted = before[start : start + 1] in ("'", '"')
    if quoted:
        start += 1
    kind = "tag" if key in TAG_KEYS else "front"
    return Completion(kind, before[start:col], start, "", key, quoted)


def _front_key(lines: list[str], line: int, fm_start: int, col: int) -> str:
    """The front-matter key whose value the cursor is in (``requires`` for an item below it)."""
    current = lines[line]
    match = KEY_LINE.match(current)
    if match:
        return match.group(2) if col >= match.end() else ""
    indent = len(current) - len(current.lstrip())
    for n in range(line - 1, fm_start, -1):
        text = lines[n]
        if not text.strip():
            continue
        own = len(text) - len(text.lstrip())
        item = _ITEM_LINE.match(text)
        if own > indent or item:
            continue  # deeper content, or a sibling / enclosing list item
        match = KEY_LINE.match(text)
        return match.group(2) if match else ""
    return ""
