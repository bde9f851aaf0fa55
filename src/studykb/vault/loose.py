"""Finding a document by a name typed loosely, as forgiving as search.

A name that resolves as written (path, id, alias, title, URL: :mod:`studykb.vault.lookup`)
wins. Otherwise, in order, the first of these that names anything:

1. the name compared without case, spaces, hyphens or other punctuation, and without a
   part in parentheses ("paged attention" -> PagedAttention, "context parallelism" ->
   *Context Parallelism (Sequence Parallelism for Long Contexts)*), then with each
   English word reduced to its stem ("KV caches" -> KV cache);
2. "X paper" (repo, docs, tutorial, book, 论文, 仓库...): a document of that kind named
   by X loosely, whose name holds X as words, or that covers the topic X names ("vLLM
   paper" -> the PagedAttention paper, whose name says vLLM);
3. the name's words standing together in a longer name ("CUDA" -> *CUDA Programming
   Basics*): topics first, then names that start with them, then the document with the
   most such names.

What a loose match chose is never silent: :class:`Looked` says how, and which other
documents fitted, so front ends can say "read 'CUDA' as ...; also ...".
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

from studykb.errors import NotFound
from studykb.model import Document
from studykb.text.analysis import Analyser
from studykb.vault.lookup import find

if TYPE_CHECKING:
    from studykb.vault import Vault

#: Words that ask for a kind of document: "X paper", "X 论文", "the X repo".
KIND_WORDS = MappingProxyType(
    {
        "paper": "paper",
        "papers": "paper",
        "论文": "paper",
        "repo": "repo",
        "repository": "repo",
        "github": "repo",
        "仓库": "repo",
        "代码": "repo",
        "docs": "docs",
        "documentation": "docs",
        "文档": "docs",
        "tutorial": "tutorial",
        "教程": "tutorial",
        "book": "book",
        "书": "book",
        "course": "course",
        "课程": "course",
        "post": "post",
        "blog": "post",
        "video": "video",
        "视频": "video",
        "talk": "talk",
    }
)
_KIND = re.compile(
    r"^(?:the\s+|an?\s+)?(?P<a>.+?)\s*(?:'s\s+|的\s*)?(?P<k>"
    + "|".join(sorted(map(re.escape, KIND_WORDS), key=len, reverse=True))
    + r")$",
    re.IGNORECASE,
)
_PAREN = re.compile(r"[(（][^()（）]*[)）]")
_WORD = re.compile(r"[^\W_]+")
_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
#: Alternatives a loose match reports.
OTHERS = 4
#: Longest name, in words, looked for inside other names.
MAX_WORDS = 8


@dataclass(frozen=True)
class Looked:
    """The document a typed name found, and how."""

    doc: Document
    typed: str
    how: str = ""
    """Empty when the name resolves as written; else what was forgiven, in words."""
    others: tuple[Document, ...] = field(default=())
    """Other documents the loose name fitted as well, best first."""

    @property
    def exact(self) -> bool:
        return not self.how

    def note(self) -> str:
        """What a front end says when the name was read loosely ("" when it was not)."""
        if self.exact:
            return ""
        doc = self.doc
        also = f"; also: {names_of(self.others)}" if self.others else ""
        read = f"read as {doc.title} ({doc.id}, {self.how})"
        return f"no document is named {self.typed!r}; {read}{also}"


def words(text: str) -> list[str]:
    """The words of a name: English words casefolded, each Chinese character one word."""
    text = unicodedata.normalize("NFKC", text).casefold()
    out: list[str] = []
    for w in _WORD.findall(text):
        out.extend(_split_han(w))
    return out


def _split_han(word: str) -> list[str]:
    if not _HAN.search(word):
        return [word]
    return [p for p in re.split(r"([\u3400-\u9fff\uf900-\ufaff])", word) if p]


def squash(text: str) -> str:
    """A name without case, spaces, punctuation or its parenthesised parts."""
    return "".join(words(_PAREN.sub(" ", text)))


def squash_stems(text: str, analyser: Analyser) -> str:
    """:func:`squash` with each English word stemmed by ``analyser`` (word forms:
    caches, batching)."""
    stem = analyser.stem
    return "".join(stem(w) if w.isascii() else w for w in words(_PAREN.sub(" ", text)))


class Loose:
    """The vault's names, indexed once for loose matching (one question asks many)."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self.docs = vault.documents()
        self.analyser = vault.topics().analyser()
        """Stems as search reads them (the vault's topic names protected)."""
        self.squashed: dict[str, list[str]] = {}
        self.stemmed: dict[str, list[str]] = {}
        self.by_word: dict[str, list[tuple[tuple[str, ...], str]]] = {}
        for name, entries in vault.names().table.items():
            keys = list(dict.fromkeys(k for _lvl, k in entries if k in self.docs))
            self._index(name, keys)

    def _index(self, name: str, keys: list[str]) -> None:
        for table, form in (
            (self.squashed, squash(name)),
            (self.stemmed, squash_stems(name, self.analyser)),
        ):
            if form:
                bucket = table.setdefault(form, [])
                bucket.extend(k for k in keys if k not in bucket)
        ws = tuple(words(name))
        if len(ws) > 1:
            for w in set(ws):
                self.by_word.setdefault(w, []).extend((ws, k) for k in keys)

    def find(self, typed: str) -> Looked | None:
        """The document ``typed`` names loosely (None when nothing fits)."""
        return self.named(typed) or self._inside(typed)

    def named(self, typed: str) -> Looked | None:
        """The document ``typed`` names loosely but whole: spelled otherwise, or "X
        paper"; never a longer name holding its words (what a part of a question must
        match to be taken for a name)."""
        return self._spelled(typed) or self._kind(typed)

    def _spelled(self, typed: str, kind: str | None = None) -> Looked | None:
        for table, how in (
            (self.squashed, "spacing, case and parentheses aside"),
            (self.stemmed, "word forms aside"),
        ):
            form = squash(typed) if table is self.squashed else squash_stems(typed, self.analyser)
            keys = [k for k in table.get(form, ()) if self._is(k, kind)]
            if form and keys:
                return self._looked(typed, self._ranked(keys), how)
        return None

    def _kind(self, typed: str) -> Looked | None:
        m = _KIND.match(" ".join(typed.split()))
        if not m or not m.group("a").strip():
            return None
        kind, named = KIND_WORDS[m.group("k").casefold()], m.group("a").strip()
        how = f"the {kind} of {named}"
        spelled = self._spelled(named, kind)
        if spelled:
            return self._looked(typed, [spelled.doc, *spelled.others], how)
        inside = self._containing(named, kind)
        topic = self._topic(named)
        if topic is not None:
            inside += [
                k
                for k, d in self.docs.items()
                if self._is(k, kind) and topic in self.vault.topics().taught(d)
            ]
        keys = list(dict.fromkeys(inside))
        return self._looked(typed, self._ranked(keys), how) if keys else None

    def _topic(self, named: str) -> str | None:
        """The topic ``named`` names, as written or loosely."""
        key, _state, _note = self.vault.names().resolve("", "", named, "name", "", False)
        if key is None:
            spelled = self._spelled(named)
            key = spelled.doc.key if spelled else None
        return key if key and self.docs[key].type == "topic" else None

    def _inside(self, typed: str) -> Looked | None:
        keys = self._containing(typed)
        return self._looked(typed, self._ranked(keys), "a longer name") if keys else None

    def _containing(self, typed: str, kind: str | None = None) -> list[str]:
        """Keys whose names hold the words of ``typed`` together, best first: topics,
        names that start with them, the most such names, the fewest extra words."""
        want = tuple(words(typed))
        if not want or len(want) > MAX_WORDS:
            return []
        score: dict[str, list[int]] = {}
        for ws, key in self.by_word.get(want[0], ()):
            if not self._is(key, kind):
                continue
            at = _phrase_at(ws, want)
            if at < 0:
                continue
            s = score.setdefault(key, [0, 0, 1 << 30])
            s[0] += at == 0
            s[1] += 1
            s[2] = min(s[2], len(ws) - len(want))
        return sorted(
            score,
            key=lambda k: (
                self.docs[k].type != "topic",
                -score[k][0],
                -score[k][1],
                score[k][2],
                self.docs[k].level or 9,
                k,
            ),
        )

    def _is(self, key: str, kind: str | None) -> bool:
        if kind is None:
            return True
        doc = self.docs[key]
        return (doc.kind or doc.type).casefold() == kind or doc.type == kind

    def _ranked(self, keys: list[str]) -> list[Document]:
        return [self.docs[k] for k in keys]

    def _looked(self, typed: str, docs: list[Document], how: str) -> Looked | None:
        if not docs:
            return None
        return Looked(docs[0], typed, how, tuple(docs[1 : OTHERS + 1]))


def _phrase_at(ws: tuple[str, ...], want: tuple[str, ...]) -> int:
    """Where ``want`` stands in ``ws`` as consecutive words (-1: it does not)."""
    n = len(want)
    for i in range(len(ws) - n + 1):
        if ws[i : i + n] == want:
            return i
    return -1


def lookup(vault: Vault, typed: str, loose: Loose | None = None) -> Looked:
    """The document ``typed`` names: as written, else loosely (see the module docstring);
    NotFound with suggestions when nothing fits."""
    try:
        return Looked(find(vault, typed), typed)
    except NotFound:
        found = (loose or Loose(vault)).find(typed.strip())
        if found is None:
            raise
        return found


def names_of(docs: Iterable[Document]) -> str:
    """``a (A), b (B)``: documents as the alternatives line names them."""
    return ", ".join(f"{d.id} ({d.title})" if d.title != d.id else d.id for d in docs)
