"""The graph features the related-documents ranking reads, for the whole vault at once.

:class:`FeatureIndex` holds, per document, its resolved references both ways, its
hand-picked ``related`` list, the topics it covers, its other tags and its course, as
small integer structures. It is built from the state database in one pass and kept in
the vault's cache (``related-features``) for the vault state, so a query in a fresh
process loads it instead of rebuilding it (see :func:`load`).

:meth:`FeatureIndex.features` scores every candidate that shares something with one
document; ``hidden`` pairs are left out, which is how the evaluation hides a link.
No networkx here: plain dicts are faster for one document's neighbourhood, and the
query path must not pay networkx's import time.
"""

from __future__ import annotations

import math
from array import array
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from studykb.vault.topics import TopicTable

if TYPE_CHECKING:
    from studykb.model import Document
    from studykb.vault import Vault

#: Bit per reference kind in :attr:`FeatureIndex.out` / :attr:`FeatureIndex.inc`.
KIND_BITS = {"link": 1, "ref": 2, "requires": 4, "related": 8, "course": 16, "item": 32}
COURSE_BIT = KIND_BITS["course"]
#: Topics, tags and cited documents shared by more documents than this are too common to
#: say anything about two documents (like stop words); they are skipped.
HUB_CAP = 300
CACHE_ENTRY = "related-features"

Pair = tuple[int, int]


class Packed:
    """A list of ``{node: kind bits}`` kept as packed int32 pairs, unpacked on first read.

    Unpickling thousands of small dicts is most of the cost of loading the index in a
    fresh process; bytes load at memory speed.
    """

    __slots__ = ("data", "_cache")

    def __init__(self, rows: list[dict[int, int]]) -> None:
        self.data = [array("i", [x for pair in row.items() for x in pair]).tobytes()
                     for row in rows]
        self._cache: dict[int, dict[int, int]] = {}

    @classmethod
    def from_data(cls, data: list[bytes]) -> Packed:
        packed = cls([])
        packed.data = list(data)
        return packed

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, n: int) -> dict[int, int]:
        got = self._cache.get(n)
        if got is None:
            flat = array("i")
            flat.frombytes(self.data[n])
            got = self._cache[n] = dict(zip(flat[::2], flat[1::2], strict=True))
        return got

    def size(self, n: int) -> int:
        """How many entries row ``n`` has, without unpacking it."""
        return len(self.data[n]) // 8


@dataclass
class FeatureIndex:
    """Per-document graph data, by integer node number (see :attr:`number`)."""

    keys: list[str] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    titles: list[str] = field(default_factory=list)
    types: list[str] = field(default_factory=list)
    levels: list[int | None] = field(default_factory=list)
    out: Packed = field(default_factory=lambda: Packed([]))
    """Node -> {target node: kind bits} of its resolved references."""
    inc: Packed = field(default_factory=lambda: Packed([]))
    """Node -> {source node: kind bits} of the references to it."""
    picked: list[tuple[int, ...]] = field(default_factory=list)
    """Hand-picked ``related`` targets, in written order."""
    requires: list[tuple[tuple[int, str], ...]] = field(default_factory=list)
    """Direct ``requires`` targets with their reasons, in written order."""
    topics: list[tuple[int, ...]] = field(default_factory=list)
    """Topics a node covers (tags and ``covers`` naming a topic); a topic covers itself."""
    covering: dict[int, list[int]] = field(default_factory=dict)
    """Topic node -> the nodes covering it."""
    tags: list[tuple[str, ...]] = field(default_factory=list)
    """Folded tags that name no topic."""
    tagged: dict[str, list[int]] = field(default_factory=dict)
    course: list[int] = field(default_factory=list)
    """Course node of a node (its ``course``, a unit's parent, a course itself), or -1."""
    members: dict[int, list[int]] = field(default_factory=dict)
    """Course node -> nodes belonging to it (itself included)."""
    number: dict[str, int] = field(default_factory=dict)
    """Document key -> node (rebuilt from :attr:`keys` when loaded)."""
    fingerprint: str = ""

    def to_data(self) -> dict[str, object]:
        """Plain data for the cache (msgpack): lists, dicts, strings, numbers and bytes."""
        return {"keys": self.keys, "ids": self.ids, "paths": self.paths, "titles": self.titles,
                "types": self.types, "levels": self.levels, "out": self.out.data,
                "inc": self.inc.data, "picked": self.picked, "requires": self.requires,
                "topics": self.topics, "covering": self.covering, "tags": self.tags,
                "tagged": self.tagged, "course": self.course, "members": self.members,
                "fingerprint": self.fingerprint}

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> FeatureIndex:
        ix = cls(keys=data["keys"], ids=data["ids"], paths=data["paths"], titles=data["titles"],
                 types=data["types"], levels=data["levels"], out=Packed.from_data(data["out"]),
                 inc=Packed.from_data(data["inc"]),
                 picked=[tuple(p) for p in data["picked"]],
                 requires=[tuple((j, r) for j, r in req) for req in data["requires"]],
                 topics=[tuple(t) for t in data["topics"]], covering=data["covering"],
                 tags=[tuple(t) for t in data["tags"]], tagged=data["tagged"],
                 course=data["course"], members=data["members"],
                 fingerprint=data["fingerprint"])
        ix.number = {key: n for n, key in enumerate(ix.keys)}
        return ix

    # -- features ------------------------------------------------------------------------
    def features(self, i: int, hidden: frozenset[Pair] = frozenset()
                 ) -> dict[int, dict[str, float]]:
        """Raw graph features of every node related to node ``i`` (``i`` itself left out).

        ``picked``, ``link_in``, ``link_out`` and ``course`` are 0/1; ``refs`` is the
        resource-allocation index over shared cited documents (each weighted 1/citers),
        ``cocite`` the same over shared citing documents, ``topics`` and ``tags`` the
        Adamic-Adar sum 1/log(1+n) over shared topics and tags.
        """
        feats: dict[int, dict[str, float]] = defaultdict(dict)
        out = self.out[i]
        out_i = [j for j in out if (i, j) not in hidden]
        inc_i = [j for j in self.inc[i] if (j, i) not in hidden]
        for j in self.picked[i]:
            if (i, j) not in hidden:
                feats[j]["picked"] = 1.0
        for j in out_i:
            feats[j]["link_out"] = 1.0
        for j in inc_i:
            feats[j]["link_in"] = 1.0
        for z in out_i:  # documents citing what i cites (its course counts as "course")
            if out[z] == COURSE_BIT or self.inc.size(z) > HUB_CAP:
                continue
            citers = self.inc[z]
            w = 1.0 / len(citers)
            for c in citers:
                if c != i and (c, z) not in hidden:
                    f = feats[c]
                    f["refs"] = f.get("refs", 0.0) + w
        for s in inc_i:  # documents cited by what cites i
            if self.out.size(s) > HUB_CAP:
                continue
            cited = self.out[s]
            w = 1.0 / len(cited)
            for c in cited:
                if c != i and (s, c) not in hidden:
                    f = feats[c]
                    f["cocite"] = f.get("cocite", 0.0) + w
        _adamic_adar(feats, "topics", i, (self.covering.get(t, ()) for t in self.topics[i]))
        _adamic_adar(feats, "tags", i, (self.tagged.get(tag, ()) for tag in self.tags[i]))
        course = self.course[i]
        if course >= 0:
            for c in self.members.get(course, ()):
                if c != i:
                    feats[c]["course"] = 1.0
        feats.pop(i, None)
        return feats

    # -- what two nodes share (for reasons and diversity) ----------------------------------
    def shared_refs(self, i: int, c: int, hidden: frozenset[Pair] = frozenset()) -> list[int]:
        """What both cite, rarest first."""
        out_i, out_c = self.out[i], self.out[c]
        shared = [z for z in out_i if z in out_c and z != c and (i, z) not in hidden
                  and out_i[z] != COURSE_BIT and self.inc.size(z) <= HUB_CAP]
        return sorted(shared, key=lambda z: (self.inc.size(z), self.titles[z]))

    def shared_citers(self, i: int, c: int, hidden: frozenset[Pair] = frozenset()) -> list[int]:
        inc_c = self.inc[c]
        return [s for s in self.inc[i] if s in inc_c and s != c and (s, i) not in hidden
                and self.out.size(s) <= HUB_CAP]

    def shared_topics(self, i: int, c: int) -> list[int]:
        mine = self.topics[c]
        return [t for t in self.topics[i] if t in mine
                and len(self.covering.get(t, ())) <= HUB_CAP]

    def shared_tags(self, i: int, c: int) -> list[str]:
        mine = self.tags[c]
        return [t for t in self.tags[i] if t in mine and len(self.tagged.get(t, ())) <= HUB_CAP]

    def signature(self, i: int) -> frozenset[int]:
        """What a node is made of, for telling near-duplicates apart (MMR).

        Neighbours in both directions and covered topics, as numbers; its course as a
        negative number so it cannot collide with a node.
        """
        sig = set(self.out[i]) | set(self.inc[i]) | set(self.topics[i])
        if self.course[i] >= 0:
            sig.add(-1 - self.course[i])
        return frozenset(sig)

    def required_by(self, i: int) -> list[int]:
        return [s for s, bits in self.inc[i].items() if bits & KIND_BITS["requires"]]


# -- building ----------------------------------------------------------------------------
def _adamic_adar(feats: dict[int, dict[str, float]], name: str, i: int,
                 groups: Iterable[Iterable[int]]) -> None:
    """Add 1/log(1+n) to ``feats[c][name]`` for each shared group of n documents (not hubs)."""
    for group in groups:
        members = list(group)
        if len(members) > HUB_CAP:
            continue
        w = 1.0 / math.log(1 + len(members))
        for c in members:
            if c != i:
                f = feats[c]
                f[name] = f.get(name, 0.0) + w


def build(docs: dict[str, Document], refs: Iterable[tuple[str, str, str, str]],
          fingerprint: str = "", topic_table: TopicTable | None = None) -> FeatureIndex:
    """The index from every document and every resolved (source, kind, target, reason)."""
    ix = FeatureIndex(fingerprint=fingerprint)
    ordered = sorted(docs.values(), key=lambda d: d.key)
    for n, doc in enumerate(ordered):
        ix.number[doc.key] = n
        ix.keys.append(doc.key)
        ix.ids.append(doc.id)
        ix.paths.append(doc.path)
        ix.titles.append(doc.title)
        ix.types.append(doc.type)
        ix.levels.append(doc.level)
    size = len(ordered)
    out: list[dict[int, int]] = [{} for _ in range(size)]
    inc: list[dict[int, int]] = [{} for _ in range(size)]
    picked: list[list[int]] = [[] for _ in range(size)]
    requires: list[list[tuple[int, str]]] = [[] for _ in range(size)]
    course = [-1] * size
    number = ix.number
    for source, kind, target, reason in refs:
        i = number.get(source)
        j = number.get(target)
        if i is None or j is None or i == j:
            continue
        bit = KIND_BITS.get(kind, 1)
        out[i][j] = out[i].get(j, 0) | bit
        inc[j][i] = inc[j].get(i, 0) | bit
        if kind == "related" and j not in picked[i]:
            picked[i].append(j)
        elif kind == "requires" and all(j != k for k, _r in requires[i]):
            requires[i].append((j, reason))
        elif kind == "course":
            parent = docs[target].parent
            course[i] = number.get(parent, j) if parent else j
    names = (topic_table or TopicTable.of_documents(ordered)).names
    covering: dict[int, list[int]] = defaultdict(list)
    tagged: dict[str, list[int]] = defaultdict(list)
    for n, doc in enumerate(ordered):
        topics: dict[int, None] = {}
        other: dict[str, None] = {}
        if doc.type == "topic":
            topics[n] = None
        for tag in (*doc.covers, *doc.tags):
            folded = tag.casefold()
            key = names.get(folded)
            if key is not None:
                topics[number[key]] = None
            else:
                other[folded] = None
        ix.topics.append(tuple(topics))
        ix.tags.append(tuple(other))
        for t in topics:
            covering[t].append(n)
        for tag in other:
            tagged[tag].append(n)
        if doc.type == "course":
            course[n] = n
        elif doc.parent and doc.parent in number:
            course[n] = number[doc.parent]
    members: dict[int, list[int]] = defaultdict(list)
    for n, c in enumerate(course):
        if c >= 0:
            members[c].append(n)
    ix.out = Packed(out)
    ix.inc = Packed(inc)
    ix.picked = [tuple(p) for p in picked]
    ix.requires = [tuple(r) for r in requires]
    ix.covering = dict(covering)
    ix.tagged = dict(tagged)
    ix.course = course
    ix.members = dict(members)
    return ix


def from_vault(vault: Vault, fingerprint: str = "") -> FeatureIndex:
    rows = ((e.source, e.kind, e.target, e.reason) for e in vault.edges(order="line"))
    return build(vault.documents(), rows, fingerprint, vault.topics())


def fingerprint(vault: Vault) -> str:
    """The vault state the features are made from (see :meth:`Vault.fingerprint`)."""
    return vault.fingerprint()


_MEMO: dict[str, tuple[str, FeatureIndex]] = {}


def load(vault: Vault) -> FeatureIndex:
    """The index for the vault's current state: from memory, the cache, or built."""
    from studykb.vault.cache import key as cache_key

    fp = fingerprint(vault)
    root = str(vault.root)
    memo = _MEMO.get(root)
    if memo and memo[0] == fp:
        return memo[1]
    entry = cache_key(CACHE_ENTRY, fp)
    data = vault.cache.get(CACHE_ENTRY, entry)
    if data is not None:
        ix = FeatureIndex.from_data(data)
    else:
        ix = from_vault(vault, fp)
        vault.cache.put(CACHE_ENTRY, entry, ix.to_data())
    _MEMO[root] = (fp, ix)
    return ix
