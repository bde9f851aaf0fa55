"""Topics: how many documents cover each, which topics go together, and a topic's page.

A document is about a topic when a tag or ``covers`` names it, and teaches it only when
``covers`` does: a topic's page lists under "Covered by" only what teaches it, the rest
under "Mentioned in". Two topics are related when documents are about both
(co-occurrence), ranked by how many are, then by how exclusive the pairing is (cosine:
shared / sqrt(n_a * n_b)).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

from studykb.related.feature_index import FeatureIndex
from studykb.related.features import FEATURES
from studykb.related.sidebar import Neighbour

if TYPE_CHECKING:
    from studykb.model import Document
    from studykb.vault import Vault

RELATED_TOPICS = 5
MENTIONS = 10
LEVEL_NAMES: Mapping[int | None, str] = MappingProxyType(
    {1: "intro", 3: "intermediate", 5: "advanced"}
)
_TYPE_ORDER = MappingProxyType({"note": 0, "entry": 1, "course": 2, "list": 3, "topic": 4})


@dataclass(frozen=True)
class TopicLink:
    """Another topic and how many documents cover both."""

    key: str
    id: str
    path: str
    title: str
    together: int


@dataclass(frozen=True)
class Topic:
    """A topic, how many documents cover it, and the topics covered with it."""

    key: str
    id: str
    path: str
    title: str
    count: int
    related: list[TopicLink] = field(default_factory=list)


@dataclass(frozen=True)
class LevelGroup:
    level: int | None
    """1-5, or None for documents without a level."""
    label: str
    documents: list[Document]


@dataclass(frozen=True)
class TopicPage:
    """Everything ``studykb topic`` shows, like a tag page of a news site."""

    topic: Topic
    doc: Document
    explanation: str
    prerequisites: list[Neighbour]
    leads_to: list[Neighbour]
    levels: list[LevelGroup]
    mentions: list[Neighbour]
    """Documents that link to the topic or are tagged with it, without teaching it."""
    more_mentions: int = 0


def coverers(ix: FeatureIndex, t: int) -> list[int]:
    """Documents covering topic ``t`` (not itself, not course units)."""
    return [d for d in ix.covering.get(t, ()) if d != t and ix.types[d] != "unit"]


def summary(ix: FeatureIndex, t: int, limit: int = RELATED_TOPICS) -> Topic:
    mine = coverers(ix, t)
    together: Counter[int] = Counter()
    for d in mine:
        for u in ix.topics[d]:
            if u != t and u != d:
                together[u] += 1
    sizes = {u: len(coverers(ix, u)) for u in together}

    def rank(u: int) -> tuple[int, float, str]:
        cosine = together[u] / math.sqrt(max(1, len(mine)) * max(1, sizes[u]))
        return (-together[u], -cosine, ix.titles[u])

    related = [
        TopicLink(ix.keys[u], ix.ids[u], ix.paths[u], ix.titles[u], together[u])
        for u in sorted(together, key=rank)[:limit]
    ]
    return Topic(ix.keys[t], ix.ids[t], ix.paths[t], ix.titles[t], len(mine), related)


def topics(vault: Vault) -> list[Topic]:
    """Every topic, most covered first."""
    ix = vault.derived(FEATURES)
    out = [summary(ix, t) for t, kind in enumerate(ix.types) if kind == "topic"]
    out.sort(key=lambda tp: (-tp.count, tp.title.casefold(), tp.key))
    return out


def topic_page(vault: Vault, doc: Document) -> TopicPage:
    ix = vault.derived(FEATURES)
    t = ix.number[doc.key]
    docs = vault.documents()

    def neighbour(j: int, note: str = "") -> Neighbour:
        return Neighbour(
            ix.keys[j], ix.ids[j], ix.paths[j], ix.titles[j], ix.types[j], ix.levels[j], note
        )

    groups: dict[int | None, list[Document]] = {}
    taught = vault.topics().taught
    about = coverers(ix, t)
    # "Covered by" lists what teaches the topic (``covers``); a document only tagged
    # with it is about it, and is listed with the documents that mention it
    covering = [d for d in about if doc.key in taught(docs[ix.keys[d]])]
    tagged = [d for d in about if d not in set(covering)]
    for d in covering:
        groups.setdefault(ix.levels[d], []).append(docs[ix.keys[d]])
    levels = []
    for level in sorted(groups, key=lambda v: (v is None, v or 0)):
        members = sorted(
            groups[level], key=lambda m: (_TYPE_ORDER.get(m.type, 9), m.title.casefold(), m.key)
        )
        label = f"level {level}" if level else "no level"
        if level in LEVEL_NAMES:
            label += f" ({LEVEL_NAMES[level]})"
        levels.append(LevelGroup(level, label, members))
    covered = set(covering)
    mentions = sorted(
        dict.fromkeys(
            [*tagged, *(s for s in ix.inc[t] if s not in covered and ix.types[s] != "unit")]
        ),
        key=lambda s: (ix.titles[s].casefold(), ix.keys[s]),
    )
    leads = sorted(ix.required_by(t), key=lambda j: (ix.levels[j] or 9, ix.titles[j]))
    return TopicPage(
        topic=summary(ix, t),
        doc=doc,
        explanation=doc.summary,
        prerequisites=[neighbour(j, reason) for j, reason in ix.requires[t]],
        leads_to=[neighbour(j) for j in leads],
        levels=levels,
        mentions=[neighbour(s) for s in mentions[:MENTIONS]],
        more_mentions=max(0, len(mentions) - MENTIONS),
    )
