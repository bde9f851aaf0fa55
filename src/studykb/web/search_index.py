"""The static site's search index (``search-index.json``), read by ``search-static.js``.

``{"docs": [{"key", "title", "type", "url", "snippet", "path", "tags", "status",
"level", "names"}], "terms": {"term": [[doc, weight], ...]}, "thesaurus": {name: [other
names]}}``: English and other spaced
scripts as lowercase words of letters, digits and ``_`` (NFKC, not stemmed: the browser
splits a query the same way); Chinese already cut into words by the same segmenter as
the search index (:func:`studykb.text.analysis.tokens`, with the shorter words inside a
long one), so the browser only has to match the index's own terms. A term's weight is
how often it occurs, the title, aliases and id counted as the CLI's index counts them
(:data:`studykb.search.records.NAME_WEIGHT`), tags and the names of the topics a
document is about as its tags (``TAG_WEIGHT``), the body once. ``names`` are the
document's title, aliases and id folded as an exact-name lookup folds them (a query that
is one of them puts the document first, as the CLI does); ``thesaurus`` is the CLI's
"also searched": for each topic name, the other names a query naming it searches too.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Callable, Iterable
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from studykb.api import fold_name, term_weights
from studykb.web.links import Linker

if TYPE_CHECKING:
    from studykb.api import Session
    from studykb.model import Document

#: Characters of a body that are indexed (a very long note still counts by its start).
BODY_CHARS = 20_000
SNIPPET_CHARS = 160


def build(
    kb: Session, link: Linker, texts: dict[str, tuple[str, list[str]]] | None = None
) -> dict[str, Any]:
    """The index of every document but course units; ``link`` makes hrefs relative to
    where the index file is; ``texts``: the vault's plain texts, when read already."""
    docs = [d for d in kb.documents().values() if d.type != "unit"]
    docs.sort(key=lambda d: d.key)
    if texts is None:
        texts = kb.texts()
    postings: dict[str, list[list[int]]] = {}
    entries = []
    topics = kb.topic_table()
    for n, doc in enumerate(docs):
        body = texts.get(doc.path, ("", []))[0][:BODY_CHARS]
        entries.append(_entry(doc, body, link))
        named = [topics.texts[k] for k in topics.about(doc)]
        for term, weight in term_weights(doc, body, named).items():
            found = postings.get(term)
            if found is None:
                postings[term] = [[n, weight]]
            else:
                found.append([n, weight])
    return {"docs": entries, "terms": postings, "thesaurus": thesaurus(kb)}


Texts = dict[str, tuple[str, list[str]]]
_FIRST = itemgetter(0)


def update(
    kb: Session,
    link: Linker,
    old: dict[str, Any],
    changed: set[str],
    texts_of: Callable[[Iterable[str]], Texts],
) -> dict[str, Any] | None:
    """:func:`build`'s index again, from ``old`` (the index of the last site, changed
    in place) with only the documents ``changed`` made again: their entries, their
    postings, and the order of the terms as :func:`build` makes it (by the first
    document that has each, then in that document's order). Valid only when nothing
    but these documents' bodies differs since (the same documents, cards and topics:
    :func:`studykb.web.site_inputs.shared` unchanged); ``texts_of(paths)``: their
    plain texts. None when ``old`` is not an index of the same documents."""
    docs = [d for d in kb.documents().values() if d.type != "unit"]
    docs.sort(key=lambda d: d.key)
    entries, terms = old.get("docs"), old.get("terms")
    if not isinstance(entries, list) or not isinstance(terms, dict) or "thesaurus" not in old:
        return None
    if [e.get("key") if isinstance(e, dict) else None for e in entries] != [d.key for d in docs]:
        return None
    redo = sorted(n for n, d in enumerate(docs) if d.key in changed)
    if not redo:
        return old
    first = {term: postings[0][0] for term, postings in terms.items()}
    order = {term: i for i, term in enumerate(terms)}
    for postings in terms.values():  # the changed documents' postings out
        for n in redo:
            i = bisect_left(postings, n, key=_FIRST)
            if i < len(postings) and postings[i][0] == n:
                del postings[i]
    weights = _weights(kb, docs, redo, texts_of, entries, link)
    for n in redo:  # and in again, as they are now
        for term, weight in weights[n].items():
            found = terms.get(term)
            if found is None:
                terms[term] = [[n, weight]]
            else:
                insort(found, [n, weight], key=_FIRST)
    kept = {t: p for t, p in terms.items() if p}
    # a term a changed document no longer has may now come first in another document:
    # its place is in that document's order of terms
    moved = {p[0][0] for t, p in kept.items() if t in first and first[t] != p[0][0]}
    weights.update(_weights(kb, docs, sorted(moved - set(redo)), texts_of, None, link))
    places = {n: {t: i for i, t in enumerate(w)} for n, w in weights.items()}

    def place(item: tuple[str, list[list[int]]]) -> tuple[int, int]:
        n = item[1][0][0]
        return (n, places[n][item[0]] if n in places else order[item[0]])

    old["terms"] = dict(sorted(kept.items(), key=place))
    return old


def _weights(
    kb: Session,
    docs: list[Document],
    numbers: list[int],
    texts_of: Callable[[Iterable[str]], Texts],
    entries: list[Any] | None,
    link: Linker,
) -> dict[int, dict[str, int]]:
    """The term weights of the documents ``numbers``, as :func:`build` counts them (and
    their entries put into ``entries``, when given)."""
    if not numbers:
        return {}
    texts = texts_of(sorted({docs[n].path for n in numbers}))
    topics = kb.topic_table()
    out = {}
    for n in numbers:
        doc = docs[n]
        body = texts.get(doc.path, ("", []))[0][:BODY_CHARS]
        if entries is not None:
            entries[n] = _entry(doc, body, link)
        named = [topics.texts[k] for k in topics.about(doc)]
        out[n] = term_weights(doc, body, named)
    return out


def thesaurus(kb: Session) -> dict[str, list[str]]:
    """{folded topic name: the other names the CLI searches too for it} (its "also
    searched"), for every name of every topic that has other names."""
    topics = kb.topic_table()
    out: dict[str, list[str]] = {}
    for text in topics.texts.values():
        for name in text.split("\n"):
            folded = fold_name(name)
            if folded and folded not in out:
                also = kb.also_searched(name)
                if also:
                    out[folded] = also
    return out


def _entry(doc: Document, body: str, link: Linker) -> dict[str, Any]:
    snippet = " ".join((doc.summary or body[: SNIPPET_CHARS * 2]).split())
    if len(snippet) > SNIPPET_CHARS:
        snippet = snippet[: SNIPPET_CHARS - 1] + "…"
    return {
        "key": doc.key,
        "title": doc.title,
        "type": doc.type,
        "url": link.doc(doc),
        "snippet": snippet,
        "path": doc.path,
        "tags": list(dict.fromkeys((*doc.covers, *doc.tags))),
        "status": doc.status,
        "level": doc.level,
        "names": list(dict.fromkeys(fold_name(n) for n in (doc.title, *doc.aliases, doc.id))),
    }
