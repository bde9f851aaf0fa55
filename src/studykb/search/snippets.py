"""The snippet of a search hit: the place in a document that shows what matched.

A reader must be able to tell an ambiguous match apart (MPS the Apple backend from MPS
the NVIDIA service, "paged" from "408-page"), so the snippet is the window of the body
with the most of the query's words, preferring a window that also names what the
document is about (its title and aliases: "MPS (Metal Performance Shaders)"). Links
are shown by the title of the document they point to, never by a raw id
(``[[kv-cache]]`` reads "KV Cache"). A document found only by another of its names, or
by a topic it is about, says so first ("also called: ...", "about: PagedAttention (paged
KV cache)").
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from studykb.text.analysis import Analyser

if TYPE_CHECKING:
    from studykb.model import Document
    from studykb.vault import Vault

#: Characters of body text shown around the best match.
SNIPPET_CHARS = 180
#: Only this much of a long body is scanned for the snippet.
SNIPPET_SCAN = 200_000
#: Windows compared (from the first matches on).
MAX_WINDOWS = 2000

Marks = tuple[tuple[int, int], ...]


def snippet(
    vault: Vault, doc: Document, terms: frozenset[str] | set[str], width: int = SNIPPET_CHARS
) -> tuple[str, Marks]:
    """The snippet of ``doc`` for a query looking for ``terms``, and where they are in it."""
    analyser = vault.topics().analyser()
    body, _headings = vault.text(doc.path)
    body = with_titles(without_title(body, doc.title)[:SNIPPET_SCAN], link_titles(vault, doc))
    text, marks = make_snippet(body, terms, analyser, width, _own_terms(doc, analyser))
    if marks or not terms:
        return text, marks
    lead = _lead(vault, doc, terms, analyser)
    if not lead:
        return text, marks
    found = tuple((s, e) for _t, s, e in analyser.find_terms(lead, terms))
    rest = text[: max(0, width - len(lead))].rstrip()
    return lead + rest + ("…" if len(rest) < len(text) else ""), found


def _lead(vault: Vault, doc: Document, terms: frozenset[str] | set[str], analyser: Analyser) -> str:
    """Where a document that matched nowhere in its body did match: another of its names
    ("also called: ..."), or a topic it is about ("about: PagedAttention (paged KV cache)")."""
    named = [n for n in doc.aliases if analyser.find_terms(n, terms)]
    if named:
        return f"also called: {', '.join(named[:3])}. "
    topics = vault.topics()
    for key in topics.about(doc):
        names = topics.texts.get(key, "").split("\n")
        hits = [n for n in names[1:] if analyser.find_terms(n, terms)]
        if hits:
            title = names[1] if len(names) > 1 else names[0]
            shown = [n for n in hits if n != title][:2]
            return f"about: {title}" + (f" ({', '.join(shown)})" if shown else "") + ". "
    return ""


def _own_terms(doc: Document, analyser: Analyser) -> frozenset[str]:
    """The terms of the document's names (Chinese runs whole: a snippet of an English
    query never loads the Chinese dictionary)."""
    return analyser.rough_terms(" ".join((doc.title, *doc.aliases)))


def without_title(body: str, title: str) -> str:
    """The body without the heading that repeats the title (already shown above it)."""
    stripped = body.lstrip()
    if title and stripped.startswith(title):
        rest = stripped[len(title) :]
        if not rest or rest[0].isspace():
            return rest.lstrip()
    return body


def link_titles(vault: Vault, doc: Document) -> dict[str, str]:
    """Link target as the body text shows it -> the title of the document it names. A
    wikilink without a label shows the name it was written with: a target's title or
    alias reads well already, its id (``kv-cache``) or file name does not."""
    keys = {
        e.target for e in vault.edges_in([doc.path]) if e.kind == "link" and e.source == doc.key
    }
    out: dict[str, str] = {}
    for target in vault.documents_for(sorted(keys)).values():
        stem = target.path.rsplit("/", 1)[-1].removesuffix(".md")
        for name in (target.id, stem, target.path, target.path.removesuffix(".md")):
            if name and name != target.title:
                out[name] = target.title
    return out


_NAME = re.compile(r"\w(?:[\w./#-]*\w)?")


def with_titles(text: str, titles: dict[str, str]) -> str:
    """``text`` with each link target of ``titles`` (standing alone) replaced by its title."""
    if not titles:
        return text
    return _NAME.sub(lambda m: titles.get(m.group(), m.group()), text)


def make_snippet(
    body: str,
    terms: frozenset[str] | set[str],
    analyser: Analyser,
    width: int = SNIPPET_CHARS,
    own: frozenset[str] = frozenset(),
) -> tuple[str, Marks]:
    """The window of ``body`` with the most distinct matched terms (then the most of the
    document's ``own`` name terms, then the most matches), and where the terms are."""
    head = body[:SNIPPET_SCAN]
    found = analyser.find_terms(head, set(terms) | set(own)) if terms else []
    if not any(t in terms for t, _s, _e in found):
        return _flatten(head, 0, min(len(head), width), [])
    best: tuple[int, int, int] = (0, 0, 0)
    at = 0
    j = 0
    for i, (_t, start, _e) in enumerate(found[:MAX_WINDOWS]):
        j = max(j, i)
        while j + 1 < len(found) and found[j + 1][2] - start <= width - 20:
            j += 1
        window = found[i : j + 1]
        mine = {t for t, _s, _e in window if t in terms}
        if not mine:
            continue
        score = (
            len(mine),
            len({t for t, _s, _e in window if t in own and t not in terms}),
            sum(t in terms for t, _s, _e in window),
        )
        if score > best:
            best, at = score, i
    first = next(f for f in found[at:] if f[0] in terms)
    start = max(0, first[1] - 30)
    if start:
        gap = head.rfind(" ", max(0, start - 15), first[1])
        start = gap + 1 if gap >= 0 else start
    end = min(len(head), start + width)
    inside = [(s, e) for t, s, e in found if t in terms and s >= start and e <= end]
    return _flatten(head, start, end, inside)


def _flatten(text: str, start: int, end: int, marks: list[tuple[int, int]]) -> tuple[str, Marks]:
    """text[start:end] on one line (whitespace runs made one space), with … where cut,
    and ``marks`` moved to the new offsets."""
    out: list[str] = ["…"] if start > 0 else []
    size = len(out)
    where: dict[int, int] = {}
    space = True
    for i in range(start, end):
        where[i] = size
        ch = text[i]
        if ch.isspace():
            if not space:
                out.append(" ")
                size += 1
            space = True
            continue
        space = False
        out.append(ch)
        size += 1
    where[end] = size
    text_out = "".join(out).rstrip()
    if end < len(text):
        text_out += "…"
    moved = tuple(
        (where[s], min(where[e], len(text_out)))
        for s, e in marks
        if s in where and e in where and where[e] > where[s]
    )
    return text_out, moved
