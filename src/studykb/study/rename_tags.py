"""What renaming a topic rewrites besides its references: the names that make a document
cover it or be about it.

A topic is named in ``covers`` and ``tags`` (a course unit's too, Zola's ``[taxonomies]
tags``, and inline ``#tags``) by its id, title or aliases (:mod:`studykb.vault.topics`).
When ``mv`` changes a topic's id, a name that was its old id and is not also its title
or one of its aliases names nothing afterwards: the topic would lose its readings and
plans would lose their steps. Those names are rewritten to the new id: front matter
through :func:`studykb.parse.fm_items.rename_item` (proven by parsing), inline tags
where the parser found them. Each change comes back as a span of the file's text, so
the dry run lists it and the editor's rename applies it like any other edit.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from studykb.errors import StudyError
from studykb.model import Document
from studykb.parse.fm_edit import EditError
from studykb.parse.fm_items import Where, names, rename_item
from studykb.parse.frontmatter import split
from studykb.parse.inline_tags import inline_tags, match_tag
from studykb.parse.markdown import markdown
from studykb.vault.resolve import fold

if TYPE_CHECKING:
    from studykb.parse.reading import Reading

#: (0-based line, start column, end column on the last line, old text, new text).
Span = tuple[int, int, int, str, str]
#: The front-matter places that name topics, from the top of a document or a unit's entry.
PLACES: tuple[Where, ...] = (("tags",), ("covers",), ("taxonomies", "tags"))
#: A Zola site's studykb keys are under ``[extra]`` (a section's tags too).
ZOLA_PLACES: tuple[Where, ...] = (("extra", "tags"), ("extra", "covers"))
_WORD = frozenset("_-./#")


def renamed_name(doc: Document, stem: str, new_id: str) -> str | None:
    """The old id when renaming topic ``doc`` (file name ``stem``) to ``new_id`` leaves
    names of it behind (its title and aliases do not carry that name), else None."""
    if doc.type != "topic" or fold(new_id) == fold(doc.id):
        return None
    kept = {fold(a) for a in doc.aliases}
    if "title" in doc.meta or fold(doc.title) != fold(stem):  # not made from the file name
        kept.add(fold(doc.title))
    return None if fold(doc.id) in kept else doc.id


def names_topic(doc: Document, old: str) -> bool:
    """Whether ``doc`` (a unit too) names ``old`` in its tags or covers."""
    return any(fold(t) == fold(old) for t in (*doc.tags, *doc.covers))


def spans(path: str, text: str, old: str, new: str, reading: Reading) -> list[Span]:
    """The spans of ``text`` (the file at ``path``) to rewrite so that every name ``old``
    in front-matter tags and covers, and every inline ``#old``, becomes ``new``."""
    zola = reading.generator == "zola"
    return [*_front_matter(path, text, old, new, zola), *_inline(path, text, old, new, reading)]


def _front_matter(path: str, text: str, old: str, new: str, zola: bool = False) -> list[Span]:
    body = text[1:] if text.startswith("\ufeff") else text
    meta = split(body).meta
    wheres = PLACES + ZOLA_PLACES if zola else PLACES
    places: list[tuple[Where, str | None]] = [(w, None) for w in wheres if _names(meta, w, old)]
    units = meta.get("units")
    extra = meta.get("extra")
    if zola and units is None and isinstance(extra, dict):
        units = extra.get("units")
    for unit in units if isinstance(units, list) else ():
        if isinstance(unit, dict) and str(unit.get("id") or "").strip():
            uid = str(unit["id"]).strip()
            places += [(w, uid) for w in PLACES[:2] if _names(unit, w, old)]
    if not places:
        return []
    raw = text.encode("utf-8", "surrogateescape")
    try:
        for where, unit in places:
            raw = rename_item(raw, where, old, new, unit)
        changed = raw.decode("utf-8", "surrogateescape")
    except (EditError, UnicodeDecodeError) as exc:
        raise StudyError(
            f"{path}: cannot rename {old!r} to {new!r} in its front matter ({exc}); "
            "nothing was changed.",
            hint=f"Rename it there by hand first, or give the topic the alias {old!r}.",
        ) from None
    return diff_spans(text, changed)


def _names(mapping: object, where: Where, old: str) -> bool:
    node = mapping
    for key in where:
        node = node.get(key) if isinstance(node, dict) else None
    return any(fold(n) == fold(old) for n in names(node))


def _inline(path: str, text: str, old: str, new: str, reading: Reading) -> list[Span]:
    """``#old`` in the body, where the parser reads a tag (not in code, links, URLs)."""
    parts = split(text[1:] if text.startswith("\ufeff") else text, load=False)
    found = [
        tag
        for tag in inline_tags(
            markdown(reading.shortcodes, reading.definition_ids, reading.footnotes).parse(
                parts.body
            )
        )
        if fold(tag.name) == fold(old)
    ]
    if not found:
        return []
    if match_tag("#" + new) != new:
        raise StudyError(
            f"{path}: the tag #{old} cannot be renamed #{new} (not a tag name); "
            "nothing was changed.",
            hint=f"Choose a name without spaces or punctuation, or alias the topic {old!r}.",
        )
    lines = text.split("\n")
    out: list[Span] = []
    taken: set[tuple[int, int]] = set()
    for tag in found:
        index = parts.body_line - 2 + tag.line
        line = lines[index] if 0 <= index < len(lines) else ""
        at = line.find("#" + tag.name)
        while at != -1:
            free = at == 0 or line[at - 1].isspace() or line[at - 1] == "\ufeff"
            if free and match_tag(line, at) == tag.name and (index, at) not in taken:
                taken.add((index, at))
                out.append((index, at, at + 1 + len(tag.name), "#" + tag.name, "#" + new))
                break
            at = line.find("#" + tag.name, at + 1)
    return out


def diff_spans(old: str, new: str) -> list[Span]:
    """The spans that turn ``old`` into ``new``: changed lines, each cut to the words that
    differ (a line count that changes gives one span over the lines concerned)."""
    a, b = old.split("\n"), new.split("\n")
    out: list[Span] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        if op == "replace" and i2 - i1 == j2 - j1:
            out += [_in_line(i1 + k, a[i1 + k], b[j1 + k]) for k in range(i2 - i1)]
        elif i1 < i2:
            last = a[i2 - 1]
            out.append((i1, 0, len(last), "\n".join(a[i1:i2]), "\n".join(b[j1:j2])))
        else:
            out.append((i1, 0, 0, "", "".join(line + "\n" for line in b[j1:j2])))
    return out


def _in_line(index: int, a: str, b: str) -> Span:
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    while head and (a[head - 1].isalnum() or a[head - 1] in _WORD):
        head -= 1
    while tail and (a[len(a) - tail].isalnum() or a[len(a) - tail] in _WORD):
        tail -= 1
    return (index, head, len(a) - tail, a[head : len(a) - tail], b[head : len(b) - tail])
