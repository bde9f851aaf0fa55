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
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

from studykb.related.feature_index import KIND_BITS, FeatureIndex
from studykb.related.packed import Groups, Packed, Rows, pack
from studykb.vault.topics import TOPICS, TopicTable

if TYPE_CHECKING:
    from studykb.model import Document
    from studykb.vault.derived import Change, Snapshot
    from studykb.vault.state.rows import Edge


Ref = tuple[str, str, str, str]


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
    parents = {doc.key: doc.parent for doc in ordered if doc.parent}
    ix.reasons = [[] for _ in range(size)]
    _refs_as_columns(ix, refs, parents)
    ix.topics, ix.tag_ids = Rows([()] * size), Rows([()] * size)
    for n, doc in enumerate(ordered):
        _read_tags(ix, n, doc, table.names)
    _course_topics(ix, range(size))
    _group(ix)
    ix.let_go()  # what the rows were made of unpacked: read again from the bytes on use
    return ix


def _refs_as_columns(ix: FeatureIndex, refs: Iterable[Ref], parents: dict[str, str]) -> None:
    """Every node's references (out, inc, picked, requires, course), the same rows as
    :func:`_read_refs` makes a node at a time, from the references read once as columns
    of node numbers (a memory seam of a full build: at 50k documents about half a million
    references, held as three small arrays instead of a tuple each, and the rows packed
    straight away, never held as a dictionary each)."""
    import numpy as np  # deferred: numpy only for a full build, not to read an index

    size = len(ix.keys)
    number = ix.number
    src, dst, bits = array("i"), array("i"), array("i")
    picked: dict[int, list[int]] = {}
    required: dict[int, list[tuple[int, str]]] = {}
    course = [-1] * size
    for source, kind, target, reason in refs:
        i = number.get(source)
        j = number.get(target)
        if i is None or j is None or j == i:
            continue
        src.append(i)
        dst.append(j)
        bits.append(KIND_BITS.get(kind, 1))
        if kind == "link":
            continue
        if kind == "related":
            mine = picked.setdefault(i, [])
            if j not in mine:
                mine.append(j)
        elif kind == "requires":
            needs = required.setdefault(i, [])
            if all(j != k for k, _r in needs):
                needs.append((j, reason))
        elif kind == "course":
            parent = parents.get(target)
            course[i] = number.get(parent, j) if parent else j
    for i in range(size):
        doc_type = ix.types[i]
        if doc_type == "course":
            course[i] = i
        elif doc_type == "unit":
            course[i] = number.get(ix.keys[i].split("#", 1)[0], course[i])
    ix.course = course
    ix.picked = Rows.from_data([pack(picked.get(i, ())) for i in range(size)])
    ix.required = Rows.from_data([pack(j for j, _r in required.get(i, ())) for i in range(size)])
    for i, needs in required.items():
        ix.reasons[i] = [r for _j, r in needs]
    s = np.frombuffer(src, dtype=np.int32).astype(np.int64)
    d = np.frombuffer(dst, dtype=np.int32).astype(np.int64)
    b = np.frombuffer(bits, dtype=np.int32)
    del src, dst, bits
    # out: each node's targets in the order first referenced, their kinds' bits joined
    order = np.argsort(s, kind="stable")
    pair = s[order] * max(size, 1) + d[order]
    unique, first, inverse = np.unique(pair, return_index=True, return_inverse=True)
    joined = np.zeros(len(unique), dtype=np.int32)
    np.bitwise_or.at(joined, inverse, b[order])
    del order, pair, inverse, s, d, b
    by_first = np.argsort(first, kind="stable")
    i_of, j_of = unique // max(size, 1), unique % max(size, 1)
    ix.out = Packed.from_data(_row_bytes(i_of[by_first], j_of[by_first], joined[by_first], size))
    # inc: each node's sources in node order (``unique`` is sorted by source, then target)
    by_target = np.lexsort((i_of, j_of))
    ix.inc = Packed.from_data(_row_bytes(j_of[by_target], i_of[by_target], joined[by_target], size))


def _row_bytes(rows: Any, keys: Any, values: Any, size: int) -> list[bytes]:
    """Per row (``rows`` ascending), its ``{key: value}`` packed as :class:`Packed` keeps
    it: int32 pairs, in the order given."""
    import numpy as np  # deferred: as in _refs_as_columns

    flat = np.empty(2 * len(keys), dtype=np.int32)
    flat[0::2], flat[1::2] = keys, values
    data = flat.tobytes()
    ends = np.cumsum(np.bincount(rows, minlength=size) * 8).tolist()
    return [data[a:e] for a, e in zip([0, *ends][:-1], ends, strict=True)]


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
    files = {path: digest for path, _mtime, digest in vault.file_rows()}
    docs, topics = vault.documents(), vault.derived(TOPICS)
    return build(docs, shared_refs(vault.each_edge(order="line")), fingerprint, topics, files)


def shared_refs(edges: Iterable[Edge]) -> Iterator[Ref]:
    """(source, kind, target, reason) of each edge as it is read, each distinct string
    held once (a memory seam: the build holds every reference until each document's are
    read, about 530,000 at 50k documents; as read, each is four strings of its own)."""
    seen: dict[str, str] = {}
    one = seen.setdefault
    for e in edges:
        yield (
            one(e.source, e.source),
            one(e.kind, e.kind),
            one(e.target, e.target),
            one(e.reason, e.reason),
        )


def update(
    ix: FeatureIndex, vault: Snapshot, fingerprint: str, paths: Iterable[str] | None = None
) -> list[str] | None:
    """Bring ``ix`` up to date by reading only the changed files: their paths, or None
    when that cannot be done (documents added or removed, topics or an edited
    document's names changed). ``paths``: every file that may have changed since ``ix``
    was made (the others' digests are not read), when the caller knows them."""
    if vault.derived(TOPICS).digest != ix.topic_digest:
        return None
    if paths is None:
        files = {path: digest for path, _mtime, digest in vault.file_rows()}
        if files.keys() != ix.files.keys():
            return None
        changed = [p for p, digest in files.items() if ix.files.get(p) != digest]
    else:
        now = vault.file_hashes(paths)
        if any((p in now) != (p in ix.files) for p in paths):
            return None  # a file came or went
        changed = sorted(p for p, digest in now.items() if ix.files[p] != digest)
        files = {**ix.files, **now}
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
    reasons and lists, from the index itself). Each list goes in whole, with the length
    of each of its items, so that no two indexes share one."""
    digest = hashlib.blake2b(digest_size=16)
    update = digest.update
    update(f"{len(ix.keys)}:{len(ix.tag_names)}".encode())
    update(array("q", ix.course).tobytes())
    for strings in (ix.keys, ix.types):
        update(array("q", map(len, strings)).tobytes())
        update("".join(strings).encode())
    for rows in (ix.out.data, ix.topics.data, ix.tag_ids.data):
        update(array("q", map(len, rows)).tobytes())
        update(b"".join(rows))
    return digest.hexdigest()


class Features:
    """The feature index as a derived structure (:mod:`studykb.vault.derived`): built
    from the state, updated after an edit by reading the changed files again (declined
    when the documents, the topics or an edited document's names changed)."""

    name = "related-features"
    made_by = (
        "studykb.related.features",
        "studykb.related.feature_index",
        "studykb.related.packed",
        "studykb.graph",
        "studykb.model",
    )
    inputs = (TOPICS,)

    def build(self, vault: Snapshot) -> FeatureIndex:
        return from_vault(vault, vault.fingerprint())

    def update(self, value: FeatureIndex, change: Change, vault: Snapshot) -> FeatureIndex | None:
        if TOPICS.name in change.inputs:
            return None
        changed = update(value, vault, vault.fingerprint(), change.paths)
        return value if changed is not None else None

    def stamp(self, value: FeatureIndex) -> str:
        return engine_digest(value)

    def dump(self, value: FeatureIndex) -> dict[str, object]:
        return value.to_data()

    def load(self, data: Any) -> FeatureIndex:
        return FeatureIndex.from_data(data)


FEATURES = Features()
