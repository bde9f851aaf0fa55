"""Why two documents are related, in words: "shares 2 readings: X, Y", "links here"..."""

from __future__ import annotations

from typing import TYPE_CHECKING

from studykb.related.features import KIND_BITS, FeatureIndex

if TYPE_CHECKING:
    from studykb.related.rank import Weights

#: Names listed in one reason before "and N more".
MAX_NAMES = 3
#: Reasons given for one document.
MAX_REASONS = 4


def names(items: list[str], limit: int = MAX_NAMES) -> str:
    """``A, B, C and 2 more``."""
    shown = ", ".join(items[:limit])
    rest = len(items) - limit
    return f"{shown} and {rest} more" if rest > 0 else shown


def explain(ix: FeatureIndex, i: int, j: int, feats: dict[str, float], weights: Weights,
            words: list[str]) -> list[str]:
    """Reasons node ``j`` is related to node ``i``, strongest first ("hand-picked" first)."""
    said: list[tuple[float, int, str]] = []  # (weight, order, text)

    def say(feature: str, text: str) -> None:
        value = feats.get(feature, 0.0)
        said.append((getattr(weights, feature, 1.0) * value, len(said), text))

    titles = ix.titles
    if feats.get("link_in"):
        bits = ix.out[j].get(i, 0)
        say("link_in", "needs this first" if bits & KIND_BITS["requires"] else "links here")
    if feats.get("link_out"):
        bits = ix.out[i].get(j, 0)
        if bits & KIND_BITS["requires"]:
            say("link_out", "a prerequisite of this")
        elif not feats.get("picked"):  # a hand-picked one says so already
            say("link_out", "linked from here")
    if feats.get("course"):
        course = ix.course[i]
        if course == j:
            say("course", "the course this belongs to")
        elif course == i:
            say("course", "part of this course")
        else:
            say("course", f"same course: {titles[course]}")
    if feats.get("refs"):
        shared = ix.shared_refs(i, j)
        readings = [titles[z] for z in shared if ix.types[z] == "entry"]
        others = [titles[z] for z in shared if ix.types[z] != "entry"]
        if readings:
            n = len(readings)
            say("refs", f"shares {n} reading{'s' if n > 1 else ''}: {names(readings)}")
        if others:
            say("refs", f"both link to: {names(others)}")
    if feats.get("cocite"):
        citers = [titles[s] for s in ix.shared_citers(i, j)]
        if citers:
            say("cocite", f"cited together in: {names(citers)}")
    if feats.get("topics"):
        shared_topics = ix.shared_topics(i, j)
        if i in shared_topics:
            say("topics", "covers this topic")
        elif j in shared_topics:
            say("topics", "a topic this covers")
        else:
            say("topics", f"covers the same topics: {names([titles[t] for t in shared_topics])}")
    if feats.get("tags"):
        say("tags", f"same tags: {names(ix.shared_tags(i, j))}")
    if feats.get("text") and words:
        say("text", f"similar text: {', '.join(words[:MAX_NAMES])}")
    said.sort(key=lambda s: (-s[0], s[1]))
    out = [text for _w, _o, text in said][:MAX_REASONS]
    return (["hand-picked"] + out[:MAX_REASONS - 1]) if feats.get("picked") else out
