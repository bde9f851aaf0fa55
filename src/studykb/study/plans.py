"""Reading plans, what to read next, and the study tracker (query layer: model objects only).

The prerequisite relation: a document needs what its ``requires`` name; a document that
covers a topic also needs that topic's prerequisites (not the topic itself). A document is
known when its status is ``done``, or when it is a topic that a ``done`` document covers.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from studykb import graph as g
from studykb.model import Document
from studykb.vault import Vault

TYPE_ORDER = {"entry": 0, "note": 1, "unit": 2, "course": 3, "topic": 4, "list": 5}


@dataclass(frozen=True)
class Reading:
    """A document that covers a topic step."""

    doc: Document
    known: bool


@dataclass(frozen=True)
class Need:
    """Why a step is in the plan: ``by`` (a later step or the target) needs it."""

    by: Document
    reason: str = ""


@dataclass(frozen=True)
class Step:
    doc: Document
    known: bool
    needed_by: tuple[Need, ...] = ()
    readings: tuple[Reading, ...] = ()
    loop: tuple[str, ...] = ()
    """Keys of the steps on the same prerequisite loop (empty when not on one)."""
    depth: int = 0
    """Distance from the target in requires-hops."""


@dataclass(frozen=True)
class Plan:
    target: Document
    steps: tuple[Step, ...]
    include_known: bool
    depth: int | None

    @property
    def readings(self) -> list[Document]:
        seen: dict[str, Document] = {}
        for step in self.steps:
            for reading in step.readings:
                seen.setdefault(reading.doc.key, reading.doc)
        return list(seen.values())

    @property
    def minutes(self) -> int:
        docs = {s.doc.key: s.doc for s in self.steps} | {d.key: d for d in self.readings}
        return sum(d.minutes or 0 for d in docs.values() if d.status != "done")

    @property
    def loops(self) -> list[tuple[str, ...]]:
        return list(dict.fromkeys(s.loop for s in self.steps if s.loop))


class _Docs(dict):  # type: ignore[type-arg]
    """Documents by key, loaded from the store on first use (a plan shows a few hundred)."""

    def __init__(self, vault: Vault) -> None:
        super().__init__()
        self._vault = vault

    def __missing__(self, key: str) -> Document:
        doc = self._vault.document(key)
        if doc is None:
            raise KeyError(key)
        self[key] = doc
        return doc

    def prefetch(self, keys: Iterable[str]) -> None:
        """Load many documents in a few queries instead of one each."""
        wanted = [k for k in dict.fromkeys(keys) if k not in self]
        self.update(self._vault.documents_for(wanted))


@dataclass
class Knowledge:
    """The prerequisite graph of a vault with what is known, computed once per state."""

    info: dict[str, tuple[str, int | None, str, str | None, str | None]]
    """Key -> (type, level, folded title, status, date): enough to order and count without
    loading documents."""
    graph: g.Prerequisites
    known: set[str]
    covers: dict[str, list[str]]
    """Topic key -> keys of documents that teach it (``covers``)."""
    list_pos: dict[str, int]
    """Document key -> earliest position in any curated list."""
    docs: dict[str, Document] = field(default_factory=dict)
    tagged: dict[str, list[str]] = field(default_factory=dict)
    """Topic key -> keys of documents about it (tags) that do not teach it."""

    def sort_key(self, key: str) -> tuple:
        _type, level, title, _status, _date = self.info[key]
        return (level is None, level or 0, self.list_pos.get(key, 1 << 30), title, key)

    def reading_key(self, key: str) -> tuple:
        dtype, level, title, _status, _date = self.info[key]
        return (key in self.known, level is None, level or 0, TYPE_ORDER.get(dtype, 9),
                self.list_pos.get(key, 1 << 30), title)

    def readings(self, topic: str) -> tuple[Reading, ...]:
        """What to read for a topic: the documents that teach it, then those about it."""
        out = []
        for group in (self.covers.get(topic, ()), self.tagged.get(topic, ())):
            keys = [r for r in group if self.info[r][0] in READING_TYPES]
            out.extend(Reading(self.docs[r], r in self.known)
                       for r in sorted(keys, key=self.reading_key))
        return tuple(out)


READING_TYPES = ("entry", "note", "unit")
CACHE_ENTRY = "plans"


def knowledge(vault: Vault) -> Knowledge:
    """Prerequisites, coverage and the known set; kept in the vault's cache per state."""
    from studykb.vault.cache import key as cache_key

    entry = cache_key(CACHE_ENTRY, vault.fingerprint())
    data = vault.cache.get(CACHE_ENTRY, entry)
    if data is None:
        data = _compute(vault)
        vault.cache.put(CACHE_ENTRY, entry, data)
    info = {k: (row[0], row[1], row[2], row[3], row[4]) for k, row in data["info"].items()}
    graph = g.prerequisite_graph((doc, need, reason) for doc, need, reason in data["edges"])
    return Knowledge(info, graph, set(data["known"]), data["covers"], data["list_pos"],
                     _Docs(vault), data["tagged"])


def _compute(vault: Vault) -> dict[str, Any]:
    """The parts of :class:`Knowledge` as plain data (what the cache keeps)."""
    docs = vault.documents()
    topics = vault.topics()
    covers: dict[str, list[str]] = {}
    tagged: dict[str, list[str]] = {}
    covered_by: dict[str, list[str]] = {}
    for key, doc in docs.items():
        taught = topics.taught(doc)
        for topic in taught:
            covers.setdefault(topic, []).append(key)
            covered_by.setdefault(key, []).append(topic)
        for topic in topics.about(doc):
            if topic not in taught:
                tagged.setdefault(topic, []).append(key)
    requires: dict[str, list[tuple[str, str]]] = {}
    for source, target, _kind, _path, _line, reason in vault.edges("requires", order="line"):
        if source in docs and target in docs:
            requires.setdefault(source, []).append((target, reason))
    edges = [(s, t, r) for s, needs in requires.items() for t, r in needs]
    for key, topic_keys in covered_by.items():
        for topic in topic_keys:
            title = docs[topic].title
            for need, reason in requires.get(topic, ()):
                if need != key:
                    edges.append((key, need, reason or f"{title} needs it"))
    known = {k for k, d in docs.items() if d.status == "done"}
    for key in list(known):
        known.update(covered_by.get(key, ()))
    list_pos: dict[str, int] = {}
    counter: dict[str, int] = {}
    for source, target, *_rest in vault.edges("item", order="source"):
        pos = counter.get(source, 0)
        counter[source] = pos + 1
        if target not in list_pos or pos < list_pos[target]:
            list_pos[target] = pos
    info = {k: [d.type, d.level, d.title.casefold(), d.status, d.date] for k, d in docs.items()}
    return {"info": info, "edges": [list(e) for e in edges], "known": sorted(known),
            "covers": covers, "tagged": tagged, "list_pos": list_pos}


def plan(vault: Vault, target: Document, *, include_known: bool = False,
         depth: int | None = None, kb: Knowledge | None = None) -> Plan:
    """What ``target`` needs, in reading order; see the module docstring for the rules."""
    kb = kb or knowledge(vault)
    graph = kb.graph
    stop = None if include_known else (lambda key: key in kb.known)
    reach = g.within_depth(graph, target.key, depth, stop)
    nodes = [k for k in reach if k != target.key]
    if not nodes:
        return Plan(target, (), include_known, depth)
    blocks = g.ordered_blocks(graph, nodes, kb.sort_key)
    in_plan = set(nodes) | {target.key}
    if isinstance(kb.docs, _Docs):
        kb.docs.prefetch([*nodes, *(r for k in nodes for r in kb.covers.get(k, ()))])
    steps = []
    for block in blocks:
        loop = tuple(block) if len(block) > 1 else ()
        for key in block:
            needers = sorted((p for p in graph.predecessors(key) if p in in_plan),
                             key=kb.sort_key)
            needs = tuple(Need(kb.docs[p], graph.reason(p, key)) for p in needers)
            steps.append(Step(kb.docs[key], key in kb.known, needs, kb.readings(key), loop,
                              reach[key]))
    return Plan(target, tuple(steps), include_known, depth)


def ready(vault: Vault, target: Document | None = None, limit: int = 10,
          kb: Knowledge | None = None) -> list[Step]:
    """Unknown documents whose prerequisites are all known, best first.

    For a target: among the steps of its plan. For the whole vault: every topic, entry,
    unit or note that is not known, ranked by how much it unlocks.
    """
    kb = kb or knowledge(vault)
    graph = kb.graph
    if target is not None:
        candidates = [s.doc.key for s in plan(vault, target, kb=kb).steps]
        if not candidates and target.key not in kb.known:
            candidates = [target.key]
    else:
        candidates = [k for k, (dtype, *_rest) in kb.info.items()
                      if dtype in ("topic", "entry", "unit", "note") and k not in kb.known]
    out = []
    for key in candidates:
        if key in kb.known:
            continue
        if all(n in kb.known for n in graph.successors(key)):
            out.append((key, len(graph.predecessors(key))))
    reading_first = {k for k, row in kb.info.items() if row[3] == "reading"}
    out.sort(key=lambda ku: (ku[0] not in reading_first, -ku[1], kb.sort_key(ku[0])))
    steps = []
    for key, _unlocks in out[:limit]:
        needers = tuple(Need(kb.docs[p], graph.reason(p, key))
                        for p in sorted(graph.predecessors(key), key=kb.sort_key)[:5])
        steps.append(Step(kb.docs[key], False, needers, kb.readings(key)))
    return steps
