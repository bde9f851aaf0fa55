"""Text similarity between documents, for the related-documents ranking.

Two providers with the same call, ``similar(key, limit) -> [(key, score, shared words)]``:

* :class:`TermVectors` (the default): every document as its most distinctive terms
  (TF-IDF, the search index's analyzer), compared by the dot product of those sparse
  vectors. The vectors and the term counts they are made from are kept in the vault's
  cache; only files whose content changed are analysed again, so a query costs well
  under a millisecond and the sidebar of a whole vault a few seconds.
* the search index's more-like-this (``studykb.search.index.similar``, which the library
  API hands to the ranker for ``--text index``;
  BM25 over the whole index). Exact, but about half a second per document at 10,000
  documents, which is too slow for a sidebar of every document; the evaluation script
  compares both.

Without ``studykb.search.index`` (or rjieba), terms come from a plain tokenizer: lowercased
words, and two-character pieces of Chinese text.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from studykb.vault import Vault

Similar = list[tuple[str, float, list[str]]]
VECTORS_ENTRY = "related-vectors"
TERMS_ENTRY = "related-terms"
#: Terms kept per document: its most distinctive ones.
TOP_TERMS = 100
#: Terms found in more than this share of documents (and at least 30) say nothing.
MAX_DF_SHARE = 0.3
#: A term shared by more documents than this (among their top terms) is skipped when
#: looking for candidates, which bounds the cost of one query.
MAX_POSTING = 400
#: Analyse texts in worker processes when at least this many changed.
PARALLEL_MIN = 1000
#: Terms compared to tell near-duplicates apart (diversity).
NEAR_TERMS = 20


class TextSimilarity(Protocol):
    def similar(self, key: str, limit: int) -> Similar: ...


@dataclass
class TermVectors:
    """Top-term TF-IDF vectors of every document, and who holds each term.

    Vectors and postings are stored packed (``array`` bytes: int32 numbers, float32
    weights) so the cache loads in milliseconds; they are unpacked when first read.
    """

    keys: list[str] = field(default_factory=list)
    number: dict[str, int] = field(default_factory=dict)
    packed_vectors: list[tuple[bytes, bytes]] = field(default_factory=list)
    """Document -> (term numbers, weights); weights are unit length."""
    packed_postings: list[tuple[bytes, bytes]] = field(default_factory=list)
    """Term number -> (document numbers, weights)."""
    joined_forms: str = ""
    """Term number -> the word as first written (``decoding``, not the stem), NUL-joined."""
    joined_terms: str = ""
    """Term number -> the term as analysed, NUL-joined."""

    def __post_init__(self) -> None:
        self._vectors: dict[int, dict[int, float]] = {}
        self._forms: list[str] | None = None

    def to_data(self) -> dict[str, Any]:
        """Plain data for the cache (msgpack)."""
        return {"keys": self.keys, "vectors": self.packed_vectors,
                "postings": self.packed_postings, "forms": self.joined_forms,
                "terms": self.joined_terms}

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> TermVectors:
        keys = data["keys"]
        return cls(keys=keys, number={key: n for n, key in enumerate(keys)},
                   packed_vectors=data["vectors"], packed_postings=data["postings"],
                   joined_forms=data["forms"], joined_terms=data["terms"])

    def vector(self, n: int) -> dict[int, float]:
        got = self._vectors.get(n)
        if got is None:
            terms, weights = self.packed_vectors[n]
            got = self._vectors[n] = dict(zip(_ints(terms), _floats(weights), strict=True))
        return got

    def vector_of(self, key: str) -> dict[int, float]:
        n = self.number.get(key)
        return self.vector(n) if n is not None else {}

    def top_terms(self, key: str, k: int = NEAR_TERMS) -> frozenset[int]:
        """The ``k`` heaviest terms of a document (vectors are stored heaviest first)."""
        n = self.number.get(key)
        if n is None:
            return frozenset()
        return frozenset(_ints(self.packed_vectors[n][0][:4 * k]))

    def posting_size(self, term: int) -> int:
        return len(self.packed_postings[term][0]) // 4

    def form(self, term: int) -> str:
        if self._forms is None:
            self._forms = self.joined_forms.split("\0")
        return self._forms[term]

    def term_numbers(self) -> dict[str, int]:
        return {t: n for n, t in enumerate(self.joined_terms.split("\0"))} \
            if self.joined_terms else {}

    def similar(self, key: str, limit: int = 20) -> Similar:
        n = self.number.get(key)
        if n is None:
            return []
        return self.similar_to(self.vector(n), limit, n)

    def similar_to(self, mine: dict[int, float], limit: int, skip: int = -1) -> Similar:
        """Documents closest to the vector ``mine`` (document ``skip`` left out)."""
        scores: dict[int, float] = defaultdict(float)
        for term, weight in mine.items():
            docs, weights = self.packed_postings[term]
            if len(docs) > 4 * MAX_POSTING:
                continue
            for other, w in zip(_ints(docs), _floats(weights), strict=True):
                scores[other] += weight * w
        scores.pop(skip, None)
        best = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
        out = []
        for other, score in best:
            theirs = self.vector(other)
            shared = sorted((t for t in mine if t in theirs),
                            key=lambda t: (-mine[t] * theirs[t], t))
            out.append((self.keys[other], round(score, 4), [self.form(t) for t in shared[:5]]))
        return out


def _ints(data: bytes) -> array[int]:
    out = array("i")
    out.frombytes(data)
    return out


def _floats(data: bytes) -> array[float]:
    out = array("f")
    out.frombytes(data)
    return out


# -- building -------------------------------------------------------------------------------
def tokenizer() -> Callable[[str], list[tuple[str, str]]]:
    """(term, word as written) pairs of a text, as the search index reads it."""
    from studykb.text.analysis import tokens

    def terms(text: str) -> list[tuple[str, str]]:
        return [(t.text, t.original) for t in tokens(text)]

    return terms


def _texts(vault: Vault) -> dict[str, tuple[str, str]]:
    """key -> (file hash, the text to compare): title, aliases, headings and body."""
    import json

    hashes = {path: digest for path, _mtime, digest in vault.file_rows()}
    bodies = vault.texts()
    out = {}
    for key, path, _id, title, _type, names, _url in vault.store.name_rows():
        aliases = json.loads(names or "[]")
        if "#" in key:  # a course unit: its title is all its text
            text = "\n".join([title, *aliases])
        else:
            body, headings = bodies.get(path, ("", []))
            text = "\n".join([title, *aliases, *headings, body])
        out[key] = (hashes.get(path, ""), text)
    return out


def document_frequency(counts: dict[str, Counter[str]]) -> Counter[str]:
    df: Counter[str] = Counter()
    for tf in counts.values():
        df.update(tf.keys())
    return df


def weigh(tf: Counter[str], df: Counter[str], size: int) -> list[tuple[float, str]]:
    """A document's most distinctive terms, (unit-length weight, term), heaviest first.

    TF-IDF with a sublinear term frequency; numbers, one-character terms (的, 和), terms
    no other document has and terms most documents have are left out.
    """
    limit = max(30, MAX_DF_SHARE * size)
    weights = []
    for term, count in tf.items():
        if len(term) < 2 or term.isdigit():
            continue
        d = df[term]
        if d > limit or d < 2:
            continue
        weights.append(((1 + math.log(count)) * math.log((size + 1) / d), term))
    weights.sort(key=lambda wt: (-wt[0], wt[1]))
    top = weights[:TOP_TERMS]
    norm = math.sqrt(sum(w * w for w, _t in top)) or 1.0
    return [(w / norm, term) for w, term in top]


def build(counts: dict[str, Counter[str]], forms: dict[str, str]) -> TermVectors:
    """Vectors from per-document term counts and the first written form of each term."""
    tv = TermVectors()
    df = document_frequency(counts)
    size = len(counts)
    term_no: dict[str, int] = {}
    postings: list[tuple[list[int], list[float]]] = []
    for n, key in enumerate(sorted(counts)):
        tv.number[key] = n
        tv.keys.append(key)
        numbers, weights = array("i"), array("f")
        for w, term in weigh(counts[key], df, size):
            t = term_no.get(term)
            if t is None:
                t = term_no[term] = len(postings)
                postings.append(([], []))
            numbers.append(t)
            weights.append(w)
            postings[t][0].append(n)
            postings[t][1].append(w)
        tv.packed_vectors.append((numbers.tobytes(), weights.tobytes()))
    tv.packed_postings = [(array("i", d).tobytes(), array("f", w).tobytes())
                          for d, w in postings]
    tv.joined_terms = "\0".join(term_no)
    tv.joined_forms = "\0".join(forms.get(t, t).replace("\0", "") for t in term_no)
    return tv


_MEMO: dict[str, tuple[str, TermVectors]] = {}


def load(vault: Vault, fingerprint: str) -> TermVectors:
    """The vectors for the vault state ``fingerprint``; re-analyses only changed files.

    Two cache entries: the vectors (small, read by every query) and the term counts of
    every document (large, read only when something changed).
    """
    from studykb.vault.cache import key as cache_key

    root = str(vault.root)
    memo = _MEMO.get(root)
    if memo and memo[0] == fingerprint:
        return memo[1]
    vectors_key = cache_key(VECTORS_ENTRY, fingerprint)
    data = vault.cache.get(VECTORS_ENTRY, vectors_key)
    if data is not None:
        tv = TermVectors.from_data(data)
    else:
        terms_key = cache_key(TERMS_ENTRY)
        stored = vault.cache.get(TERMS_ENTRY, terms_key) or {}
        old: dict[str, Any] = stored.get("counts", {})
        forms: dict[str, str] = stored.get("forms", {})
        counts = _counts(_texts(vault), old, forms)
        last = stored.get("built")
        earlier = vault.cache.get(VECTORS_ENTRY, last) if last else None
        if earlier is not None and _same_counts(old, counts):
            tv = TermVectors.from_data(earlier)  # only hashes changed (a sidebar was written)
        else:
            tv = build({k: tf for k, (_s, tf) in counts.items()}, forms)
        vault.cache.put(TERMS_ENTRY, terms_key,
                        {"counts": counts, "forms": forms, "built": vectors_key})
        vault.cache.put(VECTORS_ENTRY, vectors_key, tv.to_data())
    _MEMO[root] = (fingerprint, tv)
    return tv


def load_counts(vault: Vault) -> dict[str, Counter[str]]:
    """Term counts of every document, as of the last :func:`load`."""
    from studykb.vault.cache import key as cache_key

    stored = vault.cache.get(TERMS_ENTRY, cache_key(TERMS_ENTRY)) or {}
    return {k: Counter(tf) for k, (_s, tf) in stored.get("counts", {}).items()}


def _counts(texts: dict[str, tuple[str, str]], old: dict[str, Any],
            forms: dict[str, str]) -> dict[str, Any]:
    """key -> (signature, term counts), analysing only what changed; ``forms`` collects
    the first written form of every term."""
    counts = {}
    todo = []
    for key, (sig, text) in texts.items():
        have = old.get(key)
        if have is not None and have[0] == sig:
            counts[key] = have
        else:
            todo.append((key, sig, text))
    for key, sig, tf, seen in _analyse(todo):
        counts[key] = (sig, tf)
        for term, word in seen.items():
            forms.setdefault(term, word)
    return counts


def _analyse_part(todo: list[tuple[str, str, str]]
                  ) -> list[tuple[str, str, Counter[str], dict[str, str]]]:
    terms = tokenizer()
    out = []
    for key, sig, text in todo:
        tf: Counter[str] = Counter()
        seen: dict[str, str] = {}
        for term, word in terms(text):
            tf[term] += 1
            if term not in seen:
                seen[term] = word.lower() if word.isascii() else word
        out.append((key, sig, tf, seen))
    return out


def _analyse(todo: list[tuple[str, str, str]]
             ) -> list[tuple[str, str, Counter[str], dict[str, str]]]:
    """Analyse texts; many of them in worker processes (cutting Chinese is the slow part)."""
    from studykb.runtime.pools import cores, imap

    workers = min(cores(), 4)
    if len(todo) < PARALLEL_MIN or workers < 2:
        return _analyse_part(todo)
    chunks = [todo[n::workers * 2] for n in range(workers * 2)]
    return [item for part in imap(_analyse_part, chunks, workers, at_least=1) for item in part]


def _same_counts(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """Whether only file hashes changed, not what the vectors are made of."""
    if old.keys() != new.keys():
        return False
    return all(old[k][1] == new[k][1] for k in new)
