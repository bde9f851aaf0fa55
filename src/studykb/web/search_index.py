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

import json
from bisect import bisect_left, bisect_right, insort
from collections.abc import Callable, Iterable
from itertools import accumulate
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import TYPE_CHECKING, Any

from studykb.api import HanTerms, fold_name, term_weights
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
    han = HanTerms()
    for n, doc in enumerate(docs):
        body = texts.get(doc.path, ("", []))[0][:BODY_CHARS]
        entries.append(_entry(doc, body, link))
        named = [topics.texts[k] for k in topics.about(doc)]
        for term, weight in term_weights(doc, body, named, han).items():
            found = postings.get(term)
            if found is None:
                postings[term] = [[n, weight]]
            else:
                found.append([n, weight])
    return {"docs": entries, "terms": postings, "thesaurus": thesaurus(kb)}


Texts = dict[str, tuple[str, list[str]]]
#: How :func:`dumps` writes the index (and so how :func:`update` reads it).
HEAD, AFTER_DOCS, AFTER_TERMS = '{"docs":[', '}],"terms":{"', ']]},"thesaurus":'
ENTRY, TERM_END = '},{"key":', ']],"'


def dumps(index: dict[str, Any]) -> bytes:
    """The index as the site writes it (compact JSON, UTF-8)."""
    return json.dumps(index, ensure_ascii=False, separators=(",", ":")).encode()


def update(
    kb: Session,
    link: Linker,
    old: bytes,
    changed: set[str],
    texts_of: Callable[[Iterable[str]], Texts],
    han: HanTerms | None = None,
) -> bytes | None:
    """:func:`build`'s index again, as :func:`dumps` writes it, from ``old`` (the file
    of the last site) with only the documents ``changed`` made again: their entries,
    their postings, and the order of the terms as :func:`build` makes it (by the first
    document that has each, then in that document's order). Valid only when nothing
    but these documents' bodies differs since (the same documents, cards and topics:
    :func:`studykb.web.site_inputs.shared` unchanged); ``texts_of(paths)``: their
    plain texts; ``han``: how their Chinese is cut (:class:`HanTerms` as in
    :func:`build`, or cuts remembered). None when ``old`` is not an index of the same
    documents.

    The file is read as text cut at the marks JSON puts between entries and between
    terms (a mark's quote could not be inside a string unescaped): only the terms that
    hold a changed document are read and written again; every other term, and the
    thesaurus, is the text the last site wrote, which is what :func:`dumps` writes for
    it. Reading and writing the whole index took about 1 s of CPU at 10k documents."""
    docs = [d for d in kb.documents().values() if d.type != "unit"]
    docs.sort(key=lambda d: d.key)
    text = old.decode("utf-8", errors="replace")
    docs_end, terms_end = text.find(AFTER_DOCS), text.find(AFTER_TERMS)
    if not text.startswith(HEAD + '{"key":') or not 0 < docs_end < terms_end:
        return None
    entries = text[len(HEAD) + len('{"key":') : docs_end].split(ENTRY)
    if [scanstring(e, 1)[0] if e[:1] == '"' else None for e in entries] != [d.key for d in docs]:
        return None
    redo = sorted(n for n, d in enumerate(docs) if d.key in changed)
    if not redo:
        return old
    terms = Terms(text[docs_end + len(AFTER_DOCS) : terms_end])
    for n in redo:  # the changed documents' postings out
        terms.remove(n)
    fresh: list[Any] = [None] * len(docs)
    han = HanTerms() if han is None else han
    weights = _weights(kb, docs, redo, texts_of, fresh, link, han)
    for n in redo:  # and in again, as they are now
        for term, weight in weights[n].items():
            terms.add(term, n, weight)
    # a term a changed document no longer has may now come first in another document:
    # its place is in that document's order of terms
    moved = {n for t, n in terms.firsts() if terms.first.get(t, n) != n}
    weights.update(_weights(kb, docs, sorted(moved - set(redo)), texts_of, None, link, han))
    for n in redo:
        entries[n] = json.dumps(fresh[n], ensure_ascii=False, separators=(",", ":"))[7:-1]
    out = [HEAD, '{"key":', ENTRY.join(entries), AFTER_DOCS[:-1], terms.text(weights)]
    return "".join([*out, text[terms_end + 2 :]]).encode()


class Terms:
    """The terms of an index file's text (from the first term's key to the last one's
    postings), each kept as written until a changed document's posting goes in or out:
    then its postings are held as the text of each (``"n,weight"``, in document order)."""

    def __init__(self, text: str) -> None:
        self.pieces = text.split(TERM_END)  # each: 'term":[[n,w],...,[n,w'
        self.starts = list(accumulate((len(p) + len(TERM_END) for p in self.pieces), initial=0))
        self.body = text
        self.index = {_key(p): i for i, p in enumerate(self.pieces)}
        self.read: dict[str, list[str]] = {}
        """The terms changed: their postings, each as written."""
        self.first: dict[str, int] = {}
        """Each term changed that was there before: the first document that had it."""

    def remove(self, n: int) -> None:
        """Document ``n``'s postings out of every term."""
        mark = f"[{n},"
        at = self.body.find(mark)
        while at >= 0:
            postings = self._postings(_key(self.pieces[bisect_right(self.starts, at) - 1]))
            i = bisect_left(postings, n, key=_doc)
            if i < len(postings) and _doc(postings[i]) == n:
                del postings[i]
            at = self.body.find(mark, at + 1)

    def add(self, term: str, n: int, weight: int) -> None:
        """Document ``n``'s posting into ``term`` (which may be new)."""
        insort(self._postings(term), f"{n},{weight}", key=_doc)

    def firsts(self) -> list[tuple[str, int]]:
        """(term, its first document) of every term changed that has postings left."""
        return [(t, _doc(p[0])) for t, p in self.read.items() if p]

    def _postings(self, term: str) -> list[str]:
        if term not in self.read:
            i = self.index.get(term)
            postings = [] if i is None else self.pieces[i].split('":[[', 1)[1].split("],[")
            self.read[term] = postings
            if postings:
                self.first[term] = _doc(postings[0])
        return self.read[term]

    def text(self, weights: dict[int, dict[str, int]]) -> str:
        """The terms (those with postings left), in :func:`build`'s order, as text."""
        places = {n: {t: i for i, t in enumerate(w)} for n, w in weights.items()}
        items: list[tuple[int, int, str]] = []
        for i, piece in enumerate(self.pieces):
            term = _key(piece)
            if term not in self.read:
                at = piece.index('":[[') + 4
                n = int(piece[at : piece.index(",", at)])
                items.append((n, places[n][term] if n in places else i, f'"{piece}]]'))
        for term, postings in self.read.items():
            if postings:
                n, was = _doc(postings[0]), self.index.get(term)
                key = (
                    _raw(self.pieces[was])
                    if was is not None
                    else json.dumps(term, ensure_ascii=False)
                )
                place = places[n][term] if n in places else self.index[term]
                items.append((n, place, key + ":[[" + "],[".join(postings) + "]]"))
        items.sort(key=lambda item: item[:2])
        return ",".join(text for _n, _place, text in items)


def _key(piece: str) -> str:
    """The term of a piece of :class:`Terms`: its key as written, unescaped."""
    return str(scanstring(piece, 0)[0])


def _raw(piece: str) -> str:
    """The key of a piece of :class:`Terms` as written, with its quotes."""
    return '"' + piece[: piece.index('":[[') + 1]


def _doc(posting: str) -> int:
    """The document of a posting as written (``"n,weight"``)."""
    return int(posting[: posting.index(",")])


def _weights(
    kb: Session,
    docs: list[Document],
    numbers: list[int],
    texts_of: Callable[[Iterable[str]], Texts],
    entries: list[Any] | None,
    link: Linker,
    han: HanTerms,
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
        out[n] = term_weights(doc, body, named, han)
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
