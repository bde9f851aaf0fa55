"""Where each parsed reference sits on its line: the one locator that the editor's
diagnostics and links, and ``mv``'s edits, place references with.

The parser gives a reference's line and its text as written; on the line, the n-th
reference with that text is the n-th occurrence of it, left to right, after the key of
a front-matter line (``requires: [...]``) for a front-matter reference.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from studykb.model import Reference

#: A front-matter key line (``key: ...``, ``key = ...``, ``- key: ...`` in a list item).
KEY_LINE = re.compile(r"^(\s*)(?:-\s+)?[\"']?([A-Za-z_][\w-]*)[\"']?\s*[:=]")


@dataclass(frozen=True, slots=True)
class Placed:
    """One reference on its line."""

    ref: Reference
    line: int
    """0-based line."""
    start: int
    end: int
    found: str
    """The text found at ``start..end``: the reference's own, its URL without the scheme
    (a bare ``https://`` link written ``example.org/...``), or ``""`` when it is not on
    the line as parsed (an escape): ``start..end`` then covers the line's text."""


def place(refs: Iterable[Reference], lines: list[str]) -> list[Placed]:
    """Each of ``refs`` (in the parser's order) placed on ``lines`` (line ends removed)."""
    cursor: dict[int, int] = {}
    out = []
    for ref in refs:
        index = min(max(ref.line - 1, 0), max(len(lines) - 1, 0))
        line = lines[index] if lines else ""
        start = cursor.get(index)
        if start is None:
            match = KEY_LINE.match(line) if ref.kind != "link" else None
            start = match.end() if match else 0
        text = ref.text
        col = line.find(text, start)
        if col == -1 and ref.style == "url":
            text = re.sub(r"^https?://", "", ref.text)
            col = line.find(text, start)
        if col == -1:
            stripped = line.lstrip()
            out.append(Placed(ref, index, len(line) - len(stripped), len(line.rstrip()), ""))
            continue
        cursor[index] = col + len(text)
        out.append(Placed(ref, index, col, col + len(text), text))
    return out
