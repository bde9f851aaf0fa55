"""Where things are in a file's raw front matter (:class:`FrontMatter`: the line of a key
or a value, for messages), and the references its values make (:func:`front_refs`)."""

from __future__ import annotations

import re
from types import MappingProxyType
from typing import Any

from studykb.model import WARNING, Problem, Reference
from studykb.parse.links import RawRef, wikilink
from studykb.parse.reading import GITHUB, Reading
from studykb.parse.urls import normalize_url
from studykb.parse.wikilinks import WIKILINK_RE, split_target

#: Front-matter keys whose values are references, and the reference kind each gives.
REF_KEYS = MappingProxyType(
    {
        "refs": "ref",
        "requires": "requires",
        "related": "related",
        "course": "course",
        "items": "item",
    }
)
_SCHEME = re.compile(r"^https?://", re.I)
_KEY_RE = re.compile(r"""^\s*(?:-\s+)?["']?([^"'=:\s]+)["']?\s*[:=]""")


class FrontMatter:
    """Finds the line of a value inside the raw front matter, for messages."""

    def __init__(
        self,
        path: str,
        fm_text: str,
        fm_line: int,
        problems: list[Problem],
        reading: Reading = GITHUB,
    ) -> None:
        self.path = path
        self.reading = reading
        self.lines = fm_text.split("\n") if fm_text else []
        self.fm_line = fm_line
        self.problems = problems

    def key_line(self, key: str, start: int = 0) -> int:
        """Index (0-based, in the front matter) of the line defining ``key``."""
        for i in range(start, len(self.lines)):
            line = self.lines[i]
            if key in line:
                m = _KEY_RE.match(line)
                if m and m.group(1) == key:
                    return i
        return start

    def find(self, needle: str, start: int) -> int:
        """Index of the first line from ``start`` holding ``needle`` as a whole word.

        ``e`` must not be found inside ``requires:`` or an earlier URL; a bare substring
        is the fallback (``needle`` may be cut short, or written with quotes).
        """
        if not needle:
            return start
        size = len(needle)
        for i in range(start, len(self.lines)):
            line = self.lines[i]
            pos = line.find(needle)
            while pos != -1:
                before = line[pos - 1] if pos else " "
                after = line[pos + size] if pos + size < len(line) else " "
                if not wordish(before) and not wordish(after):
                    return i
                pos = line.find(needle, pos + 1)
        for i in range(start, len(self.lines)):
            if needle in self.lines[i]:
                return i
        return start

    def find_next(self, needle: str, start: int) -> int:
        """Like :meth:`find`, but on a line after ``start`` when there is one (the next unit)."""
        index = self.find(needle, start + 1)
        if needle and index < len(self.lines) and needle in self.lines[index]:
            return index
        return self.find(needle, start)

    def line(self, index: int) -> int:
        return self.fm_line + index if self.lines else 1

    def warn(self, index: int, code: str, message: str) -> None:
        self.problems.append(Problem(self.path, self.line(index), WARNING, code, message))


def wordish(char: str) -> bool:
    return char.isalnum() or char in "_.-"


def front_refs(
    ctx: FrontMatter,
    source: str,
    meta: dict[str, Any],
    *,
    start: int = 0,
    skip: tuple[str, ...] = (),
    unit_scope: bool = False,
) -> list[Reference]:
    """The references in front matter ``meta`` (from line ``start`` on): the values of
    :data:`REF_KEYS`, and wikilinks in any other value; a bare name in a unit is ``unit``-styled."""
    refs: list[Reference] = []
    style = "unit" if unit_scope else "name"
    for key, value in meta.items():
        if key in skip:
            continue
        kind = REF_KEYS.get(key)
        index = ctx.key_line(key, start)
        if kind is None:
            for text in walk_strings(value):
                if "[[" in text:
                    index = ctx.find(text[:40], index)
                    refs.extend(wikilinks_in(ctx, source, text, "link", index))
        else:
            refs.extend(key_refs(ctx, source, kind, value, index, style))
    return refs


def key_refs(
    ctx: FrontMatter, source: str, kind: str, value: Any, index: int, style: str
) -> list[Reference]:
    """The references of one reference key's value: one item or a list of them, each a
    wikilink, a URL or a bare name (``style``), or a mapping with ``ref`` and ``reason``."""
    refs: list[Reference] = []
    items = value if isinstance(value, list) else [value]
    for item in items:
        reason = ""
        if isinstance(item, dict):
            reason = str(item.get("reason") or "")
            item = item.get("ref", item.get("id", item.get("target")))
        if item is None or item == "":
            continue
        text = str(item).strip()
        index = ctx.find(text[:40], index)
        if "[[" in text:
            refs.extend(wikilinks_in(ctx, source, text, kind, index, reason))
        elif _SCHEME.match(text):
            refs.append(
                Reference(
                    source,
                    ctx.path,
                    ctx.line(index),
                    kind,
                    text,
                    normalize_url(text),
                    "url",
                    reason=reason,
                )
            )
        else:
            refs.append(
                Reference(source, ctx.path, ctx.line(index), kind, text, text, style, "", reason)
            )
    return refs


def wikilinks_in(
    ctx: FrontMatter, source: str, text: str, kind: str, index: int, reason: str = ""
) -> list[Reference]:
    out = []
    for match in WIKILINK_RE.finditer(text):
        target, anchor, label = split_target(match.group(2))
        found = wikilink(ctx.line(index), match.group(0), target, anchor, label, ctx.reading)
        if isinstance(found, RawRef):
            out.append(
                Reference(
                    source,
                    ctx.path,
                    found.line,
                    kind,
                    found.text,
                    found.target,
                    found.style,
                    found.anchor,
                    reason,
                    found.optional,
                )
            )
    return out


def walk_strings(value: Any):  # type: ignore[no-untyped-def]
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from walk_strings(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from walk_strings(v)
