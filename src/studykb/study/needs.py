"""What each document needs: the prerequisite edges every plan, tree, ``next`` and the
sidebar's "Before this" are made from (one model, so they never disagree).

The rules (the vault format's, see docs/guide/plans.md):

* a document needs what its ``requires`` name;
* for every topic it covers (``covers``, never ``tags``), that topic's prerequisites, not
  the topic itself;
* never itself, directly or through a topic it covers;
* a course needs what its units need from outside it (not its own units, nor the topics
  they teach);
* a document that writes no ``requires`` and covers nothing, but is about topics (its
  ``tags``, or the topics its text links to), is *built on* those it assumes, and needs
  them: the topics at or below its level, or one level above for what implements or
  works through ideas (repositories, papers, docs, tutorials, books). The level-3 vLLM
  repository tagged with the level-4 PagedAttention is read after PagedAttention; its
  plan is never empty just because the name resolved to a page that lists no
  prerequisites. A topic further above is one it introduces or mentions (a level-1
  overview of serving does not ask for the level-4 serving topic first); without a
  level on either, it is assumed. News and posts are read for what they report, not
  built on what they mention, and a ``requires`` written empty (``requires: []``) says
  on purpose that nothing is needed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from studykb.model import Document
from studykb.study import plan_inputs
from studykb.vault import Vault

if TYPE_CHECKING:
    from studykb.vault.state.rows import Edge

#: Kinds never built on the topics they are about (read for what they report).
NEWS_KINDS = frozenset({"news", "post"})
#: Kinds that implement or work through ideas, so may assume a topic one level above
#: their own (a level-3 repository of a level-4 technique); articles, talks and videos
#: about a topic assume nothing above their level.
IMPLEMENTS = frozenset({"repo", "paper", "docs", "tutorial", "book", "course"})
#: Why a document built on a topic needs it, by how it names the topic.
BUILT_ON_TAG = "it is about this topic"
BUILT_ON_LINK = "its text builds on this topic"


class Info(NamedTuple):
    """What ordering and counting need of a document, without loading it."""

    type: str
    level: int | None
    title: str
    """The title, case-folded."""
    status: str | None
    date: str | None
    kind: str | None
    focus: int
    """How many topics the document covers (0: none)."""
    done: str | None
    """The date ``mark`` recorded when it became done."""
    empty: bool = False
    """Nothing to read: a course unit that is only a title (no text, no address)."""


def nothing_to_read(doc: Document) -> bool:
    """A document that is only a name: a unit with no address of its own and no text
    beyond its title (a syllabus line). It can be pointed at, never read first."""
    if doc.url:
        return False
    text = " ".join(doc.summary.split())
    return doc.type == "unit" and (not text or text == " ".join(doc.title.split()))


def compute(vault: Vault) -> dict[str, Any]:
    """The parts of :class:`studykb.study.plans.Knowledge` as plain data (what the cache
    keeps), with what they were made from (:mod:`studykb.study.plan_inputs`): ``files``,
    the digest of what they read of each file, and ``stamp``, a name of their content."""
    docs = vault.documents()
    topics = vault.topics()
    requires = vault.edges("requires", order="line")
    links = vault.edges("link", order="line")
    items = vault.edges("item", order="source")
    taught = {key: keys for key, doc in docs.items() if (keys := topics.taught(doc))}
    covers: dict[str, list[str]] = {}
    tagged: dict[str, list[str]] = {}
    for key, doc in docs.items():
        mine = taught.get(key, [])
        for topic in mine:
            covers.setdefault(topic, []).append(key)
        for topic in topics.about(doc):
            if topic not in mine:
                tagged.setdefault(topic, []).append(key)
    known = {k for k, d in docs.items() if d.status == "done"}
    for key in list(known):
        known.update(taught.get(key, ()))
    info = {
        k: list(
            Info(
                d.type,
                d.level,
                d.title.casefold(),
                d.status,
                d.date,
                d.kind,
                len(taught.get(k, ())),
                d.done,
                nothing_to_read(d),
            )
        )
        for k, d in docs.items()
    }
    out = {
        "info": info,
        "edges": edges(vault, docs, taught, requires, links),
        "known": sorted(known),
        "covers": covers,
        "tagged": tagged,
        "list_pos": list_positions(items),
        "taught": taught,
    }
    files, cards = plan_inputs.made_from(docs.values(), [*requires, *links, *items], topics.ids)
    out["files"], out["stamp"] = files, plan_inputs.content(out, cards)
    return out


def edges(
    vault: Vault,
    docs: dict[str, Document],
    taught: dict[str, list[str]],
    required: list[Edge],
    links: list[Edge],
) -> list[list[str]]:
    """``[doc, need, reason]``: its ``requires``, the prerequisites of what it covers
    (never a topic it covers itself), and what a document built on topics needs;
    ``required`` and ``links``: the ``requires`` and ``link`` references, by file and
    line."""
    requires: dict[str, list[tuple[str, str]]] = {}
    for source, target, _kind, _path, _line, reason in required:
        if source in docs and target in docs and target not in taught.get(source, ()):
            requires.setdefault(source, []).append((target, reason))
    out = [[s, t, r] for s, needs in requires.items() for t, r in needs]
    for key, topic_keys in taught.items():
        own = {key, *topic_keys}
        for topic in topic_keys:
            title = docs[topic].title
            out.extend(
                [key, need, reason or f"{title} needs it"]
                for need, reason in requires.get(topic, ())
                if need not in own
            )
    out.extend(_built_on(vault, docs, taught, requires, links))
    out.extend(_course_needs(docs, taught, out))
    return out


def _course_needs(
    docs: dict[str, Document], taught: dict[str, list[str]], edges: list[list[str]]
) -> list[list[str]]:
    """``[course, need, reason]``: what a course's units need from outside the course
    (not its own units, nor the topics they teach)."""
    units: dict[str, list[str]] = {}
    for key, doc in docs.items():
        if doc.type == "unit" and doc.parent in docs:
            units.setdefault(doc.parent, []).append(key)
    if not units:
        return []
    course_of = {u: c for c, us in units.items() for u in us}
    inside = {c: {c, *us, *(t for u in us for t in taught.get(u, ()))} for c, us in units.items()}
    out = []
    for source, need, reason in edges:
        course = course_of.get(source)
        if course is not None and need not in inside[course]:
            out.append([course, need, reason or f"{docs[source].title} needs it"])
    return out


def _built_on(
    vault: Vault,
    docs: dict[str, Document],
    taught: dict[str, list[str]],
    requires: dict[str, list[tuple[str, str]]],
    links: list[Edge],
) -> list[list[str]]:
    """``[doc, topic, reason]`` for each document built on topics (see the module
    docstring), leaving out a topic that itself needs the document (no false loop)."""
    about: dict[str, dict[str, str]] = {}
    topics = vault.topics()
    for key, doc in docs.items():
        for topic in topics.about(doc):  # in the order the tags are written
            if topic not in taught.get(key, ()):
                about.setdefault(key, {})[topic] = BUILT_ON_TAG
    for source, target, *_rest in links:
        if target in docs and docs[target].type == "topic" and source in docs:
            about.setdefault(source, {}).setdefault(target, BUILT_ON_LINK)
    needed = {t for needs in requires.values() for t, _r in needs}
    out = []
    for key, named in about.items():
        builder = docs[key]
        if not _builds_on_topics(builder, key, taught, requires):
            continue
        for topic, reason in named.items():
            if topic == key or not _assumes(builder, docs[topic]):
                continue
            if not (key in needed and _reaches(requires, topic, key)):
                out.append([key, topic, reason])
    return out


def _builds_on_topics(
    doc: Document, key: str, taught: dict[str, list[str]], requires: dict[str, Any]
) -> bool:
    """Whether ``doc``'s needs come from the topics it is about: it is not a topic (whose
    ``requires`` are curated), a list or a course (which teaches what it is tagged with),
    not news or a post, teaches nothing, and writes no ``requires``."""
    if doc.type in ("topic", "list", "course") or (doc.kind or "").casefold() in NEWS_KINDS:
        return False
    return key not in taught and key not in requires and "requires" not in doc.meta


def _assumes(doc: Document, topic: Document) -> bool:
    """Whether ``doc`` assumes ``topic``: not above its own level, or one above for what
    implements ideas (a level-3 repository of a level-4 technique); unknown: yes."""
    if doc.level is None or topic.level is None:
        return True
    slack = 1 if (doc.kind or doc.type).casefold() in IMPLEMENTS else 0
    return topic.level <= doc.level + slack


def _reaches(requires: dict[str, list[tuple[str, str]]], start: str, goal: str) -> bool:
    """Whether ``start`` needs ``goal`` through ``requires`` edges (a loop if ``goal``
    were built on ``start``)."""
    seen, stack = {start}, [start]
    while stack:
        for need, _reason in requires.get(stack.pop(), ()):
            if need == goal:
                return True
            if need not in seen:
                seen.add(need)
                stack.append(need)
    return False


def list_positions(items: list[Edge]) -> dict[str, int]:
    """Document key -> its earliest position in any curated list; ``items``: the ``item``
    references, by source and line."""
    list_pos: dict[str, int] = {}
    counter: dict[str, int] = {}
    for source, target, *_rest in items:
        pos = counter.get(source, 0)
        counter[source] = pos + 1
        if target not in list_pos or pos < list_pos[target]:
            list_pos[target] = pos
    return list_pos
