"""The feature index: per-document graph data by integer node number, as the engine,
the reasons and the sidebar read it (:class:`FeatureIndex`); how it is made and kept up
to date is :mod:`studykb.related.features`."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from studykb.related.packed import Groups, Packed, Rows, pack, unpack

#: Bit per reference kind in :attr:`FeatureIndex.out` / :attr:`FeatureIndex.inc`.
KIND_BITS = MappingProxyType(
    {"link": 1, "ref": 2, "requires": 4, "related": 8, "course": 16, "item": 32}
)
COURSE_BIT = KIND_BITS["course"]
#: Topics, tags and cited documents shared by more documents than this are too common to
#: say anything about two documents (like stop words); they are skipped.
HUB_CAP = 300
#: A document citing more than this many others (a list of everything) is no evidence
#: that two of them are related: it counts for no co-citation.
COCITE_MAX = 20


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
    picked: Rows = field(default_factory=Rows)
    """Hand-picked ``related`` targets, in written order."""
    required: Rows = field(default_factory=Rows)
    """Direct ``requires`` targets, in written order (reasons in :attr:`reasons`)."""
    reasons: list[list[str]] = field(default_factory=list)
    topics: Rows = field(default_factory=Rows)
    """Topics a node covers (tags and ``covers`` naming a topic; a course also its units'
    topics); a topic covers itself."""
    covering: Groups = field(default_factory=Groups)
    """Topic node -> the nodes covering it."""
    tag_ids: Rows = field(default_factory=Rows)
    """Folded tags that name no topic, as numbers of :attr:`tag_names`."""
    tag_names: list[str] = field(default_factory=list)
    tagged: Groups = field(default_factory=Groups)
    """Tag number -> the nodes carrying it."""
    course: list[int] = field(default_factory=list)
    """Course node of a node (its ``course``, a unit's parent, a course itself), or -1."""
    members: Groups = field(default_factory=Groups)
    """Course node -> nodes belonging to it (itself included)."""
    names: list[str] = field(default_factory=list)
    """A digest of each node's names (id, title, aliases, type, url): when an edited
    document's names change, other references may resolve differently."""
    files: dict[str, str] = field(default_factory=dict)
    """Path -> content digest of the files the index was made from."""
    topic_digest: str = ""
    number: dict[str, int] = field(default_factory=dict)
    """Document key -> node (rebuilt from :attr:`keys` when loaded)."""
    fingerprint: str = ""
    _tag_no: dict[str, int] = field(default_factory=dict, repr=False)

    # -- stored as plain data ------------------------------------------------------------
    def to_data(self) -> dict[str, object]:
        """Plain data for the cache (msgpack): strings, numbers, bytes, lists and maps."""
        return {
            "keys": "\0".join(self.keys),
            "ids": "\0".join(self.ids),
            "paths": "\0".join(self.paths),
            "titles": "\0".join(self.titles),
            "types": "\0".join(self.types),
            "levels": pack(v or 0 for v in self.levels),
            "out": self.out.data,
            "inc": self.inc.data,
            "picked": self.picked.data,
            "required": self.required.data,
            "reasons": ["\x1f".join(r) for r in self.reasons],
            "topics": self.topics.data,
            "covering": self.covering.data,
            "tag_ids": self.tag_ids.data,
            "tag_names": "\0".join(self.tag_names),
            "tagged": self.tagged.data,
            "course": pack(self.course),
            "members": self.members.data,
            "names": "\0".join(self.names),
            "files": self.files,
            "topic_digest": self.topic_digest,
            "fingerprint": self.fingerprint,
        }

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> FeatureIndex:
        def strings(name: str) -> list[str]:
            text = data[name]
            return text.split("\0") if text else []

        def groups(name: str) -> Groups:
            made = Groups()
            made.data = dict(data[name])
            return made

        ix = cls(
            keys=strings("keys"),
            ids=strings("ids"),
            paths=strings("paths"),
            titles=strings("titles"),
            types=strings("types"),
            levels=[v or None for v in unpack(data["levels"])],
            out=Packed.from_data(data["out"]),
            inc=Packed.from_data(data["inc"]),
            picked=Rows.from_data(data["picked"]),
            required=Rows.from_data(data["required"]),
            reasons=[r.split("\x1f") if r else [] for r in data["reasons"]],
            topics=Rows.from_data(data["topics"]),
            covering=groups("covering"),
            tag_ids=Rows.from_data(data["tag_ids"]),
            tag_names=strings("tag_names"),
            tagged=groups("tagged"),
            course=list(unpack(data["course"])),
            members=groups("members"),
            names=strings("names"),
            files=dict(data["files"]),
            topic_digest=data["topic_digest"],
            fingerprint=data["fingerprint"],
        )
        ix.number = {key: n for n, key in enumerate(ix.keys)}
        return ix

    def tag_number(self, tag: str) -> int:
        """The number of a folded tag (a new one is added)."""
        if len(self._tag_no) != len(self.tag_names):
            self._tag_no = {t: n for n, t in enumerate(self.tag_names)}
        got = self._tag_no.get(tag)
        if got is None:
            got = self._tag_no[tag] = len(self.tag_names)
            self.tag_names.append(tag)
        return got

    def let_go(self) -> None:
        """Drop every row unpacked so far (a memory seam of a full build: at 50k documents
        its rows as dictionaries and tuples were about as large as the packed index)."""
        for rows in (self.out, self.inc, self.picked, self.required, self.topics, self.tag_ids):
            rows.let_go()
        for groups in (self.covering, self.tagged, self.members):
            groups.let_go()

    # -- reading -------------------------------------------------------------------------
    @property
    def requires(self) -> _Requires:
        """Node -> ((target, reason), ...) of its ``requires``, in written order."""
        return _Requires(self)

    def tags(self, n: int) -> tuple[str, ...]:
        """Folded tags of node ``n`` that name no topic."""
        return tuple(self.tag_names[t] for t in self.tag_ids[n])

    def cites_everything(self, s: int) -> bool:
        """Whether node ``s`` cites too many documents for its citations to mean much."""
        return self.out.size(s) > COCITE_MAX

    # -- what two nodes share (for reasons and diversity) ----------------------------------
    def shared_refs(self, i: int, c: int) -> list[int]:
        """What both cite, rarest first."""
        out_i, out_c = self.out[i], self.out[c]
        shared = [
            z
            for z in out_i
            if z in out_c and z != c and out_i[z] != COURSE_BIT and self.inc.size(z) <= HUB_CAP
        ]
        return sorted(shared, key=lambda z: (self.inc.size(z), self.titles[z]))

    def shared_citers(self, i: int, c: int) -> list[int]:
        """What cites both (a list of everything left out), shortest first."""
        inc_c = self.inc[c]
        found = [s for s in self.inc[i] if s in inc_c and s != c and not self.cites_everything(s)]
        return sorted(found, key=lambda s: (self.out.size(s), self.titles[s]))

    def shared_topics(self, i: int, c: int) -> list[int]:
        mine = self.topics[c]
        return [t for t in self.topics[i] if t in mine and self.covering.size(t) <= HUB_CAP]

    def shared_tags(self, i: int, c: int) -> list[str]:
        mine = self.tag_ids[c]
        return [
            self.tag_names[t]
            for t in self.tag_ids[i]
            if t in mine and self.tagged.size(t) <= HUB_CAP
        ]

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


@dataclass(frozen=True)
class _Requires:
    ix: FeatureIndex

    def __getitem__(self, n: int) -> tuple[tuple[int, str], ...]:
        targets = self.ix.required[n]
        reasons = self.ix.reasons[n]
        return tuple((j, reasons[k] if k < len(reasons) else "") for k, j in enumerate(targets))


# -- building --------------------------------------------------------------------------------
"""(source key, kind, target key, reason) of a resolved reference."""
