"""Reading plans, what to read next, and the study tracker (query layer: model objects only).

The prerequisite relation: a document needs what its ``requires`` name; a document that
covers a topic also needs that topic's prerequisites (not the topic itself). A document is
known when its status is ``done``, or when it is a topic that a ``done`` document covers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import graph as g
from .model import Document
from .vault import Vault

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


@dataclass
class Knowledge:
    """The prerequisite graph of a vault with what is known, computed once per command."""

    docs: dict[str, Document]
    graph: Any
    known: set[str]
    covers: dict[str, list[str]]
    """Topic key -> keys of documents covering it."""
    list_pos: dict[str, int]
    """Document key -> earliest position in any curated list."""
    extra: dict[str, Any] = field(default_factory=dict)

    def sort_key(self, key: str) -> tuple:
        doc = self.docs[key]
        return (doc.level is None, doc.level or 0, self.list_pos.get(key, 1 << 30),
                doc.title.casefold(), key)

    def reading_key(self, key: str) -> tuple:
        doc = self.docs[key]
        return (key in self.known, doc.level is None, doc.level or 0,
                TYPE_ORDER.get(doc.type, 9), self.list_pos.get(key, 1 << 30),
                doc.title.casefold())


def knowledge(vault: Vault) -> Knowledge:
    """Build the prerequisite graph, coverage and the known set."""
    docs = vault.documents()
    topics = g.topic_names(docs.values())
    covers: dict[str, list[str]] = {}
    covered_by: dict[str, list[str]] = {}
    for key, doc in docs.items():
        for topic in g.covered_topics(doc, topics):
            covers.setdefault(topic, []).append(key)
            covered_by.setdefault(key, []).append(topic)
    requires: dict[str, list[tuple[str, str]]] = {}
    for source, target, reason in vault.store.db.execute(
            "SELECT source, target_key, reason FROM refs"
            " WHERE kind='requires' AND target_key IS NOT NULL ORDER BY path, line"):
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
    rows = vault.store.db.execute(
        "SELECT source, target_key FROM refs WHERE kind='item' AND target_key IS NOT NULL"
        " ORDER BY source, line, n")
    counter: dict[str, int] = {}
    for source, target in rows:
        pos = counter.get(source, 0)
        counter[source] = pos + 1
        if target not in list_pos or pos < list_pos[target]:
            list_pos[target] = pos
    return Knowledge(docs, g.prerequisite_graph(edges), known, covers, list_pos)


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
    steps = []
    for block in blocks:
        loop = tuple(block) if len(block) > 1 else ()
        for key in block:
            needers = [Need(kb.docs[p], graph[p][key].get("reason", ""))
                       for p in graph.predecessors(key) if p in in_plan and p in reach]
            needers.sort(key=lambda n: kb.sort_key(n.by.key))
            readings = tuple(Reading(kb.docs[r], r in kb.known)
                             for r in sorted(kb.covers.get(key, ()), key=kb.reading_key)
                             if kb.docs[r].type in ("entry", "note", "unit"))
            steps.append(Step(kb.docs[key], key in kb.known, tuple(needers), readings, loop,
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
        candidates = [k for k, d in kb.docs.items()
                      if d.type in ("topic", "entry", "unit", "note") and k not in kb.known]
    out = []
    for key in candidates:
        if key in kb.known:
            continue
        needs = list(graph.successors(key)) if key in graph else []
        if all(n in kb.known for n in needs):
            unlocks = len(list(graph.predecessors(key))) if key in graph else 0
            out.append((key, unlocks))
    reading_first = {k for k, d in kb.docs.items() if d.status == "reading"}
    out.sort(key=lambda ku: (ku[0] not in reading_first, -ku[1], kb.sort_key(ku[0])))
    steps = []
    for key, _unlocks in out[:limit]:
        needers = tuple(Need(kb.docs[p], graph[p][key].get("reason", ""))
                        for p in (graph.predecessors(key) if key in graph else ()))
        readings = tuple(Reading(kb.docs[r], r in kb.known)
                         for r in sorted(kb.covers.get(key, ()), key=kb.reading_key)
                         if kb.docs[r].type in ("entry", "note", "unit"))
        steps.append(Step(kb.docs[key], False, needers[:5], readings))
    return steps
