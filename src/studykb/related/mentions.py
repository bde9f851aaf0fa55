"""Unlinked mentions: which other documents' names a document's text says.

Like Obsidian's "unlinked mentions": a note that writes "see the KV cache notes" without
a link still points at the document titled *KV cache*. A document is named by its title,
its aliases and its id (a file name, for an Obsidian vault); the text is searched for all
of them at once with an Aho-Corasick automaton (``ahocorasick-rs``), leftmost-longest,
case-folded. A name must stand as a word: next to a Latin letter or digit there is none
of them on that side (Chinese characters next to a Latin word are a word's end, as
Chinese writes "在Obsidian中"), and at a Chinese character it starts or ends where the
text's words do as jieba cuts them (the search index's cut, :mod:`studykb.text.segment`):
插件 is named in 核心插件 (核心/插件), 日记 is not in 日记本 (a notebook, one word). Names
shorter than two Chinese characters or three Latin ones, and names shared by more than
:data:`MAX_OWNERS` documents, name nothing.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable

from ahocorasick_rs import AhoCorasick, MatchKind

from studykb.text.segment import is_han, segments

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
        cuts: dict[int, frozenset[int]] = {}
        for n, start, end in self._auto.find_matches_as_indexes(folded):
            if not _stands_alone(folded, start, end, cuts):
                continue
            for owner in self.owners[n]:
                if owner != key:
                    found[owner] += 1
        return found


def _stands_alone(text: str, start: int, end: int, cuts: dict[int, frozenset[int]]) -> bool:
    """Whether ``text[start:end]`` starts and ends as a word (see the module's docstring);
    ``cuts``: where the words of each Chinese run begin, by the run's start (remembered)."""
    for inside, outside in ((start, start - 1), (end - 1, end)):
        if inside < 0 or outside < 0 or outside >= len(text):
            continue
        if is_han(text[inside]):
            if is_han(text[outside]) and max(inside, outside) not in _cuts(text, inside, cuts):
                return False
        elif _latin(text[inside]) and _latin(text[outside]):
            return False
    return True


def _latin(char: str) -> bool:
    return (char.isalnum() or char == "_") and not is_han(char)


def _cuts(text: str, at: int, cuts: dict[int, frozenset[int]]) -> frozenset[int]:
    """Where the words of the Chinese run holding ``at`` begin (positions in ``text``)."""
    a = at
    while a > 0 and is_han(text[a - 1]):
        a -= 1
    got = cuts.get(a)
    if got is None:
        b = at + 1
        while b < len(text) and is_han(text[b]):
            b += 1
        here, starts = a, {a, b}
        for word, _pieces in segments().cut(text[a:b]):
            here += len(word)
            starts.add(here)
        got = cuts[a] = frozenset(starts)
    return got


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
