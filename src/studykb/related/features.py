"""The graph features the related-documents ranking reads, for the whole vault at once.

:class:`FeatureIndex` holds, per document, its resolved references both ways, its
hand-picked ``related`` list, the topics it covers (a course also those of its units),
its other tags and its course, as small integer structures packed into bytes, so the
vault's cache (``related-features``) loads in milliseconds.

It is a derived structure (:data:`FEATURES`, kept fresh by :mod:`studykb.vault.derived`).
After an edit it is *updated*, not rebuilt (:func:`update`): only the documents of the
changed files are read again (their references, topics, tags and course), as long as
the set of documents, the topics and the changed documents' names stay the same
(otherwise other documents' references may resolve differently, and it is built again).
The result is the same as a full build.

The ranking itself is the engine's (:mod:`studykb.related.engine`, made from this
index); what is read here directly is what two documents share, for the reasons and
the sidebar. No networkx here: the query path must not pay networkx's import time.
"""

from __future__ import annotations

import hashlib
import json
from array import array
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from studykb.vault.topics import TOPICS, TopicTable

if TYPE_CHECKING:
    from studykb.model import Document
    from studykb.vault.derived import Change, Snapshot

#: Bit per reference kind in :attr:`FeatureIndex.out` / :attr:`FeatureIndex.inc`.
KIND_BITS = {"link": 1, "ref": 2, "requires": 4, "related": 8, "course": 16, "item": 32}
COURSE_BIT = KIND_BITS["course"]
#: Topics, tags and cited documents shared by more documents than this are too common to
#: say anything about two documents (like stop words); they are skipped.
HUB_CAP = 300
#: A document citing more than this many others (a list of everything) is no evidence
#: that two of them are related: it counts for no co-citation.
COCITE_MAX = 20


def _pack(values: Iterable[int]) -> bytes:
    return array("i", values).tobytes()


def _unpack(data: bytes) -> tuple[int, ...]:
    flat = array("i")
    flat.frombytes(data)
    return tuple(flat)


class Packed:
    """Rows of ``{node: kind bits}`` kept as packed int32 pairs, unpacked on first read."""

    __slots__ = ("data", "_cache")

    def __init__(self, rows: Sequence[dict[int, int]]) -> None:
        self.data = [_pack(x for pair in row.items() for x in pair) for row in rows]
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
            flat = _unpack(self.data[n])
            got = self._cache[n] = dict(zip(flat[::2], flat[1::2], strict=True))
        return got

    def __setitem__(self, n: int, row: dict[int, int]) -> None:
        self._cache[n] = row
        self.data[n] = _pack(x for pair in row.items() for x in pair)

    def size(self, n: int) -> int:
        """How many entries row ``n`` has, without unpacking it."""
        return len(self.data[n]) // 8


class Rows:
    """Rows of node numbers (tuples) kept packed, unpacked on first read."""

    __slots__ = ("data", "_cache")

    def __init__(self, rows: Iterable[Iterable[int]] = ()) -> None:
        self.data = [_pack(row) for row in rows]
        self._cache: dict[int, tuple[int, ...]] = {}

    @classmethod
    def from_data(cls, data: list[bytes]) -> Rows:
        rows = cls()
        rows.data = list(data)
        return rows

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, n: int) -> tuple[int, ...]:
        got = self._cache.get(n)
        if got is None:
            got = self._cache[n] = _unpack(self.data[n])
        return got

    def __setitem__(self, n: int, row: Iterable[int]) -> None:
        values = tuple(row)
        self._cache[n] = values
        self.data[n] = _pack(values)


class Groups:
    """Group -> the nodes in it (a topic's coverers, a tag's documents, a course's members),
    packed; a missing group is empty."""

    __slots__ = ("data", "_cache")

    def __init__(self, groups: dict[Any, list[int]] | None = None) -> None:
        self.data: dict[Any, bytes] = {g: _pack(ns) for g, ns in (groups or {}).items()}
        self._cache: dict[Any, tuple[int, ...]] = {}

    def get(self, group: Any, default: Sequence[int] = ()) -> Sequence[int]:
        data = self.data.get(group)
        if data is None:
            return default
        got = self._cache.get(group)
        if got is None:
            got = self._cache[group] = _unpack(data)
        return got

    def size(self, group: Any) -> int:
        return len(self.data.get(group, b"")) // 4

    def add(self, group: Any, node: int) -> None:
        now = self.get(group)
        if node not in now:
            self._set(group, (*now, node))

    def remove(self, group: Any, node: int) -> None:
        now = self.get(group)
        if node in now:
            self._set(group, tuple(n for n in now if n != node))

    def _set(self, group: Any, nodes: tuple[int, ...]) -> None:
        self._cache[group] = nodes
        self.data[group] = _pack(nodes)


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
            "levels": _pack(v or 0 for v in self.levels),
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
            "course": _pack(self.course),
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
            levels=[v or None for v in _unpack(data["levels"])],
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
            course=list(_unpack(data["course"])),
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
Ref = tuple[str, str, str, str]
"""(source key, kind, target key, reason) of a resolved reference."""


def names_digest(doc: Document) -> str:
    """What other documents' references resolve by: a document's id, title, aliases, type
    and url."""
    text = json.dumps(
        [doc.id, doc.title, list(doc.aliases), doc.type, doc.url or ""], ensure_ascii=False
    )
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def build(
    docs: dict[str, Document],
    refs: Iterable[Ref],
    fingerprint: str = "",
    topic_table: TopicTable | None = None,
    files: dict[str, str] | None = None,
) -> FeatureIndex:
    """The index from every document and every resolved (source, kind, target, reason)."""
    ix = FeatureIndex(fingerprint=fingerprint, files=dict(files or {}))
    ordered = sorted(docs.values(), key=lambda d: d.key)
    for n, doc in enumerate(ordered):
        ix.number[doc.key] = n
        ix.keys.append(doc.key)
        ix.ids.append(doc.id)
        ix.paths.append(doc.path)
        ix.titles.append(doc.title)
        ix.types.append(doc.type)
        ix.levels.append(doc.level)
        ix.names.append(names_digest(doc))
    size = len(ordered)
    table = topic_table or TopicTable.of_documents(ordered)
    ix.topic_digest = table.digest
    ix.out, ix.inc = Packed([{}] * size), Packed([{}] * size)
    ix.picked, ix.required = Rows([()] * size), Rows([()] * size)
    ix.reasons = [[] for _ in range(size)]
    ix.topics, ix.tag_ids = Rows([()] * size), Rows([()] * size)
    ix.course = [-1] * size
    by_source: dict[int, list[Ref]] = defaultdict(list)
    for ref in refs:
        i = ix.number.get(ref[0])
        if i is not None:
            by_source[i].append(ref)
    inc: list[dict[int, int]] = [{} for _ in range(size)]
    for n, doc in enumerate(ordered):
        _read_refs(ix, n, by_source.get(n, []), docs, inc)
        _read_tags(ix, n, doc, table.names)
    for n in range(size):
        ix.inc[n] = inc[n]
    _course_topics(ix, range(size))
    _group(ix)
    return ix


class _RowsOf(Protocol):
    def __getitem__(self, n: int) -> dict[int, int]: ...


def _read_refs(
    ix: FeatureIndex, i: int, refs: list[Ref], docs: dict[str, Document], inc: _RowsOf
) -> None:
    """Node ``i``'s references: out (and ``inc`` of their targets), picked, requires, course."""
    out: dict[int, int] = {}
    picked: list[int] = []
    required: list[tuple[int, str]] = []
    course = -1
    for _source, kind, target, reason in refs:
        j = ix.number.get(target)
        if j is None or j == i:
            continue
        bit = KIND_BITS.get(kind, 1)
        out[j] = out.get(j, 0) | bit
        inc[j][i] = inc[j].get(i, 0) | bit
        if kind == "related" and j not in picked:
            picked.append(j)
        elif kind == "requires" and all(j != k for k, _r in required):
            required.append((j, reason))
        elif kind == "course":
            parent = docs[target].parent if target in docs else None
            course = ix.number.get(parent, j) if parent else j
    doc_type = ix.types[i]
    if doc_type == "course":
        course = i
    elif doc_type == "unit":
        parent = ix.keys[i].split("#", 1)[0]
        course = ix.number.get(parent, course)
    ix.out[i] = out
    ix.picked[i] = picked
    ix.required[i] = [j for j, _r in required]
    ix.reasons[i] = [r for _j, r in required]
    ix.course[i] = course


def _read_tags(ix: FeatureIndex, n: int, doc: Document, names: dict[str, str]) -> None:
    """Node ``n``'s own topics and other tags."""
    topics: dict[int, None] = {n: None} if doc.type == "topic" else {}
    other: dict[int, None] = {}
    for tag in (*doc.covers, *doc.tags):
        folded = tag.casefold()
        key = names.get(folded)
        if key is not None and key in ix.number:
            topics[ix.number[key]] = None
        elif key is None:
            other[ix.tag_number(folded)] = None
    ix.topics[n] = topics
    ix.tag_ids[n] = other


def _course_topics(ix: FeatureIndex, nodes: Iterable[int]) -> None:
    """A course also covers the topics of its units (how courses find their siblings)."""
    units: dict[int, list[int]] = defaultdict(list)
    for n in range(len(ix.keys)):
        if ix.types[n] == "unit" and ix.course[n] >= 0:
            units[ix.course[n]].append(n)
    for c in nodes:
        if ix.types[c] == "course":
            ix.topics[c] = dict.fromkeys(
                (*ix.topics[c], *(t for u in units.get(c, ()) for t in ix.topics[u]))
            )


def _group(ix: FeatureIndex) -> None:
    """The inverted tables: topic -> coverers, tag -> documents, course -> members."""
    covering: dict[int, list[int]] = defaultdict(list)
    tagged: dict[int, list[int]] = defaultdict(list)
    members: dict[int, list[int]] = defaultdict(list)
    for n in range(len(ix.keys)):
        for t in ix.topics[n]:
            covering[t].append(n)
        for t in ix.tag_ids[n]:
            tagged[t].append(n)
        if ix.course[n] >= 0:
            members[ix.course[n]].append(n)
    ix.covering, ix.tagged, ix.members = Groups(covering), Groups(tagged), Groups(members)


# -- keeping it up to date ------------------------------------------------------------------
def from_vault(vault: Snapshot, fingerprint: str = "") -> FeatureIndex:
    rows = ((e.source, e.kind, e.target, e.reason) for e in vault.edges(order="line"))
    files = {path: digest for path, _mtime, digest in vault.file_rows()}
    return build(vault.documents(), rows, fingerprint, vault.derived(TOPICS), files)


def update(ix: FeatureIndex, vault: Snapshot, fingerprint: str) -> list[str] | None:
    """Bring ``ix`` up to date by reading only the changed files: their paths, or None
    when that cannot be done (documents added or removed, topics or an edited
    document's names changed)."""
    files = {path: digest for path, _mtime, digest in vault.file_rows()}
    if files.keys() != ix.files.keys() or vault.derived(TOPICS).digest != ix.topic_digest:
        return None
    changed = [p for p, digest in files.items() if ix.files.get(p) != digest]
    if not _reread(ix, vault, changed):
        return None
    ix.files, ix.fingerprint = files, fingerprint
    return changed


def _reread(ix: FeatureIndex, vault: Snapshot, paths: list[str]) -> bool:
    """Read the documents of ``paths`` again; False when their documents or names are not
    the ones ``ix`` has (a full build is due)."""
    keys = vault.keys_in(paths)
    nodes = [ix.number.get(k) for k in keys]
    wanted = set(paths)
    before = {n for n, path in enumerate(ix.paths) if path in wanted}
    if any(n is None for n in nodes) or set(nodes) != before:
        return False
    docs = vault.documents_for(keys)
    if any(names_digest(docs[k]) != ix.names[ix.number[k]] for k in keys if k in docs):
        return False
    _replace(ix, [n for n in nodes if n is not None], docs, vault)
    return True


def _replace(
    ix: FeatureIndex, nodes: list[int], docs: dict[str, Document], vault: Snapshot
) -> None:
    """Read the references, topics, tags and course of ``nodes`` again."""
    for i in nodes:  # take the old rows out of the inverted tables
        for j in ix.out[i]:
            row = dict(ix.inc[j])
            row.pop(i, None)
            ix.inc[j] = row
        for t in ix.topics[i]:
            ix.covering.remove(t, i)
        for t in ix.tag_ids[i]:
            ix.tagged.remove(t, i)
        if ix.course[i] >= 0:
            ix.members.remove(ix.course[i], i)
    by_source: dict[int, list[Ref]] = defaultdict(list)
    for e in vault.edges_in(sorted({ix.paths[i] for i in nodes})):
        n = ix.number.get(e.source)
        if n is not None:
            by_source[n].append((e.source, e.kind, e.target, e.reason))
    names = vault.derived(TOPICS).names
    touched: dict[int, dict[int, int]] = {}
    for i in nodes:
        doc = docs[ix.keys[i]]
        ix.titles[i], ix.levels[i] = doc.title, doc.level
        incoming = _Incoming(ix, touched)
        _read_refs(
            ix, i, by_source.get(i, []), docs | _targets(vault, by_source[i], docs), incoming
        )
        _read_tags(ix, i, doc, names)
    for j, row in touched.items():
        ix.inc[j] = row
    _course_topics(ix, nodes)
    for i in nodes:
        for t in ix.topics[i]:
            ix.covering.add(t, i)
        for t in ix.tag_ids[i]:
            ix.tagged.add(t, i)
        if ix.course[i] >= 0:
            ix.members.add(ix.course[i], i)


class _Incoming:
    """``inc`` rows as :func:`_read_refs` writes them, copied on first write."""

    def __init__(self, ix: FeatureIndex, touched: dict[int, dict[int, int]]) -> None:
        self.ix, self.touched = ix, touched

    def __getitem__(self, j: int) -> dict[int, int]:
        row = self.touched.get(j)
        if row is None:
            row = self.touched[j] = dict(self.ix.inc[j])
        return row


def _targets(vault: Snapshot, refs: list[Ref], docs: dict[str, Document]) -> dict[str, Document]:
    """The documents named by ``course`` references, for their parent (a course unit)."""
    wanted = [t for _s, kind, t, _r in refs if kind == "course" and t not in docs]
    return vault.documents_for(wanted) if wanted else {}


def engine_digest(ix: FeatureIndex) -> str:
    """A digest of what the engine's matrices are made of in ``ix``: its documents and
    their types, references, topics, tags and course (titles and the rest are read by
    reasons and lists, from the index itself)."""
    digest = hashlib.blake2b(digest_size=16)
    update = digest.update
    update(f"{len(ix.keys)}:{len(ix.tag_names)}".encode())
    update(array("q", ix.course).tobytes())
    for n, key in enumerate(ix.keys):
        update(f"\0{key}\0{ix.types[n]}\0".encode())
        update(ix.out.data[n])
        update(b"\1" + ix.topics.data[n])
        update(b"\1" + ix.tag_ids.data[n])
    return digest.hexdigest()


class Features:
    """The feature index as a derived structure (:mod:`studykb.vault.derived`): built
    from the state, updated after an edit by reading the changed files again (declined
    when the documents, the topics or an edited document's names changed)."""

    name = "related-features"
    made_by = ("studykb.related.features", "studykb.graph", "studykb.model")
    inputs = (TOPICS,)

    def build(self, vault: Snapshot) -> FeatureIndex:
        return from_vault(vault, vault.fingerprint())

    def update(self, value: FeatureIndex, change: Change, vault: Snapshot) -> FeatureIndex | None:
        if TOPICS.name in change.inputs:
            return None
        return value if update(value, vault, vault.fingerprint()) is not None else None

    def stamp(self, value: FeatureIndex) -> str:
        return engine_digest(value)

    def dump(self, value: FeatureIndex) -> dict[str, object]:
        return value.to_data()

    def load(self, data: Any) -> FeatureIndex:
        return FeatureIndex.from_data(data)


FEATURES = Features()
