"""How a plain query is read: its words, which of them stand together, and the topics
it names (no whoosh here; :mod:`studykb.search.ranking` turns a reading into a query).

A *plain* query has no query syntax (quotes, parentheses, operators, ``field:``,
wildcards). Its words are analysed as the index reads text (Chinese cut by rjieba,
English stemmed, protected terms kept). Words written next to each other form a
*group* (``数据并行``, ``kernel launch overhead``, ``在线 softmax``): whitespace between
two Chinese words, and punctuation, start a new one; ranking scores the documents where
a group's words stand together above those where they are scattered.

Topic names are a bilingual thesaurus: where a span of the query is a name of a topic
(id, title or alias, compared without case, spaces next to Chinese or hyphens), the
topic's other names are searched too (``算子融合`` -> ``kernel fusion``, ``operator
fusion``...), and shown to the user as "also searched".

A name several topics share (an alias written on each) is a concept made of them: the
query searches the best names of every one (``显存不够``, written on FSDP2, activation
checkpointing and mixed precision, -> ``ZeRO``, ``activation checkpointing``, ``混合精度``
...). That is how the thesaurus tells concepts apart that one word would blur: *memory
footprint* (what training keeps in GPU memory) is not the *memory hierarchy* (HBM,
shared memory, registers), and the bare ``显存`` names neither.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from studykb.text.analysis import Analyser
from studykb.text.segment import has_han, is_han
from studykb.text.terms import is_stop

if TYPE_CHECKING:
    from studykb.vault.topics import TopicTable

#: Characters that make a query more than plain words (whoosh query syntax).
SYNTAX = re.compile(
    r'["()*?\[\]{}^~]|(?<![\w.:/])[A-Za-z_]+:\S|(?:^|\s)(?:AND|OR|NOT|ANDNOT|'
    r"ANDMAYBE)(?:\s|$)"
)
#: Longest topic name looked for, in query words.
MAX_NAME_WORDS = 8
#: Characters that break a group of words, Han characters aside (with them the pattern
#: would take 2.5 ms to compile: see :data:`studykb.text.segment.HAN`).
_NOT_WORDY = re.compile(r"[^\w\s.+#-]")


@dataclass(frozen=True)
class Word:
    """One word of the query."""

    term: str
    """The index term (a stem, a protected term or a Chinese word)."""
    original: str
    """As written."""
    start: int
    end: int
    pos: int
    """Its position, as the index counts them (stop words take none)."""
    group: int
    """Words of one group were written together (see the module docstring)."""
    weak: bool
    """A function word (的, 为什么, how): counts little."""


@dataclass(frozen=True)
class Concept:
    """A topic the query names, and the other names it goes by."""

    key: str
    """The topic's document key."""
    id: str
    """The topic's id (what the ``tag`` field of the documents about it holds)."""
    written: str
    """The name as written in the query."""
    start: int
    end: int
    """Where it is in the query."""
    others: tuple[str, ...]
    """Its other names (other language, other spellings), searched too."""


@dataclass(frozen=True)
class Reading:
    """A plain query, read."""

    text: str
    words: tuple[Word, ...] = ()
    concepts: tuple[Concept, ...] = ()
    whole: bool = False
    """The whole query is one topic's name."""
    analyser: Analyser = field(default_factory=Analyser, compare=False, repr=False)
    """What read it (and reads the other names it searches)."""

    @property
    def also(self) -> list[str]:
        """Every other name searched, in order, once."""
        return list(dict.fromkeys(n for c in self.concepts for n in c.others))

    def pairs(self) -> list[tuple[Word, Word]]:
        """Adjacent words of one group, not both weak (what proximity scores)."""
        out = []
        for a, b in zip(self.words, self.words[1:], strict=False):
            if a.group == b.group and b.pos == a.pos + 1 and not (a.weak and b.weak):
                out.append((a, b))
        return out


def plain(text: str) -> bool:
    """Whether ``text`` is plain words (no query syntax)."""
    return bool(text.strip()) and not SYNTAX.search(text)


def read(text: str, topics: TopicTable | None = None, expand: bool = True) -> Reading:
    """The words of a plain query and the topics it names, read with the topic table's
    analyser (without topics: protecting :data:`~studykb.text.terms.TECH_TERMS` only)."""
    analyser = topics.analyser() if topics is not None else Analyser()
    words: list[Word] = []
    group = 0
    last_end = 0
    for t in analyser.tokens(text, pieces=False):
        if words and _breaks(text[last_end : t.start], text[last_end - 1], t.original[0]):
            group += 1
        words.append(
            Word(
                t.text,
                t.original,
                t.start,
                t.end,
                t.pos,
                group,
                is_stop(t.text) or is_stop(t.original),
            )
        )
        last_end = t.end
    if words and all(w.weak for w in words):
        words = [Word(w.term, w.original, w.start, w.end, w.pos, w.group, False) for w in words]
    concepts = _concepts(text, words, topics) if topics is not None and expand else []
    whole = len(concepts) == 1 and _norm(concepts[0].written) == _norm(text)
    return Reading(text, tuple(words), tuple(concepts), whole, analyser)


def _breaks(between: str, before: str, after: str) -> bool:
    """Whether the text between two words starts a new group."""
    if not all(map(is_han, _NOT_WORDY.findall(between))):
        return True  # punctuation
    if between.strip() or not between:
        return False
    return is_han(before) and is_han(after)


def _norm(name: str) -> str:
    """A name as compared: casefolded, ``-``/``_`` as spaces, no spaces next to Chinese."""
    folded = " ".join(name.casefold().replace("-", " ").replace("_", " ").split())
    words = folded.split(" ")  # no spaces next to Chinese
    out = words[0]
    for word in words[1:]:
        out += word if is_han(out[-1]) or is_han(word[0]) else " " + word
    return out


#: What this module keeps with a topic table (see :meth:`TopicTable.kept`).
_NAMES = "search.names"
_SHARED = "search.shared-names"
#: Names of each topic a shared name searches (its best ones: other script first).
SHARED_NAMES = 3


def _names(topics: TopicTable) -> dict[str, str]:
    """Normalised name -> topic key (kept with the topic table)."""
    return topics.kept(_NAMES, names_of)


def names_of(topics: TopicTable) -> dict[str, str]:
    """Normalised name -> topic key of every topic (ids win, as the topic table says)."""
    keys: dict[str, str] = {}
    for key, text in sorted(topics.texts.items()):
        for name in text.split("\n"):
            keys.setdefault(_norm(name), key)
    for name, key in topics.names.items():
        keys[_norm(name)] = key
    return keys


def _shared(topics: TopicTable) -> dict[str, tuple[str, ...]]:
    """Normalised name -> the topics that share it (only names of two or more; kept with
    the topic table)."""
    return topics.kept(_SHARED, _shared_names)


def _shared_names(topics: TopicTable) -> dict[str, tuple[str, ...]]:
    owners: dict[str, dict[str, None]] = {}
    for key, text in sorted(topics.texts.items()):
        for name in text.split("\n"):
            owners.setdefault(_norm(name), {})[key] = None
    return {n: tuple(ks) for n, ks in owners.items() if len(ks) > 1}


def remember_names(topics: TopicTable, keys: dict[str, str]) -> None:
    """Use ``keys`` (kept in the vault's cache) as the names of ``topics``."""
    topics.keep(_NAMES, keys)


def _concepts(text: str, words: list[Word], topics: TopicTable) -> list[Concept]:
    """The longest topic names in the query, left to right, not overlapping."""
    names = _names(topics)
    shared = _shared(topics)
    out: list[Concept] = []
    i = 0
    while i < len(words):
        for j in range(min(len(words), i + MAX_NAME_WORDS) - 1, i - 1, -1):
            written = text[words[i].start : words[j].end]
            key = names.get(_norm(written))
            if key is not None:
                keys = shared.get(_norm(written), (key,))
                others = (
                    _others(topics, key, written)
                    if len(keys) == 1
                    else tuple(
                        dict.fromkeys(
                            n for k in keys for n in _others(topics, k, written)[:SHARED_NAMES]
                        )
                    )
                )
                out.append(
                    Concept(
                        key,
                        topics.ids.get(key, ""),
                        written,
                        words[i].start,
                        words[j].end,
                        others,
                    )
                )
                i = j + 1
                break
        else:
            i += 1
    return out


def _others(topics: TopicTable, key: str, written: str) -> tuple[str, ...]:
    """The names of topic ``key`` other than ``written``, one per spelling: those in the
    other script first (``算子融合`` -> ``kernel fusion``...), aliases before the title,
    the id (a slug) last."""
    names = topics.texts.get(key, "").split("\n")  # id, title, aliases
    ordered = [*names[2:], *names[1:2], *names[:1]]
    seen = {_norm(written)}
    out = []
    for name in ordered:
        n = _norm(name)
        if n and n not in seen:
            seen.add(n)
            out.append(name)
    han = has_han(written)
    out.sort(key=lambda name: has_han(name) == han)
    return tuple(out)
