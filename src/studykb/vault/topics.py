"""The vault's topics by every name they go by: the one table every feature reads.

A document's ``covers`` names the topics it *teaches*: it is a reading for them and needs
their prerequisites (plans). Its ``tags`` that name a topic say what it is *about*
(search, filters, topic pages' "mentioned in", related documents), never prerequisites.
A topic is named by its id, title or any alias, case-insensitively; an id wins when a
name is both one topic's id and another's alias.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from studykb.model import Document
from studykb.vault.derived import Change, Snapshot

if TYPE_CHECKING:
    from studykb.text.analysis import Analyser

T = TypeVar("T")

#: (key, id, title, aliases as JSON) of a topic document, as the state keeps it.
TopicRow = tuple[str, str, str, str]


class TopicTable:
    """Every topic, by name."""

    def __init__(self, rows: Iterable[TopicRow] = ()) -> None:
        self.names: dict[str, str] = {}
        """Folded id, title or alias -> topic key."""
        self.ids: dict[str, str] = {}
        """Topic key -> its id."""
        self.texts: dict[str, str] = {}
        """Topic key -> its id, title and aliases, one a line (what search indexes)."""
        rows = list(rows)
        topics = [
            (key, did, title, tuple(json.loads(aliases or "[]")))
            for key, did, title, aliases in rows
        ]
        for key, _did, title, aliases in topics:  # ids win over titles and aliases
            for name in (title, *aliases):
                self.names.setdefault(name.casefold(), key)
        for key, did, title, aliases in topics:
            self.names[did.casefold()] = key
            self.ids[key] = did
            self.texts[key] = "\n".join(dict.fromkeys((did, title, *aliases)))
        self.digest = digest(rows)
        """A digest of the rows the table was made from."""
        self._vocabulary: list[str] | None = None
        self._analyser: Analyser | None = None
        self._kept: dict[str, Any] = {}

    @classmethod
    def of_documents(cls, docs: Iterable[Document]) -> TopicTable:
        return cls(
            (d.key, d.id, d.title, json.dumps(list(d.aliases), ensure_ascii=False))
            for d in sorted(docs, key=lambda d: d.key)
            if d.type == "topic"
        )

    def key(self, name: str) -> str | None:
        """The topic a name (id, title or alias) names, or None."""
        return self.names.get(name.strip().casefold())

    def taught(self, doc: Document) -> list[str]:
        """Keys of the topics ``doc`` teaches (its ``covers``), itself left out."""
        return self._keys(doc, doc.covers)

    def about(self, doc: Document) -> list[str]:
        """Keys of the topics ``doc`` teaches or is about (``covers``, then ``tags``)."""
        return self._keys(doc, (*doc.covers, *doc.tags))

    def _keys(self, doc: Document, names: Iterable[str]) -> list[str]:
        out: dict[str, None] = {}
        for name in names:
            key = self.names.get(name.casefold())
            if key and key != doc.key:
                out[key] = None
        return list(out)

    def named(self, name: str) -> list[str]:
        """The names (id, title, aliases) of the topic called ``name``, or []."""
        key = self.key(name)
        return self.texts[key].split("\n") if key else []

    def sig(self, docs: Iterable[Document]) -> str:
        """Fingerprint of the names of the topics the documents of one file are about."""
        keys = sorted({key for doc in docs for key in self.about(doc)})
        if not keys:
            return ""
        return hashlib.blake2b(
            "\0".join(self.texts[k] for k in keys).encode(), digest_size=8
        ).hexdigest()

    def vocabulary(self) -> list[str]:
        """The one-word topic names the stemmer leaves alone beyond
        :data:`~studykb.text.terms.TECH_TERMS`, sorted (what an index records it was
        read with)."""
        if self._vocabulary is None:
            # deferred: the term lists load only for what analyses text (search, related)
            from studykb.text.terms import TECH_TERMS, one_word_names

            names = [n for text in self.texts.values() for n in text.split("\n")]
            self._vocabulary = sorted(one_word_names(names) - TECH_TERMS)
        return self._vocabulary

    def analyser(self) -> Analyser:
        """How this vault's text is read: :data:`~studykb.text.terms.TECH_TERMS` and its
        one-word topic names protected from the stemmer (see :mod:`studykb.text.terms`)."""
        if self._analyser is None:
            # deferred: the stemmer (16 ms to load) only for what analyses text
            from studykb.text.analysis import Analyser
            from studykb.text.terms import TECH_TERMS  # deferred: as above

            self._analyser = Analyser(TECH_TERMS | frozenset(self.vocabulary()))
        return self._analyser

    def kept(self, name: str, make: Callable[[TopicTable], T]) -> T:
        """What a feature works out from this table (``make(self)``), kept with it under
        ``name``: a new table starts without it."""
        if name not in self._kept:
            self._kept[name] = make(self)
        return self._kept[name]  # type: ignore[no-any-return]

    def keep(self, name: str, value: Any) -> None:
        """Keep ``value`` as what :meth:`kept` gives for ``name`` (read from a cache)."""
        self._kept[name] = value

    def to_data(self) -> dict[str, Any]:
        """Plain data for the cache, with the :meth:`vocabulary` (made here when not yet:
        every reader of the vault's text needs it, and making it stems every topic name,
        about 0.003 s at 1,500 topics, in every process that reads text after an edit)."""
        return {
            "names": self.names,
            "ids": self.ids,
            "texts": self.texts,
            "digest": self.digest,
            "vocabulary": self.vocabulary(),
        }

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> TopicTable:
        table = cls()
        table.names, table.ids, table.texts = data["names"], data["ids"], data["texts"]
        table.digest = data["digest"]
        vocabulary = data["vocabulary"]
        if not isinstance(vocabulary, list):
            raise ValueError("not a topic table's vocabulary")
        table._vocabulary = vocabulary
        return table


def digest(rows: Sequence[TopicRow]) -> str:
    """A digest of the topic rows (as plain tuples: the same whatever names their columns)."""
    plain = [tuple(row) for row in rows]
    return hashlib.blake2b(repr(plain).encode(), digest_size=16).hexdigest()


class Topics:
    """The topic table as a derived structure (:mod:`studykb.vault.derived`): made from
    the state's topic rows, kept while they are the same (an edit rarely touches them)."""

    name = "topics"
    made_by = ("studykb.vault.topics", "studykb.model", "studykb.text")
    inputs = ()

    def build(self, vault: Snapshot) -> TopicTable:
        return TopicTable(vault.topic_rows())

    def update(self, value: TopicTable, change: Change, vault: Snapshot) -> TopicTable:
        if not _held_topics(value, change, vault):
            return value
        rows = vault.topic_rows()
        return value if digest(rows) == value.digest else TopicTable(rows)

    def stamp(self, value: TopicTable) -> str:
        return value.digest

    def dump(self, value: TopicTable) -> dict[str, Any]:
        return value.to_data()

    def load(self, data: Any) -> TopicTable:
        return TopicTable.from_data(data)


def _held_topics(value: TopicTable, change: Change, vault: Snapshot) -> bool:
    """Whether the changed files held a topic before (in ``value``) or hold one now: the
    topic rows are the topic documents' own, so an edit of other files leaves them as
    they were (a speed seam: reading every topic row and its digest again took about
    0.01 s at 10k documents after every edit)."""
    paths = change.paths
    if any(key.split("#", 1)[0] in paths for key in value.ids):
        return True
    found = vault.documents_in(paths)
    return any(doc.type == "topic" for docs in found.values() for doc in docs)


TOPICS = Topics()
