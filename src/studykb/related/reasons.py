"""Why two documents are related, in words: "mentions KV cache", "links here"...

One reason per component that carried weight (:data:`MIN_EVIDENCE`), strongest first;
each names only what a reader would recognise as a subject: readings, documents, topics
and tags by title, and for text the distinctive words both documents use (never a stop
word, a filler word or a number, :func:`studykb.related.textsim.subject`; only words a
title or topic name uses, an English one only as some title writes it (no passing
inflection) and no adverb; only words among the heaviest of *both* documents and held
by few documents: :data:`DISTINCT_SHARE`). A list that cites
everything is never given as "cited together in".
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from studykb.related.components import ALONGSIDE_SHARE
from studykb.related.feature_index import KIND_BITS
from studykb.related.weights import shared_folder

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from studykb.related.engine import Engine as Matrices
    from studykb.related.row_scores import RowEngine

    Engine = Matrices | RowEngine

#: Names listed in one reason before "and N more".
MAX_NAMES = 3
#: Reasons given for one document.
MAX_REASONS = 4
#: A component's evidence below this (of 1) is too weak to be given as a reason.
MIN_EVIDENCE = 0.2
#: A word given as a reason is among the heaviest this many terms of both documents...
TOP_WORDS = 40
#: ...and among the vectors of at most this share of the documents (and at least 3).
DISTINCT_SHARE = 0.05
#: A word of a title, as written.
WORD = re.compile(r"\w+")
#: An English adverb ("fully" of "Fully Sharded Data Parallel"): a word of a title
#: phrase, never its subject.
ADVERB = re.compile(r"[a-z]{3,}ly$", re.I)

Say = Callable[[str, str], None]
"""How the helpers below add a reason: ``say(component, text)``."""


def names(items: list[str], limit: int = MAX_NAMES) -> str:
    """``A, B, C and 2 more``."""
    shown = ", ".join(items[:limit])
    rest = len(items) - limit
    return f"{shown} and {rest} more" if rest > 0 else shown


def explain(
    engine: Engine, i: int, j: int, feats: dict[str, float], weight: dict[str, float]
) -> list[str]:
    """Reasons node ``j`` is related to node ``i``, strongest first ("hand-picked" first);
    ``weight``: component -> its weight."""
    ix = engine.ix
    said: list[tuple[float, int, str]] = []  # (weight, order, text)

    def say(component: str, text: str) -> None:
        value = feats.get(component, 0.0)
        said.append((weight.get(component, 1.0) * value, len(said), text))

    # the components with evidence enough to be given as a reason (0 is never enough)
    strong = {c for c, v in feats.items() if v >= MIN_EVIDENCE and weight.get(c, 0.0) > 0}

    linked = _links(engine, i, j, feats, say)
    if not linked and "mentions" in strong:
        say("mentions", f"mentions {ix.titles[j]}")
    if not linked and "mentioned_by" in strong:
        say("mentioned_by", "mentions this")
    _course(engine, i, j, feats, say)
    if "refs" in strong:
        shared = ix.shared_refs(i, j)
        readings = [ix.titles[z] for z in shared if ix.types[z] == "entry"]
        others = [ix.titles[z] for z in shared if ix.types[z] != "entry"]
        if readings:
            n = len(readings)
            say("refs", f"shares {n} reading{'s' if n > 1 else ''}: {names(readings)}")
        if others:
            say("refs", f"both link to: {names(others)}")
    if "cocite" in strong:
        citers = [ix.titles[s] for s in ix.shared_citers(i, j)]
        if citers:
            say("cocite", f"cited together in: {names(citers)}")
    if "prereq" in strong:
        _prereq(engine, i, j, say)
    if "topics" in strong:
        _topics(engine, i, j, say)
    if "tags" in strong:
        tags = ix.shared_tags(i, j)
        if tags:
            say("tags", f"same tags: {names(tags)}")
    if "text" in strong:  # the words only when a reader would call them subjects
        words = shared_words(engine, i, j)
        say("text", f"similar text: {', '.join(words[:MAX_NAMES])}" if words else "similar text")
    if "folder" in strong and said:  # it counted only alongside the others, for little
        value = ALONGSIDE_SHARE * weight.get("folder", 0.0) * feats["folder"]
        folder = shared_folder(ix.paths[i], ix.paths[j]).rpartition("/")[2]
        said.append((value, len(said), f"same folder: {folder}"))
    said.sort(key=lambda s: (-s[0], s[1]))
    out = [text for _w, _o, text in said][:MAX_REASONS]
    return (["hand-picked"] + out[: MAX_REASONS - 1]) if feats.get("picked") else out


def _links(engine: Engine, i: int, j: int, feats: dict[str, float], say: Say) -> bool:
    """Say how they link; whether they do."""
    ix = engine.ix
    if feats.get("link_in"):
        bits = ix.out[j].get(i, 0)
        say("link_in", "needs this first" if bits & KIND_BITS["requires"] else "links here")
    if feats.get("link_out"):
        bits = ix.out[i].get(j, 0)
        if bits & KIND_BITS["requires"]:
            say("link_out", "a prerequisite of this")
        elif not feats.get("picked"):  # a hand-picked one says so already
            say("link_out", "linked from here")
    return bool(feats.get("link_in") or feats.get("link_out") or feats.get("picked"))


def _course(engine: Engine, i: int, j: int, feats: dict[str, float], say: Say) -> None:
    ix = engine.ix
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


def _prereq(engine: Engine, i: int, j: int, say: Say) -> None:
    ix = engine.ix
    mine, theirs = dict(ix.requires[i]), dict(ix.requires[j])
    both = [ix.titles[z] for z in mine if z in theirs]
    if both:
        say("prereq", f"same prerequisites: {names(both)}")
        return
    needed = set(ix.required_by(i)) & set(ix.required_by(j))
    if needed:
        say("prereq", f"both needed for: {names(sorted(ix.titles[s] for s in needed))}")
    elif any(j in dict(ix.requires[z]) for z in mine) or any(
        i in dict(ix.requires[z]) for z in theirs
    ):
        say("prereq", "a step further along the prerequisites")


def _topics(engine: Engine, i: int, j: int, say: Say) -> None:
    ix = engine.ix
    shared_topics = ix.shared_topics(i, j)
    if i in shared_topics:
        say("topics", "covers this topic")
    elif j in shared_topics:
        say("topics", "a topic this covers")
    elif shared_topics:
        say("topics", f"covers the same topics: {names([ix.titles[t] for t in shared_topics])}")


def shared_words(engine: Engine, i: int, j: int, most: int = 5) -> list[str]:
    """The distinctive words both documents use that a reader knows as subjects,
    heaviest first (see the module's docstring)."""
    tv = engine.tv
    if tv is None:
        return []
    mine, theirs = _top_words(engine, i), _top_words(engine, j)
    both = sorted((t for t in mine if t in theirs), key=lambda t: (-mine[t] * theirs[t], t))
    return [tv.forms[t] for t in both[:most]]


def _titled(engine: Engine) -> frozenset[str]:
    """Every word some title writes (folded, remembered): an English term is shown only
    as a title writes it, never as a passing inflection ("scattered" of Reduce-Scatter)."""
    got: frozenset[str] | None = engine.memo.get("titled")
    if got is None:
        got = engine.memo["titled"] = frozenset(
            w for title in engine.ix.titles for w in WORD.findall(title.casefold())
        )
    return got


def _top_words(engine: Engine, i: int) -> dict[int, float]:
    """The heaviest :data:`TOP_WORDS` terms of node ``i`` that may be shown, by weight
    (remembered on the engine)."""
    memo = engine.memo.setdefault("top_words", {})
    got: dict[int, float] | None = memo.get(i)
    if got is None:
        terms, weights = engine.vector(i)
        terms, weights = terms[:TOP_WORDS], weights[:TOP_WORDS]
        ok = _showable(engine, terms)
        got = memo[i] = dict(zip(terms[ok].tolist(), weights[ok].tolist(), strict=True))
    return got


def _showable(engine: Engine, terms: NDArray[np.integer]) -> NDArray[np.bool_]:
    """Whether each of ``terms`` may be given as a reason: a subject (a title or topic name
    holds it; no filler, number or stop word) held by few documents' vectors. Each term
    is decided once, when first asked about (remembered on the engine)."""
    known: NDArray[np.int8] | None = engine.memo.get("showable")
    if known is None:
        tv = engine.tv
        width = max(len(tv.forms) if tv is not None else 0, engine.posting.shape[0])
        known = engine.memo["showable"] = np.full(width, -1, dtype=np.int8)
    for t in sorted(set(terms[known[terms] < 0].tolist())):
        known[t] = _shown(engine, t)
    shown: NDArray[np.bool_] = known[terms] > 0
    return shown


def _shown(engine: Engine, t: int) -> bool:
    """:func:`_showable` of one term."""
    from studykb.related.textsim import subject  # deferred: loads the mention automaton

    tv = engine.tv
    if tv is None or t >= len(tv.forms):
        return False
    marked = tv.subjects[t] if t < len(tv.subjects) else 0
    posting = int(engine.posting[t]) if t < engine.posting.shape[0] else 0
    if not marked or posting > max(3.0, DISTINCT_SHARE * engine.n):
        return False
    form = tv.forms[t]
    english = form.isascii()
    return subject(form) and (
        not english or (form.casefold() in _titled(engine) and not ADVERB.match(form))
    )
