"""Why two documents are related, in words: "shares 2 readings: X, Y", "links here"...

A reason is given only for evidence that carried weight (:data:`MIN_EVIDENCE`), and
names only what a reader would recognise as a subject: readings, documents, topics and
tags by title, and for text similarity the distinctive words both documents use (never
a stop word, a filler word or a number: :func:`studykb.related.textsim.subject`). A list
that cites everything is never given as "cited together in".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from studykb.related.features import KIND_BITS, FeatureIndex

if TYPE_CHECKING:
    from studykb.related.rank import Weights

#: Names listed in one reason before "and N more".
MAX_NAMES = 3
#: Reasons given for one document.
MAX_REASONS = 4
#: A continuous feature below this (of 1) is too weak to be given as a reason.
MIN_EVIDENCE = 0.2

Say = Callable[[str, str], None]
"""How the helpers below add a reason: ``say(feature, text)``."""


def names(items: list[str], limit: int = MAX_NAMES) -> str:
    """``A, B, C and 2 more``."""
    shown = ", ".join(items[:limit])
    rest = len(items) - limit
    return f"{shown} and {rest} more" if rest > 0 else shown


def explain(
    ix: FeatureIndex, i: int, j: int, feats: dict[str, float], weights: Weights, words: list[str]
) -> list[str]:
    """Reasons node ``j`` is related to node ``i``, strongest first ("hand-picked" first)."""
    said: list[tuple[float, int, str]] = []  # (weight, order, text)

    def say(feature: str, text: str) -> None:
        value = feats.get(feature, 0.0)
        said.append((getattr(weights, feature, 1.0) * value, len(said), text))

    def strong(feature: str) -> bool:
        return feats.get(feature, 0.0) >= MIN_EVIDENCE and getattr(weights, feature, 0.0) > 0

    _links(ix, i, j, feats, say)
    _course(ix, i, j, feats, say)
    if strong("refs"):
        shared = ix.shared_refs(i, j)
        readings = [ix.titles[z] for z in shared if ix.types[z] == "entry"]
        others = [ix.titles[z] for z in shared if ix.types[z] != "entry"]
        if readings:
            n = len(readings)
            say("refs", f"shares {n} reading{'s' if n > 1 else ''}: {names(readings)}")
        if others:
            say("refs", f"both link to: {names(others)}")
    if strong("cocite"):
        citers = [ix.titles[s] for s in ix.shared_citers(i, j)]
        if citers:
            say("cocite", f"cited together in: {names(citers)}")
    if strong("peers"):
        peers = [ix.titles[c] for c in ix.peers_of(i, j)]
        if peers:
            say("peers", f"cited alongside its readings in: {names(peers, 2)}")
    if strong("topics"):
        _topics(ix, i, j, say)
    if strong("tags"):
        tags = ix.shared_tags(i, j)
        if tags:
            say("tags", f"same tags: {names(tags)}")
    if strong("text"):  # the words only when a reader would call them subjects
        say("text", f"similar text: {', '.join(words[:MAX_NAMES])}" if words else "similar text")
    said.sort(key=lambda s: (-s[0], s[1]))
    out = [text for _w, _o, text in said][:MAX_REASONS]
    return (["hand-picked"] + out[: MAX_REASONS - 1]) if feats.get("picked") else out


def _links(ix: FeatureIndex, i: int, j: int, feats: dict[str, float], say: Say) -> None:
    if feats.get("link_in"):
        bits = ix.out[j].get(i, 0)
        say("link_in", "needs this first" if bits & KIND_BITS["requires"] else "links here")
    if feats.get("link_out"):
        bits = ix.out[i].get(j, 0)
        if bits & KIND_BITS["requires"]:
            say("link_out", "a prerequisite of this")
        elif not feats.get("picked"):  # a hand-picked one says so already
            say("link_out", "linked from here")


def _course(ix: FeatureIndex, i: int, j: int, feats: dict[str, float], say: Say) -> None:
    if feats.get("course"):
        course = ix.course[i]
        if course == j:
            say("course", "the course this belongs to")
        elif course == i:
            say("course", "part of this course")
        else:
            say("course", f"same course: {ix.titles[course]}")
    if feats.get("sibling"):
        shared = [ix.titles[t] for t in ix.shared_topics(i, j)]
        say("sibling", f"another course, also on {names(shared)}" if shared else "another course")


def _topics(ix: FeatureIndex, i: int, j: int, say: Say) -> None:
    shared_topics = ix.shared_topics(i, j)
    if i in shared_topics:
        say("topics", "covers this topic")
    elif j in shared_topics:
        say("topics", "a topic this covers")
    elif shared_topics:
        say("topics", f"covers the same topics: {names([ix.titles[t] for t in shared_topics])}")
