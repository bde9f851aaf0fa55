"""Unlinked mentions: which other documents' names a document's text says.

Like Obsidian's "unlinked mentions": a note that writes "see the KV cache notes" without
a link still points at the document titled *KV cache*. A document is named by its title,
its aliases and its id (a file name, for an Obsidian vault); the text is searched for all
of them at once with an Aho-Corasick automaton (``ahocorasick-rs``), leftmost-longest,
case-folded. An ASCII name must stand as a word (no letter or digit on either side);
a Chinese name of two characters or more may stand anywhere. Names shorter than that,
and names shared by more than :data:`MAX_OWNERS` documents, name nothing.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable

from ahocorasick_rs import AhoCorasick, MatchKind

#: A name held by more documents than this names none of them.
MAX_OWNERS = 3

NameRow = tuple[str, str, str, list[str]]
"""(key, id, title, aliases) of a document."""


def _usable(name: str) -> bool:
    """Whether a name is long enough to be told from ordinary words."""
    if name.isascii():
        return len(name) >= 3 and not name.isdigit()
    return len(name) >= 2


class Names:
    """Every document's names, searchable in any text at once."""

    def __init__(self, rows: Iterable[NameRow]) -> None:
        owners: dict[str, list[str]] = {}
        for key, doc_id, title, aliases in rows:
            for name in {n.strip().casefold() for n in (title, doc_id, *aliases) if n}:
                if _usable(name):
                    owners.setdefault(name, []).append(key)
        self.names = sorted(n for n, keys in owners.items() if len(keys) <= MAX_OWNERS)
        self.owners = [sorted(owners[n]) for n in self.names]
        text = json.dumps([self.names, self.owners], ensure_ascii=False)
        self.digest = hashlib.blake2b(text.encode(), digest_size=8).hexdigest()
        self._auto = (
            AhoCorasick(self.names, matchkind=MatchKind.LeftmostLongest) if self.names else None
        )

    def mentioned(self, key: str, text: str) -> Counter[str]:
        """How often ``text`` (of document ``key``) names each other document."""
        found: Counter[str] = Counter()
        if self._auto is None or not text:
            return found
        folded = text.casefold()
        for n, start, end in self._auto.find_matches_as_indexes(folded):
            name = self.names[n]
            if name.isascii() and not _stands_alone(folded, start, end):
                continue
            for owner in self.owners[n]:
                if owner != key:
                    found[owner] += 1
        return found


def _stands_alone(text: str, start: int, end: int) -> bool:
    """No letter or digit right before ``start`` or right after ``end``."""
    before = text[start - 1] if start > 0 else " "
    after = text[end] if end < len(text) else " "
    return not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_")


def pack(found: Counter[str]) -> str:
    """A document's mentions as one string for the cache: ``key\\x1fcount`` joined by \\x1e."""
    return "\x1e".join(f"{k}\x1f{n}" for k, n in sorted(found.items()))


def unpack(data: str) -> list[tuple[str, int]]:
    if not data:
        return []
    out = []
    for item in data.split("\x1e"):
        key, _sep, count = item.rpartition("\x1f")
        out.append((key, int(count)))
    return out
