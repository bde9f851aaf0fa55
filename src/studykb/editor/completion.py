"""Completion of references: where the cursor is (inside ``[[``, after ``[[doc#``, in a
front-matter reference list) and which names fit what is typed.

:class:`NameIndex` keeps every id, alias and title of the vault sorted, and also joined
into one string, so a keystroke costs a binary search (prefix matches), C-speed
``str.find`` (substring matches) and one regex pass (letters in order), not a Python
loop over tens of thousands of names.
"""

from __future__ import annotations

import heapq
import json
import re
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from studykb.model import Document
from studykb.parse.document import REF_KEYS
from studykb.vault.resolve import fold

MAX_ITEMS = 100
#: Front-matter keys whose values are tags or topics, not references.
TAG_KEYS = ("tags", "covers")
_WIKI_OPEN = re.compile(r"!?\[\[([^\[\]\n]*)$")
_KEY_LINE = re.compile(r"^(\s*)(?:-\s+)?[\"']?([A-Za-z_][\w-]*)[\"']?\s*[:=]")
_ITEM_LINE = re.compile(r"^(\s*)-(\s|$)")
_NEEDS_QUOTES = re.compile(r"[,\[\]{}:#&*!|>'\"%@`]|^[-?]|\s$")
_WHICH = {"id": 0, "alias": 1, "title": 2}


@dataclass(frozen=True, slots=True)
class Candidate:
    """One name a reference may use."""

    label: str
    """The name shown: an id, alias or title."""
    folded: str
    insert: str
    """What to write: the document's id (its path where the id is ambiguous)."""
    key: str
    which: str
    """``id``, ``alias`` or ``title``."""
    title: str
    type: str


class NameIndex:
    """Every name of the vault, ready for completion."""

    def __init__(self, docs: dict[str, Document]) -> None:
        self.ids = Counter(fold(d.id) for d in docs.values() if d.type != "unit")
        cands = [c for key, doc in docs.items() for c in _candidates(key, doc, self.ids)]
        cands.sort(key=_folded)
        self._finish(cands)

    def updated(
        self, docs: dict[str, Document], gone: Iterable[Document], fresh: Iterable[Document]
    ) -> NameIndex:
        """The index after ``gone`` documents were removed or replaced by ``fresh`` ones
        (``docs`` is the new whole set); unchanged names are reused."""
        gone, fresh = list(gone), list(fresh)
        out = NameIndex.__new__(NameIndex)
        out.ids = self.ids.copy()
        for doc in gone:
            if doc.type != "unit":
                out.ids[fold(doc.id)] -= 1
        for doc in fresh:
            if doc.type != "unit":
                out.ids[fold(doc.id)] += 1
        # documents sharing an id with a changed one may switch between id and path
        touched = {fold(d.id) for d in (*gone, *fresh)}
        redo = {d.key for d in fresh} | {k for k, d in docs.items() if fold(d.id) in touched}
        drop = redo | {d.key for d in gone}
        cands = [c for c in self.cands if c.key not in drop]
        cands.extend(c for key in redo if key in docs for c in _candidates(key, docs[key], out.ids))
        cands.sort(key=_folded)  # mostly sorted already: close to linear
        out._finish(cands)
        return out

    def _finish(self, cands: list[Candidate]) -> None:
        self.cands = cands
        self.folded = [c.folded for c in cands]
        #: the part of the rank that does not depend on the query
        self.rank = [(c.type == "unit", _WHICH[c.which], len(c.folded), c.folded) for c in cands]
        self.blob = "\n".join(self.folded) + "\n"
        self.starts = []
        offset = 0
        for name in self.folded:
            self.starts.append(offset)
            offset += len(name) + 1
        # one string per name sorts several times faster than tuples (and holds the
        # interpreter lock for less time when this runs in a background thread)
        order = [f"{int(u)}{w}{min(n, 9999):04d}{f}" for u, w, n, f in self.rank]
        self.default = sorted(range(len(cands)), key=order.__getitem__)

    def line_of(self, offset: int) -> int:
        return bisect_right(self.starts, offset) - 1


def _folded(cand: Candidate) -> str:
    return cand.folded


def _candidates(key: str, doc: Document, ids: Counter[str]) -> list[Candidate]:
    insert = doc.id
    if doc.type != "unit" and ids[fold(doc.id)] > 1:  # ambiguous id: write the path
        insert = doc.path[:-3] if doc.path.lower().endswith(".md") else doc.path
    seen: set[str] = set()
    out = []
    for which, label in (
        ("id", doc.id),
        *(("alias", a) for a in doc.aliases),
        ("title", doc.title),
    ):
        folded = fold(label).replace("\n", " ")
        if folded and folded not in seen:
            seen.add(folded)
            out.append(Candidate(label, folded, insert, key, which, doc.title, doc.type))
    return out


def complete(
    index: NameIndex,
    prefix: str,
    *,
    prefer: str | None = None,
    limit: int = MAX_ITEMS,
    here: str = "",
) -> tuple[list[Candidate], bool]:
    """The best ``limit`` names for ``prefix`` and whether there were more.

    Names starting with the prefix come first, then those with it at a word start, then
    anywhere, then those holding its letters in order; within each, documents of type
    ``prefer``, then ids before aliases before titles, shorter first. The document at
    vault path ``here`` (the one being edited) is left out.
    """
    query = fold(prefix)
    cands = index.cands
    want = limit + 1  # one more, to know whether the list was cut
    if not query:
        order = index.default
        if prefer:
            order = [i for i in order if cands[i].type == prefer] + [
                i for i in order if cands[i].type != prefer
            ]
        picked = [cands[i] for i in order[: want + 8] if cands[i].key != here]
        return picked[:limit], len(picked) > limit or len(order) > want + 8
    scores: dict[int, int] = {}
    lo = bisect_left(index.folded, query)
    hi = bisect_left(index.folded, query + "\U0010ffff")
    for i in range(lo, hi):
        scores[i] = 0
    if len(scores) < want:
        _substrings(index, query, scores)
    if len(scores) < want and len(query) > 1:
        _in_order(index, query, scores)
    rank = index.rank

    def key(i: int) -> tuple[int, bool, tuple[bool, int, int, str]]:
        return (scores[i], cands[i].type != prefer if prefer else False, rank[i])

    best = heapq.nsmallest(want + 8, (i for i in scores if cands[i].key != here), key=key)
    picked = [cands[i] for i in best]
    return picked[:limit], len(picked) > limit


def _substrings(index: NameIndex, query: str, scores: dict[int, int]) -> None:
    blob = index.blob
    pos = blob.find(query)
    while pos != -1:
        i = index.line_of(pos)
        score = 1 if pos == 0 or not blob[pos - 1].isalnum() else 2
        if scores.get(i, 9) > score:
            scores[i] = score
        pos = blob.find(query, pos + 1)


def _in_order(index: NameIndex, query: str, scores: dict[int, int]) -> None:
    """Names holding the query's letters in order (``fsdptut`` finds "FSDP2 tutorial")."""
    parts = [re.escape(query[0])]
    for ch in query[1:]:
        # a possessive gap that cannot skip past the next letter: linear, no backtracking
        parts.append(f"[^\\n{re.escape(ch)}]*+{re.escape(ch)}")
    for match in re.finditer("".join(parts), index.blob):
        i = index.line_of(match.start())
        if i not in scores:
            scores[i] = 3


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
    units of a course), ``front`` (a front-matter reference list) or ``tag`` (front-matter
    ``tags`` and ``covers``)."""
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
        if "#" in inner:
            target, _, part = inner.partition("#")
            return Completion("heading", part, col - len(part), close, target.strip())
        start = col - len(inner)
        return Completion("wikilink", inner, start, close)
    fm = _front_matter_range(lines)
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


def _front_matter_range(lines: list[str]) -> tuple[int, int] | None:
    """(opening fence line, closing fence line) of YAML/TOML front matter; unclosed: to the end."""
    first = 0
    while first < len(lines) and not lines[first].strip():
        first += 1
    if first >= len(lines):
        return None
    fence = lines[first].strip().lstrip("\ufeff")
    if fence not in ("---", "+++"):
        return None
    closers = ("---", "...") if fence == "---" else ("+++",)
    for n in range(first + 1, len(lines)):
        if lines[n].rstrip() in closers:
            return first, n
    return first, len(lines)


def _front_key(lines: list[str], line: int, fm_start: int, col: int) -> str:
    """The front-matter key whose value the cursor is in (``requires`` for an item below it)."""
    current = lines[line]
    match = _KEY_LINE.match(current)
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
        match = _KEY_LINE.match(text)
        return match.group(2) if match else ""
    return ""


@dataclass(frozen=True, slots=True)
class Tag:
    """A value offered in ``tags`` or ``covers``: a topic's id, or a tag in use."""

    label: str
    detail: str
    topic: bool
    uses: int = 0


def tags_for(docs: dict[str, Document], key: str, prefix: str) -> list[Tag]:
    """Topics (for ``covers``: only topics) and, for ``tags``, the tags already in use,
    that fit ``prefix``: topics first, then the most used tags."""
    query = fold(prefix)
    out: dict[str, Tag] = {}
    for doc in docs.values():
        if doc.type == "topic" and (query in fold(doc.id) or query in fold(doc.title)):
            out.setdefault(fold(doc.id), Tag(doc.id, f"{doc.title} (topic)", True))
    if key == "tags":
        used: Counter[str] = Counter()
        shown: dict[str, str] = {}
        for doc in docs.values():
            for tag in doc.tags:
                folded = fold(tag)
                if query in folded and folded not in out:
                    used[folded] += 1
                    shown.setdefault(folded, tag)
        for folded, n in used.items():
            out[folded] = Tag(shown[folded], f"tag, used {n} time{'s' if n != 1 else ''}", False, n)
    return sorted(
        out.values(),
        key=lambda t: (not t.topic, not fold(t.label).startswith(query), -t.uses, fold(t.label)),
    )[:MAX_ITEMS]
