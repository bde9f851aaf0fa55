"""The names of a vault's documents, ready for completion: which ids, aliases and titles
fit what is typed, and which tags and topics.

:class:`NameIndex` keeps every id, alias and title of the vault sorted, and also joined
into one string, so a keystroke costs a binary search (prefix matches), C-speed
``str.find`` (substring matches) and one regex pass (letters in order), not a Python
loop over tens of thousands of names.
"""

from __future__ import annotations

import heapq
import re
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from types import MappingProxyType

from studykb.model import Document
from studykb.vault.resolve import fold

MAX_ITEMS = 100
_WHICH = MappingProxyType({"id": 0, "alias": 1, "title": 2})


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
