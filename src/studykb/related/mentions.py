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
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

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
    """Every document's names, searchable in any text at once.

    Kept with the text vectors (:meth:`to_data`): after an edit only the documents of the
    changed files are read again (:meth:`updated`). Many texts are searched with an
    Aho-Corasick automaton (:meth:`for_many`, made once, about 40 ms at 10k documents);
    a few with a scan for the longest name at each place (:meth:`_scan`), which finds
    the same names at the same places (leftmost, then longest)."""

    def __init__(self, rows: Iterable[NameRow] = ()) -> None:
        self._of: dict[str, tuple[str, ...]] | None = {
            key: _names_of(doc_id, title, aliases) for key, doc_id, title, aliases in rows
        }
        self._kept: tuple[list[str], list[Joined]] = ([], [])
        self.labels: dict[str, Any] | None = None
        """The link labels among the names, as plain data (:mod:`studykb.related.labels`)."""
        self._index()

    @property
    def of(self) -> dict[str, tuple[str, ...]]:
        """Document key -> its usable names, folded and sorted."""
        if self._of is None:
            keys, lists = self._kept
            self._of = {k: tuple(_split(got)) for k, got in zip(keys, lists, strict=True)}
        return self._of

    @property
    def owners(self) -> list[list[str]]:
        """Name (by its place in :attr:`names`) -> the documents it names, sorted."""
        return [_split(got) for got in self._owners]

    def _index(self) -> None:
        owners: dict[str, list[str]] = {}
        for key, names in self.of.items():
            for name in names:
                owners.setdefault(name, []).append(key)
        self.names = sorted(n for n, keys in owners.items() if len(keys) <= MAX_OWNERS)
        self._owners: list[Joined] = [sorted(owners[n]) for n in self.names]
        text = json.dumps([self.names, self._owners], ensure_ascii=False)
        self.digest = hashlib.blake2b(text.encode(), digest_size=8).hexdigest()
        self._searchers()

    def _searchers(self) -> None:
        self._auto: AhoCorasick | None = None
        self._starts: dict[str, tuple[int, int, list[int]]] | None = None
        """The first two characters of names -> the range of :attr:`names` they begin, and
        those names' lengths, longest first (:func:`_lengths`, made on use)."""

    def updated(self, rows: Iterable[NameRow], gone: Iterable[str]) -> bool:
        """Read again the names of the documents ``rows`` (of the changed files; ``gone``:
        the keys of those documents no longer there); whether any name changed (the
        digest is then made again)."""
        now = {key: _names_of(doc_id, title, aliases) for key, doc_id, title, aliases in rows}
        gone = [key for key in gone if key not in now]
        if self._of is None:
            keys, lists = self._kept
            place = dict(zip(keys, range(len(keys)), strict=True))
            same = all(k not in place for k in gone) and all(
                k in place and tuple(_split(lists[place[k]])) == names for k, names in now.items()
            )
        else:
            same = all(k not in self._of for k in gone) and all(
                self._of.get(k) == names for k, names in now.items()
            )
        if same:
            return False
        of = self.of
        for key in gone:
            of.pop(key, None)
        of.update(now)
        self._index()
        return True

    def to_data(self) -> dict[str, object]:
        """Plain data for the cache: strings and lists of them."""
        if self._of is None:
            keys, lists = self._kept
        else:
            keys, lists = list(self._of), [list(names) for names in self._of.values()]
        return {
            "keys": keys,
            "of": _joined(lists),
            "names": self.names,
            "owners": _joined(self._owners),
            "digest": self.digest,
            "labels": self.labels,
        }

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Names:
        """The table :meth:`to_data` stored (a ``ValueError`` when it is not one)."""
        made = cls.__new__(cls)
        keys, of, names, owners = data["keys"], data["of"], data["names"], data["owners"]
        if not all(isinstance(x, list) for x in (keys, of, names, owners)):
            raise ValueError("not a stored name table")
        if len(of) != len(keys) or len(owners) != len(names):
            raise ValueError("a stored name table of the wrong size")
        made._of, made._kept = None, (keys, of)
        made.names, made._owners = names, owners
        made.digest = str(data["digest"])
        labels = data.get("labels")
        made.labels = labels if isinstance(labels, dict) else None
        made._searchers()
        return made

    def for_many(self) -> Names:
        """Make the automaton for searching many texts (itself, for chaining)."""
        if self._auto is None and self.names:
            self._auto = AhoCorasick(self.names, matchkind=MatchKind.LeftmostLongest)
        return self

    def for_few(self) -> Names:
        """Let go of the automaton :meth:`for_many` made, once the many texts are searched
        (at 50k documents about 30 MB; a few texts are scanned without it, the same
        matches), itself for chaining."""
        self._auto = None
        return self

    def mentioned(self, key: str, text: str) -> Counter[str]:
        """How often ``text`` (of document ``key``) names each other document."""
        found: Counter[str] = Counter()
        if not self.names or not text:
            return found
        folded = text.casefold()
        cuts: dict[int, frozenset[int]] = {}
        matches = (
            self._auto.find_matches_as_indexes(folded)
            if self._auto is not None
            else self._scan(folded)
        )
        for n, start, end in matches:
            if not _stands_alone(folded, start, end, cuts):
                continue
            for owner in _split(self._owners[n]):
                if owner != key:
                    found[owner] += 1
        return found

    def _scan(self, folded: str) -> Iterator[tuple[int, int, int]]:
        """(name, start, end) of the names in ``folded`` as the automaton finds them: at
        each place from the left the longest name starting there, then on after it. The
        names are sorted, so those a place's first two characters start are a range of
        them, found by bisection when those two characters are first met (no table of
        every name is made for a few texts)."""
        if self._starts is None:
            self._starts = {}
        starts, names = self._starts, self.names
        at, size = 0, len(folded)
        while at < size - 1:
            two = folded[at : at + 2]
            got = starts.get(two)
            if got is None:  # every name has two characters at least (see _usable)
                got = starts[two] = _lengths(names, two)
            lo, hi, lengths = got
            for length in lengths:
                name = folded[at : at + length]
                n = bisect_left(names, name, lo, hi)
                if n < hi and names[n] == name:
                    yield n, at, at + length
                    at += length
                    break
            else:
                at += 1


Joined = list[str] | str
"""A list of names as kept: joined by ``\x1f`` (one string to decode, not a list of
them: the name table's lists decoded five times faster), or the list itself when one
of its names is empty or holds that character (:func:`_joined`, :func:`_split`)."""


def _joined(lists: list[Joined]) -> list[Joined]:
    """Each list as one string where that reads back as it was (:data:`Joined`)."""
    return [
        got
        if isinstance(got, str) or not all(n and "\x1f" not in n for n in got)
        else "\x1f".join(got)
        for got in lists
    ]


def _split(got: Joined) -> list[str]:
    """A list as :func:`_joined` kept it (a ``ValueError`` when it is not one)."""
    if isinstance(got, str):
        return got.split("\x1f") if got else []
    if not isinstance(got, list):
        raise ValueError("not a kept list of names")
    return got


def _lengths(names: list[str], two: str) -> tuple[int, int, list[int]]:
    """The range of the sorted ``names`` that begin with ``two`` (two characters), and
    their lengths, longest first."""
    lo = bisect_left(names, two)
    after = ord(two[1]) + 1
    hi = bisect_left(names, two[0] + chr(after), lo) if after <= 0x10FFFF else len(names)
    return lo, hi, sorted(set(map(len, names[lo:hi])), reverse=True)


def _names_of(doc_id: str, title: str, aliases: Iterable[str]) -> tuple[str, ...]:
    """A document's usable names, folded, sorted."""
    folded = {n.strip().casefold() for n in (title, doc_id, *aliases) if n}
    return tuple(sorted(n for n in folded if _usable(n)))


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


def count_named(named: dict[str, int], key: str, packed: str, sign: int = 1) -> None:
    """Count in ``named`` (key -> how many documents name it) the documents that the
    mentions ``packed`` of document ``key`` name, each once and never ``key`` itself, as
    the engine counts a named document's namers; ``sign`` -1 takes them out again (a
    count that falls to 0 leaves ``named``). The counts are kept with the mentions
    (:attr:`studykb.related.textsim.TermVectors.named`), so that ranking one document
    weighs the documents it names without reading every document's mentions."""
    for target, _times in unpack(packed):
        if target != key:
            got = named.get(target, 0) + sign
            if got:
                named[target] = got
            else:
                named.pop(target, None)


def unpack(data: str) -> list[tuple[str, int]]:
    if not data:
        return []
    out = []
    for item in data.split("\x1e"):
        key, _sep, count = item.rpartition("\x1f")
        out.append((key, int(count)))
    return out
