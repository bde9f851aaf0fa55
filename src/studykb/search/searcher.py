"""Running queries on the search index: the best hits of a whoosh query, and documents
like a given one.

A process keeps its searcher open between queries (see :func:`studykb.search.store.current`);
a query that finds the index damaged has it rebuilt and runs again (:func:`_retrying`).
How a plain query is read and ranked is in ``understand.py`` and ``ranking.py``; options,
filters and snippets in ``query.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from whoosh import query as wq

from studykb.errors import UsageError
from studykb.runtime import process
from studykb.search.coverage import Coverage
from studykb.search.ranking import OTHER_NAMES, exact_query, name_query
from studykb.search.records import body_text
from studykb.search.schema import bind, make_schema
from studykb.search.scoring import BM25FTable
from studykb.search.state import INDEX_DIR, TEXT_FIELDS, index_dir
from studykb.search.store import (
    FIELD_B,
    close,
    current,
    damaged,
    notify,
    open_dir,
    open_index,
    searchers,
)
from studykb.search.sync import BUILD_LOCK_WAIT, rebuild, sync
from studykb.text import terms
from studykb.text.analysis import Analyser
from studykb.vault.topics import TopicTable

if TYPE_CHECKING:
    from studykb.vault import Vault

#: Distinctive terms of a document that :func:`similar` looks for in the others.
SIMILAR_TERMS = 15


@dataclass(frozen=True)
class Found:
    """One document that matched, with its stored fields."""

    key: str
    score: float
    fields: dict[str, Any]


@dataclass(frozen=True)
class Answer:
    """The documents a query found and the index terms it matched (for highlighting)."""

    hits: list[Found]
    terms: frozenset[str]
    """Terms of the text fields the query asked for (to highlight in a snippet)."""
    empty: bool = False
    """The query had nothing to look for (only stop words or punctuation)."""


_TEXT_FIELDS = TEXT_FIELDS


@process.memo(maxsize=4)
def _parser(analyser: Analyser) -> Any:
    """The query parser of a schema read with ``analyser`` (only for query syntax: plain
    words are read by understand.py)."""
    # deferred: whoosh loads in ~0.1 s; only searching needs it
    from whoosh.qparser import QueryParser

    return QueryParser("body", make_schema(analyser))


def _searcher(vault: Vault) -> Any:
    """A searcher on the latest complete index (kept open between queries of one process)."""
    folder = str(index_dir(vault))
    searcher = current(folder)
    if searcher is not None:
        return searcher
    ix, notice = open_index(Path(folder))
    if notice:  # replaced by an empty index: fill it (sync skipped opening it when current)
        notify(notice)
        sync(vault, wait=BUILD_LOCK_WAIT, quiet=True)
        ix = open_dir(Path(folder))
    searcher = searchers()[folder] = ix.searcher(weighting=BM25FTable(**FIELD_B))
    return searcher


_T = TypeVar("_T")


def _retrying(vault: Vault, action: Callable[[Any], _T]) -> _T:
    """Run ``action(searcher)``; a damaged index is rebuilt (with a notice) and tried again."""
    try:
        return action(_searcher(vault))
    except Exception as exc:
        if not damaged(exc):
            raise
        close(vault)
        notify(
            f"search index was damaged ({type(exc).__name__}); rebuilding "
            f"{index_dir(vault).parent.name}/{INDEX_DIR}/"
        )
        rebuild(vault)
        return action(_searcher(vault))


def parse_query(text: str, analyser: Analyser) -> Any:
    """The whoosh query for ``text``, its words read by ``analyser``; a syntax error
    raises UsageError."""
    parser = _parser(analyser)
    q = parser.parse(text)
    error = _first_error(q)
    if error:
        raise UsageError(f"Cannot read the query {text!r}: {error}.", hint=QUERY_HELP)
    return q


def _top(searcher: Any, q: Any, limit: int, allow: Any = None, block: Any = None) -> Any:
    """The best ``limit`` hits of ``q``, scoring every match.

    whoosh's collector periodically "replaces" the matcher tree with a cheaper one once
    a clause can no longer lift a document into the top N (a union becomes an
    intersection or an and-maybe). With a union nested in another compound (``(a OR b
    OR c) OR d``, ``(a OR b) AND (c OR d)``, ``a ANDMAYBE (b OR c OR d)``) that rewrite
    drops real top hits: on random queries of those shapes the top 5 was wrong in 20 %
    to 95 % of cases, in whoosh 2.7.4 and whoosh3 3.54.0 alike. Replacement is turned
    off here (block-quality skipping alone was checked and is right).
    """
    # deferred: whoosh loads in ~0.1 s; only searching needs it
    from whoosh import collectors

    collector: Any = collectors.TopCollector(max(1, limit), usequality=True, replace=0)
    if allow is not None or block is not None:
        collector = collectors.FilterCollector(collector, allow, block)
    searcher.search_with_collector(q, collector)
    return collector.results()


#: Documents a plain query's first pass (BM25F over its words and names) hands to the
#: ranking of :mod:`studykb.search.ranking`, which scores each of them in Python.
RERANK = 30


def _reranked(searcher: Any, q: Coverage, limit: int, mask: Any) -> list[Found]:
    """The best ``limit`` documents by ``q``, among the best :data:`RERANK` (or ``limit``)
    by its words and names alone (whoosh's fast, block-skipping union). The first pass
    does not depend on ``limit`` below :data:`RERANK`, so a short list is the top of a
    long one. The second scores only those documents, skipping to each."""
    fast = q.first if q.first is not None else wq.Or([*q.slots, q.exact])
    first = _top(searcher, fast, max(RERANK, limit), allow=mask)
    wanted = sorted(hit.docnum for hit in first)
    scored: list[tuple[float, int]] = []
    for sub, offset in searcher.leaf_searchers():
        size = sub.reader().doc_count_all()
        mine = [d - offset for d in wanted if offset <= d < offset + size]
        if not mine:
            continue
        m = q.matcher(sub)
        for d in mine:
            m.skip_to(d)
            if m.is_active() and m.id() == d:
                scored.append((m.score(), d + offset))
    stored = searcher.reader().stored_fields
    found = [Found(fields["key"], score, fields) for score, d in scored for fields in (stored(d),)]
    return _in_order(found)[:limit]


def _in_order(found: list[Found]) -> list[Found]:
    """Best score first; equal scores by key, not by where the documents happen to lie
    in the index (which edits change: a clean build would order them otherwise)."""
    return sorted(found, key=lambda f: (-f.score, f.key))


QUERY_HELP = (
    'Query syntax: words (all must match), OR, NOT, "a phrase", field:value '
    "(title, aliases, tags, body, type, tag, course, status, level, kind, id, "
    "path), prefix*, and parentheses."
)


def _first_error(q: Any) -> str | None:
    error = getattr(q, "error", None)
    if error:
        return str(error)
    for child in q.children() if hasattr(q, "children") else ():
        found = _first_error(child)
        if found:
            return found
    return None


def query(
    vault: Vault,
    text: str,
    filters: list[list[tuple[str, str]]] | None = None,
    limit: int = 10,
    expansions: Iterable[str] = (),
) -> Answer:
    """Run ``text`` (whoosh query language; empty: every document, in path order).

    ``filters``: groups of (field, exact value); a document must match one pair of
    every group (an empty value: the field is empty). ``expansions``: other phrasings (a
    topic's names in the other language) that also match, at a lower weight.
    """
    analyser = vault.topics().analyser()
    q = parse_query(text, analyser) if text.strip() else wq.Every()
    if isinstance(q, type(wq.NullQuery)):
        return Answer([], frozenset(), empty=True)
    extra = [name_query(name, OTHER_NAMES, analyser) for name in expansions]
    extra = [e for e in extra if e is not None]
    if extra:
        q = wq.Or([q, *extra])
    if not isinstance(q, wq.Every):
        q = wq.AndMaybe(q, exact_query(text))
    return run(vault, q, filters, limit)


def _condition(name: str, value: str) -> Any:
    """A filter pair as a whoosh query: the field holds ``value``; ``""``: it holds
    nothing (an empty field is not indexed, so "no status" is "not any status")."""
    return wq.Not(wq.Every(name)) if value == "" else wq.Term(name, value)


def run(
    vault: Vault,
    q: Any,
    filters: list[list[tuple[str, str]]] | None = None,
    limit: int = 10,
    highlight: frozenset[str] | None = None,
) -> Answer:
    """The best ``limit`` documents for the whoosh query ``q`` (see :func:`query`);
    ``highlight``: the terms to show in snippets (default: those of ``q``)."""
    conditions = [
        wq.Or([_condition(name, value) for name, value in group])
        for group in (filters or [])
        if group
    ]
    mask = wq.And(conditions) if conditions else None
    sort = isinstance(q, wq.Every)

    def answer(searcher: Any) -> Answer:
        if sort:
            results = searcher.search(q, limit=max(1, limit), filter=mask, sortedby="key")
        elif isinstance(q, Coverage):
            return Answer(
                _reranked(searcher, q, limit, mask),
                highlight if highlight is not None else frozenset(),
            )
        else:
            results = _top(searcher, q, limit, allow=mask)
        hits = [
            Found(hit["key"], 0.0 if sort else float(hit.score or 0.0), dict(hit.fields()))
            for hit in results
        ]
        hits = hits if sort else _in_order(hits)
        if sort:
            terms_found: frozenset[str] = frozenset()
        else:
            terms_found = highlight if highlight is not None else _text_terms(q, searcher.reader())
        return Answer(hits, terms_found)

    return _retrying(vault, answer)


def _text_terms(q: Any, reader: Any) -> frozenset[str]:
    """Terms of the text fields the query looks for, prefixes and wildcards expanded.

    (whoosh's ``Query.existing_terms`` stops after the first field: its loop variable
    shadows the ``fieldname`` argument, so it is not used here.)
    """
    out: set[str] = set()
    for leaf in _positive_leaves(q):
        if leaf.field() not in _TEXT_FIELDS:
            continue
        try:
            terms = list(leaf.expanded_terms(reader))[:200]
        except Exception:  # noqa: BLE001 - highlighting is best effort
            continue
        for _field, term in terms:
            out.add(term.decode("utf-8") if isinstance(term, bytes) else term)
    return frozenset(out)


def _positive_leaves(q: Any) -> Iterator[Any]:
    if isinstance(q, wq.Not):
        return
    if isinstance(q, wq.AndNot):
        yield from _positive_leaves(q.a)
    elif q.is_leaf():
        yield q
    else:
        for child in q.children():
            yield from _positive_leaves(child)


def _telling(term: str) -> bool:
    """Whether a term says something about a text (not a function word, number or letter)."""
    return len(term) > 1 and not terms.is_filler(term) and not term.replace(".", "").isdigit()


def similar(vault: Vault, key: str, limit: int = 20) -> list[tuple[str, float, list[str]]]:
    """Documents whose body shares the most distinctive terms with ``key``'s (BM25).

    Returns (doc key, score, top shared words) best first, ``key`` itself left out. The
    index is brought up to date first. The shared words are shown as written in ``key``'s
    text (``decoding``, not the stem ``decod``).
    """
    doc = vault.document(key)
    if doc is None:
        return []
    sync(vault)
    topics = vault.topics()
    analyser = topics.analyser()
    text = body_text(doc, vault.text(doc.path)[0] if doc.type != "unit" else "", topics)

    def run(searcher: Any) -> list[tuple[str, float, list[str]]]:
        bind(searcher.schema, analyser)  # key_terms_from_text reads text with the schema's
        terms = [
            (t, w)
            for t, w in searcher.key_terms_from_text("body", text, numterms=40, normalize=False)
            if _telling(t)
        ][:SIMILAR_TERMS]
        if not terms:
            return []
        q = wq.Or([wq.Term("body", word, boost=w) for word, w in terms])
        q.matcher_type = wq.Or.ARRAY_MATCHER  # flat: preloading is right, and 2.5x faster
        results = _top(searcher, q, limit, block=wq.Term("key", key))
        words = analyser.surface_forms(text)
        out = []
        for hit in results:
            have = _terms_of(vault, hit["key"], topics)
            shared = [t for t, _w in terms if t in have][:8]
            out.append(
                (hit["key"], round(float(hit.score or 0.0), 4), [words.get(t, t) for t in shared])
            )
        return out

    return _retrying(vault, run)


def _terms_of(vault: Vault, key: str, topics: TopicTable) -> set[str]:
    """The body terms of a document (analysed again: the index keeps no term vectors)."""
    doc = vault.document(key)
    if doc is None:
        return set()
    body = vault.text(doc.path)[0] if doc.type != "unit" else ""
    return set(topics.analyser().term_positions(body_text(doc, body, topics)))
