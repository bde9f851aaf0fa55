"""Reading plans and what to read next (query layer: model objects only).

What a document needs is :mod:`studykb.study.needs`' rules: its ``requires``, the
prerequisites of the topics it covers, never itself; a document that names no
``requires`` and covers nothing is built on the topics it is about.

A document is known when its status is ``done``, or when it is a topic that a ``done``
document covers. A plan leaves out what is known and whatever is only needed through
known documents, and says how many steps it left out.

The readings of a topic are ranked by how much they teach it (:meth:`Knowledge.readings`),
never dropped: documents that cover it, then (only when none does) documents tagged with
it; what has something to read before a course unit that is only a title; by kind
(tutorial, course unit, docs, book, paper before the rest; posts and news after them, yet
still listed: Horace He's essay and the GPT-2 KV-cache post are posts), focus (fewer
topics covered first), position in a curated list, then level.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, cast

from studykb import graph as g
from studykb.model import Document, is_daily
from studykb.study import plan_inputs
from studykb.study.needs import Info, compute
from studykb.vault import Vault
from studykb.vault.derived import Change, Snapshot
from studykb.vault.topics import TOPICS

__all__ = [
    "Info",
    "Knowledge",
    "Onward",
    "Plan",
    "Reading",
    "Step",
    "after",
    "direct_needs",
    "knowledge",
    "plan",
    "ready",
]

#: Kinds (and document types) that teach: tutorials, course units, docs, books, papers.
TEACHING_KINDS = frozenset({"tutorial", "unit", "docs", "book", "paper", "course"})
#: Kinds ranked after every other reading of a topic (never left out): posts and news.
WEAK_KINDS = frozenset({"post", "news"})
#: Rank of a reading's kind: teaching 0, the rest 1, weak 2.
TEACHING, OTHER, WEAK = 0, 1, 2
NOT_LISTED = 1 << 30

RankKey = tuple[bool, bool, int, int, int, bool, int, str, str]
StepKey = tuple[bool, int, int, str, str]


@dataclass(frozen=True)
class Reading:
    """A document to read for a topic."""

    doc: Document
    known: bool
    teaches: bool = True
    """It covers the topic (False: it is only tagged with it; shown when nothing covers it)."""


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
    covering: tuple[Reading, ...] = ()
    """Every document that covers the step, unread and lower-level first (the vault
    format's order; ``readings`` is the recommendation, best first)."""


@dataclass(frozen=True)
class Plan:
    target: Document
    steps: tuple[Step, ...]
    include_known: bool
    depth: int | None
    target_readings: tuple[Reading, ...] = ()
    """For a topic target: the readings of the topic itself (read them last)."""
    target_covering: tuple[Reading, ...] = ()
    """For a topic target: every document that covers it, in the vault format's order."""
    skipped_known: int = 0
    """Steps left out because they are known."""
    skipped_through: int = 0
    """Steps left out because only known steps need them."""

    @property
    def skipped(self) -> int:
        return self.skipped_known + self.skipped_through

    @property
    def needs_nothing(self) -> bool:
        """The target has no prerequisites at all (not merely none left to read)."""
        return not self.steps and not self.skipped

    @property
    def readings(self) -> list[Document]:
        """Every reading the plan names, steps first, then the target's own."""
        seen: dict[str, Document] = {}
        for reading in (*(r for s in self.steps for r in s.readings), *self.target_readings):
            seen.setdefault(reading.doc.key, reading.doc)
        return list(seen.values())

    @property
    def minutes(self) -> int:
        docs = {s.doc.key: s.doc for s in self.steps} | {d.key: d for d in self.readings}
        return sum(d.minutes or 0 for d in docs.values() if d.status != "done")

    @property
    def loops(self) -> list[tuple[str, ...]]:
        return list(dict.fromkeys(s.loop for s in self.steps if s.loop))


class _Docs(dict[str, Document]):
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

    info: dict[str, Info]
    graph: g.Prerequisites
    known: set[str]
    covers: dict[str, list[str]]
    """Topic key -> keys of documents that teach it (``covers``)."""
    list_pos: dict[str, int]
    """Document key -> earliest position in any curated list."""
    docs: dict[str, Document] = field(default_factory=dict)
    tagged: dict[str, list[str]] = field(default_factory=dict)
    """Topic key -> keys of documents about it (tags) that do not teach it."""
    taught: dict[str, list[str]] = field(default_factory=dict)
    """Document key -> keys of the topics it covers."""

    def sort_key(self, key: str) -> StepKey:
        """Among steps free to go next: lower level, earlier in a list, then by title."""
        row = self.info[key]
        return (
            row.level is None,
            row.level or 0,
            self.list_pos.get(key, NOT_LISTED),
            row.title,
            key,
        )

    def tier(self, key: str) -> int:
        """How well a document's kind teaches: :data:`TEACHING`, :data:`OTHER`, :data:`WEAK`."""
        row = self.info[key]
        kind = row.kind.casefold() if row.kind else row.type
        if kind in TEACHING_KINDS or row.type == "unit":
            return TEACHING
        return WEAK if kind in WEAK_KINDS else OTHER

    def reading_key(self, key: str) -> RankKey:
        """Something to read first, then unread, kind, focus, curated order, level, title."""
        row = self.info[key]
        return (
            row.empty,
            key in self.known,
            self.tier(key),
            row.focus or NOT_LISTED,
            self.list_pos.get(key, NOT_LISTED),
            row.level is None,
            row.level or 0,
            row.title,
            key,
        )

    def covering(self, topic: str, leave_out: Iterable[str] = ()) -> tuple[Reading, ...]:
        """Every document that covers ``topic``, unread and lower-level first (ties in the
        order of :meth:`reading_key`): the list the vault format promises."""
        out = set(leave_out) | {topic}
        keys = sorted((k for k in self.covers.get(topic, ()) if k not in out), key=self.reading_key)
        keys.sort(
            key=lambda k: (k in self.known, self.info[k].level is None, self.info[k].level or 0)
        )
        return tuple(Reading(self.docs[k], k in self.known) for k in keys)

    def readings(self, topic: str, leave_out: Iterable[str] = ()) -> tuple[Reading, ...]:
        """What to read for a topic, best first (see the module docstring)."""
        out = set(leave_out) | {topic}
        teach = [k for k in self.covers.get(topic, ()) if k not in out]
        pool = teach or [k for k in self.tagged.get(topic, ()) if k not in out]
        ranked = sorted(pool, key=self.reading_key)
        return tuple(Reading(self.docs[k], k in self.known, bool(teach)) for k in ranked)


@dataclass(eq=False)
class PlanTables:
    """The plan tables' plain data (what the cache keeps); :func:`knowledge` is made
    from them."""

    data: dict[str, Any]


class Tables:
    """The plan tables (prerequisites, coverage, the known set: plain data) as a derived
    structure (:mod:`studykb.vault.derived`). After an edit that leaves what they read
    of the changed files alone (:mod:`studykb.study.plan_inputs`: a body's words, a link
    to a note that is not a topic) they are the ones kept; otherwise made again."""

    name = "plans"
    made_by = (
        "studykb.study.plans",
        "studykb.study.needs",
        "studykb.study.plan_inputs",
        "studykb.graph",
        "studykb.model",
    )
    inputs = (TOPICS,)

    def build(self, vault: Snapshot) -> PlanTables:
        return PlanTables(compute(cast(Vault, vault)))  # a Vault is the one snapshot there is

    def update(self, value: PlanTables, change: Change, vault: Snapshot) -> PlanTables | None:
        if change.inputs:  # the topic table
            return None
        kept, now = value.data["files"], plan_inputs.of_files(vault, change.paths)
        if any(kept.get(path) != now.get(path) for path in change.paths):
            return None
        return value

    def stamp(self, value: PlanTables) -> str:
        return str(value.data["stamp"])  # their content and the cards they were made from

    def dump(self, value: PlanTables) -> dict[str, Any]:
        return value.data

    def load(self, data: Any) -> PlanTables:
        if not isinstance(data, dict) or "info" not in data or "files" not in data:
            raise ValueError("not plan tables")
        return PlanTables(data)


TABLES = Tables()


def knowledge(vault: Vault) -> Knowledge:
    """Prerequisites, coverage and the known set, for the vault's state now (made once
    for the plan tables the vault holds, kept in memory beside them: a site asks for it
    on every page it makes)."""
    tables = vault.derived(TABLES)

    def make() -> Knowledge:
        data = tables.data
        info = {k: Info(*row) for k, row in data["info"].items()}
        graph = g.prerequisite_graph((doc, need, reason) for doc, need, reason in data["edges"])
        return Knowledge(
            info,
            graph,
            set(data["known"]),
            data["covers"],
            data["list_pos"],
            _Docs(vault),
            data["tagged"],
            data["taught"],
        )

    key = (id(tables), vault.structures.stamp(TABLES))
    return vault.structures.made_of("plans-knowledge", key, make)


def plan(
    vault: Vault,
    target: Document,
    *,
    include_known: bool = False,
    depth: int | None = None,
    kb: Knowledge | None = None,
) -> Plan:
    """What ``target`` needs, in reading order; see the module docstring for the rules."""
    kb = kb or knowledge(vault)
    own = {target.key, *kb.taught.get(target.key, ())}
    everything = _reach(kb, target.key, depth, own.__contains__)
    reach = (
        everything
        if include_known
        else _reach(kb, target.key, depth, lambda key: key in own or key in kb.known)
    )
    left_out = [k for k in everything if k not in reach]
    target_readings = kb.readings(target.key) if target.type == "topic" else ()
    target_covering = kb.covering(target.key) if target.type == "topic" else ()
    if isinstance(kb.docs, _Docs):
        kb.docs.prefetch([*reach, *(r for k in reach for r in kb.covers.get(k, ()))])
    skipped_known = sum(k in kb.known for k in left_out)
    return Plan(
        target,
        _steps(kb, reach, target.key, own),
        include_known,
        depth,
        target_readings,
        target_covering,
        skipped_known,
        len(left_out) - skipped_known,
    )


def _reach(
    kb: Knowledge, start: str, depth: int | None, stop: Callable[[str], bool]
) -> dict[str, int]:
    """What ``start`` needs (not itself, nothing ``stop`` names), with its distance."""
    reach = g.within_depth(kb.graph, start, depth, stop)
    del reach[start]
    return reach


def _steps(kb: Knowledge, reach: dict[str, int], target: str, own: set[str]) -> tuple[Step, ...]:
    """The steps in reading order: a step after its prerequisites, loops as one block;
    each names the later steps (or the target) that need it."""
    in_plan = set(reach) | {target}
    steps = []
    for block in g.ordered_blocks(kb.graph, reach, kb.sort_key):
        loop = tuple(block) if len(block) > 1 else ()
        for key in block:
            needers = sorted(
                (p for p in kb.graph.predecessors(key) if p in in_plan), key=kb.sort_key
            )
            needs = tuple(Need(kb.docs[p], kb.graph.reason(p, key)) for p in needers)
            steps.append(
                Step(
                    kb.docs[key],
                    key in kb.known,
                    needs,
                    kb.readings(key, own),
                    loop,
                    reach[key],
                    kb.covering(key, own),
                )
            )
    return tuple(steps)


def direct_needs(kb: Knowledge, key: str) -> list[tuple[Document, str]]:
    """What ``key`` needs directly, with why, in the order written (its ``requires``,
    then what the topics it covers need, then what it is built on): the first level of
    its plan, which the sidebar's "Before this" shows."""
    needs = kb.graph.successors(key)
    if isinstance(kb.docs, _Docs):
        kb.docs.prefetch(needs)
    return [(kb.docs[n], kb.graph.reason(key, n)) for n in needs]


def ready(
    vault: Vault, target: Document | None = None, limit: int = 10, kb: Knowledge | None = None
) -> list[Step]:
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
        candidates = [
            k
            for k, row in kb.info.items()
            if row.type in ("topic", "entry", "unit", "note")
            and k not in kb.known
            and not is_daily(k)
        ]
    out = []
    for key in candidates:
        if key in kb.known:
            continue
        if all(n in kb.known for n in graph.successors(key)):
            out.append((key, len(graph.predecessors(key))))
    out.sort(
        key=lambda ku: (
            kb.info[ku[0]].status != "reading",
            kb.info[ku[0]].empty,
            -ku[1],
            kb.sort_key(ku[0]),
        )
    )
    steps = []
    for key, _unlocks in out[:limit]:
        needers = tuple(
            Need(kb.docs[p], graph.reason(p, key))
            for p in sorted(graph.predecessors(key), key=kb.sort_key)[:5]
        )
        steps.append(
            Step(kb.docs[key], False, needers, kb.readings(key), covering=kb.covering(key))
        )
    return steps


@dataclass(frozen=True)
class Onward:
    """A document to read once ``after``'s target is known: what builds on it."""

    step: Step
    """The document, what it unlocks (``needed_by``) and its readings."""
    waits_on: tuple[Document, ...] = ()
    """What else it needs that is not known yet (empty: it is ready)."""

    @property
    def ready(self) -> bool:
        return not self.waits_on


def after(
    vault: Vault, target: Document, limit: int = 10, kb: Knowledge | None = None
) -> list[Onward]:
    """What to read once ``target`` is known (counted known whatever its status): the
    documents that need it or a topic it covers; ready ones first, topics before the
    other documents, then what waits on least.

    A reading that needs the target only because it covers a topic that does is left to
    that topic's readings (the topic is listed, the reading under it)."""
    kb = kb or knowledge(vault)
    graph = kb.graph
    source = {target.key, *kb.taught.get(target.key, ())}
    known = kb.known | source
    found = {p for s in source for p in graph.predecessors(s)} - source
    keys = [
        p for p in found if p not in known and not any(t in found for t in kb.taught.get(p, ()))
    ]
    waits = {k: [n for n in graph.successors(k) if n not in known] for k in keys}
    keys.sort(
        key=lambda k: (
            bool(waits[k]),
            kb.info[k].type != "topic",
            len(waits[k]),
            kb.info[k].empty,
            kb.sort_key(k),
        )
    )
    if isinstance(kb.docs, _Docs):
        kb.docs.prefetch([*keys[:limit], *(w for k in keys[:limit] for w in waits[k])])
    out = []
    for key in keys[:limit]:
        unlocks = tuple(
            Need(kb.docs[p], graph.reason(p, key))
            for p in sorted(graph.predecessors(key), key=kb.sort_key)[:5]
        )
        step = Step(
            kb.docs[key],
            False,
            unlocks,
            kb.readings(key, source),
            covering=kb.covering(key, source),
        )
        out.append(Onward(step, tuple(kb.docs[w] for w in sorted(waits[key], key=kb.sort_key))))
    return out
