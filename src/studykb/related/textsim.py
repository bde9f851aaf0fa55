"""Text similarity between documents, for the related-documents ranking.

Every document is its most distinctive terms (:data:`TOP_TERMS` of them, TF-IDF with a
sublinear term frequency, unit length), compared by the dot product of those sparse
vectors. Distinctive means: not a stop word of either language
(:mod:`studykb.text.terms`), not a number, held by at least two documents and by at most
:data:`MAX_DF_SHARE` of them (a word in every note says nothing about two of them).

Kept in the vault's cache (``related-vectors``: the vectors, who holds each term, the
vocabulary and its document frequencies) as a derived structure
(:data:`studykb.related.vectorcache.VECTORS`).

**After an edit** only the edited documents are read again: their old terms leave the
document frequencies (for a document read for the first time since the last full
build, the terms of its vector: the others were no distinctive terms and keep their
count), their new ones enter, and their vectors and postings are made again. Other
documents keep the weights they were given (their IDF from slightly older frequencies),
and Chinese text of an edited document is cut against the vocabulary already known (no
dictionary to load); this *drift* is bounded: once the documents read
incrementally since the last full build pass :data:`DRIFT_MAX` of the vault, or
documents are removed, or the protected terms change, everything is built again
(``benchmarks/bench_related.py`` measures what the drift does to the rankings).
Another provider, the search index's more-like-this, is handed in by the library API
for ``--text index``.
"""

from __future__ import annotations

import json
import math
import re
from array import array
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import islice
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from studykb.runtime import process
from studykb.runtime.pools import cores
from studykb.text.segment import HAN
from studykb.text.terms import EN_FILLER, EN_STOP, ZH_FILLER, ZH_STOP, is_filler

if TYPE_CHECKING:
    from studykb.text.analysis import Analyser
    from studykb.vault.derived import Snapshot

Similar = list[tuple[str, float, list[str]]]
VECTORS_ENTRY = "related-vectors"
#: Terms kept per document: its most distinctive ones.
TOP_TERMS = 200
#: Terms found in more than this share of documents (and in more than
#: :data:`MIN_DF_CAP`) say nothing. Half, not a fifth: a word on a third of a book's
#: pages still tells its chapters apart (fitted on the tuning collections, 0.2 -> 0.5
#: moved the objective 1.2274 -> 1.2354, ``benchmarks/RESULTS.md``, h/quality3); such
#: words never become reasons (:data:`studykb.related.reasons.DISTINCT_SHARE`)
#: nor look candidates up (:data:`MAX_POSTING`).
MAX_DF_SHARE = 0.5
MIN_DF_CAP = 8
#: A term shared by more documents than this (among their top terms) is skipped when
#: looking for candidates, which bounds the cost of one query.
MAX_POSTING = 400
#: Analyse texts in worker processes when at least this many changed.
PARALLEL_MIN = 1000
#: Terms compared to tell near-duplicates apart (diversity).
NEAR_TERMS = 20
#: Rebuild everything once this share of the documents was read incrementally.
DRIFT_MAX = 0.02
#: Longest Chinese word looked for when cutting against the known vocabulary.
MAX_WORD = 8


class TextSimilarity(Protocol):
    def similar(self, key: str, limit: int) -> Similar: ...


def _ints(data: bytes) -> array[int]:
    out = array("i")
    out.frombytes(data)
    return out


def _floats(data: bytes) -> array[float]:
    out = array("f")
    out.frombytes(data)
    return out


@dataclass
class TermVectors:
    """Top-term TF-IDF vectors of every document, who holds each term, and the vocabulary.

    Vectors and postings are packed (``array`` bytes: int32 numbers, float32 weights) so
    the cache loads in milliseconds; they are unpacked when first read.
    """

    keys: list[str] = field(default_factory=list)
    number: dict[str, int] = field(default_factory=dict)
    packed_vectors: list[tuple[bytes, bytes]] = field(default_factory=list)
    """Document -> (term numbers, weights), heaviest first; weights are unit length."""
    packed_postings: list[tuple[bytes, bytes]] = field(default_factory=list)
    """Term number -> (document numbers, weights)."""
    terms: list[str] = field(default_factory=list)
    """Term number -> the term as analysed."""
    forms: list[str] = field(default_factory=list)
    """Term number -> the word as first written (``decoding``, not the stem ``decod``)."""
    subjects: bytearray = field(default_factory=bytearray)
    """Term number -> 1 when a title or a topic name holds it: a word a reader knows as a
    subject, the only words text similarity gives as its reason."""
    files: dict[str, str] = field(default_factory=dict)
    """Path -> content digest of the files the vectors were made from."""
    fingerprint: str = ""
    protected: str = ""
    """The protected terms (digest) the texts were read with."""
    built: int = 0
    """Documents at the last full build."""
    drift: int = 0
    """Documents read incrementally since then."""
    avglen: float = 1.0
    """Mean number of terms of a document at the last full build (BM25's length norm)."""
    mentions: list[str] = field(default_factory=list)
    """Document number -> the other documents its text names (:mod:`.mentions`, packed)."""
    names: str = ""
    """Digest of every document's names the mentions were found with."""
    named: dict[str, int] = field(default_factory=dict)
    """Key -> how many documents' :attr:`mentions` name it (itself never counted;
    :func:`studykb.related.mentions.count_named`), kept in step with them."""
    made: str = ""
    """A token of the full build these vectors came from (a new one at each): while it
    is the same, only the documents read again since have other vectors or mentions."""

    def __post_init__(self) -> None:
        self._vectors: dict[int, dict[int, float]] = {}
        self._term_no: dict[str, int] | None = None
        self.touched: set[int] = set()
        """The documents (numbers) whose vector or mentions an update changed since its
        stamp was last made (:func:`studykb.related.vectorcache.stamp_after`)."""

    def to_data(self) -> dict[str, Any]:
        """Plain data for the cache (msgpack)."""
        return {
            "keys": "\0".join(self.keys),
            "vectors": self.packed_vectors,
            "postings": self.packed_postings,
            "terms": "\0".join(self.terms),
            "forms": "\0".join(self.forms),
            "subjects": bytes(self.subjects),
            "files": self.files,
            "fingerprint": self.fingerprint,
            "protected": self.protected,
            "built": self.built,
            "drift": self.drift,
            "avglen": self.avglen,
            "mentions": self.mentions,
            "named": ["\0".join(self.named), array("i", self.named.values()).tobytes()],
            "names": self.names,
            "made": self.made,
        }

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> TermVectors:
        keys = data["keys"].split("\0") if data["keys"] else []
        return cls(
            keys=keys,
            number={k: n for n, k in enumerate(keys) if not k.startswith("\0")},
            # each a [terms, weights] pair as stored: read by unpacking, never compared
            packed_vectors=list(data["vectors"]),
            packed_postings=list(data["postings"]),
            terms=data["terms"].split("\0") if data["terms"] else [],
            forms=data["forms"].split("\0") if data["forms"] else [],
            subjects=bytearray(data["subjects"]),
            files=dict(data["files"]),
            fingerprint=data["fingerprint"],
            protected=data["protected"],
            built=data["built"],
            drift=data["drift"],
            avglen=float(data["avglen"]),
            mentions=list(data["mentions"]),
            named=_named(data["named"]),
            names=data["names"],
            made=str(data["made"]),
        )

    # -- reading -----------------------------------------------------------------------------
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
        return frozenset(_ints(self.packed_vectors[n][0][: 4 * k]))

    def posting_size(self, term: int) -> int:
        return len(self.packed_postings[term][0]) // 4

    def form(self, term: int) -> str:
        return self.forms[term]

    def term_numbers(self) -> dict[str, int]:
        if self._term_no is None or len(self._term_no) != len(self.terms):
            self._term_no = {t: n for n, t in enumerate(self.terms)}
        return self._term_no

    def similar(self, key: str, limit: int = 20) -> Similar:
        n = self.number.get(key)
        if n is None:
            return []
        return self.similar_to(self.vector(n), limit, n)

    def similar_to(self, mine: dict[int, float], limit: int, skip: int = -1) -> Similar:
        """Documents closest to the vector ``mine`` (document ``skip`` left out), with
        the words they share that a reader would call a subject (heaviest first)."""
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
            shared = sorted(
                (t for t in mine if t in theirs), key=lambda t: (-mine[t] * theirs[t], t)
            )
            words = islice(
                (
                    self.form(t)
                    for t in shared
                    if t < len(self.subjects) and self.subjects[t] and subject(self.form(t))
                ),
                5,
            )
            out.append((self.keys[other], round(score, 4), list(words)))
        return out


def _named(data: list[Any]) -> dict[str, int]:
    """:attr:`TermVectors.named` from its stored form: the keys joined, their counts."""
    keys, counts = data
    names = keys.split("\0") if keys else []
    numbers = _ints(counts)
    if len(names) != len(numbers):
        raise ValueError("the mention counts do not match their keys")
    return dict(zip(names, numbers, strict=True))


_DIGITS = re.compile(r"\d")


@process.memo(maxsize=1 << 16)
def subject(word: str) -> bool:
    """Whether a reader would recognise ``word`` as a subject: not a stop word or filler
    of either language, not a number or mostly digits (``14.66``, ``32gb``, ``m5``),
    one Chinese character or two letters at least."""
    if is_filler(word) or len(word) < 2 or (word.isascii() and len(word) < 3):
        return False
    return len(_DIGITS.findall(word)) * 2 < len(word)


# -- weights ----------------------------------------------------------------------------------
def df_cap(size: int) -> float:
    """Documents a term may be held by and still say something (see :data:`MAX_DF_SHARE`)."""
    return max(MIN_DF_CAP, MAX_DF_SHARE * size)


#: BM25's term-frequency saturation and length normalisation.
K1 = 1.2
B = 0.75


def weigh(
    tf: Mapping[str, int],
    df: Callable[[str], int],
    size: int,
    stopped: frozenset[str] = frozenset(),
    avglen: float = 0.0,
) -> list[tuple[float, str]]:
    """A document's most distinctive terms, (unit-length weight, term), heaviest first.

    BM25 weights (a term's count saturates, a long document's counts weigh less, rare
    terms weigh more: ``avglen`` is the mean length of a document); stop words
    (``stopped``), numbers, one-character terms, terms no other document has and terms
    too many documents have are left out.
    """
    limit = df_cap(size)
    length = sum(tf.values())
    norm_len = K1 * (1 - B + B * length / avglen) if avglen > 0 else K1
    weights = []
    for term, count in tf.items():
        if len(term) < 2 or term.replace(".", "").isdigit() or term in stopped:
            continue
        d = df(term)
        if d > limit or d < 2:
            continue
        idf = math.log(1 + (size - d + 0.5) / (d + 0.5))
        weights.append((idf * count * (K1 + 1) / (count + norm_len), term))
    weights.sort(key=lambda wt: (-wt[0], wt[1]))
    top = weights[:TOP_TERMS]
    norm = math.sqrt(sum(w * w for w, _t in top)) or 1.0
    return [(w / norm, term) for w, term in top]


@process.memo(maxsize=4)
def stop_terms(analyser: Analyser) -> frozenset[str]:
    """Stop words and filler of both languages as index terms (English ones stemmed by
    ``analyser``)."""
    return frozenset(analyser.stem(w) for w in EN_STOP | EN_FILLER) | ZH_STOP | ZH_FILLER


# -- reading texts ----------------------------------------------------------------------------
Analysed = tuple[str, Counter[str], dict[str, str]]
"""(key, term counts, term -> first written form)."""


class Text(NamedTuple):
    """What is compared of one document."""

    path: str
    title: str
    text: str
    """Title, aliases, headings and body."""


def _texts(vault: Snapshot, keys: Iterable[str] | None = None) -> dict[str, Text]:
    """key -> its :class:`Text` (of every document, or of ``keys``)."""
    if keys is None:
        rows = [
            (key, path, title, json.loads(names or "[]"))
            for key, path, _id, title, _type, names, _url in vault.name_rows()
        ]
    else:
        rows = [
            (d.key, d.path, d.title, list(d.aliases))
            for d in vault.documents_for(list(keys)).values()
        ]
    bodies = vault.texts(None if keys is None else {path for _k, path, _t, _a in rows})
    return {
        key: Text(path, title, _joined(key, path, title, aliases, bodies))
        for key, path, title, aliases in rows
    }


def _joined(
    key: str, path: str, title: str, aliases: list[str], bodies: dict[str, tuple[str, list[str]]]
) -> str:
    """What is compared of a document: title, aliases, headings and body."""
    if "#" in key:  # a course unit: its title is all its text
        return "\n".join([title, *aliases])
    body, headings = bodies.get(path, ("", []))
    return "\n".join([title, *aliases, *headings, body])


def texts_in_chunks(
    vault: Snapshot, held: dict[str, str]
) -> tuple[list[str], int, Iterator[list[tuple[str, str]]]]:
    """Every document's (key, text), sorted by key, a chunk (:func:`chunk_size`) at a time
    read from the state as the chunks are taken (never every text at once): (the titles,
    how many documents, the chunks). Each text taken is also put in ``held`` (key ->
    text) until the caller pops it."""
    rows = sorted(
        (key, path, title, json.loads(names or "[]"))
        for key, path, _id, title, _type, names, _url in vault.name_rows()
    )
    size = chunk_size(len(rows))

    def chunks() -> Iterator[list[tuple[str, str]]]:
        for n in range(0, len(rows), size):
            part = rows[n : n + size]
            bodies = vault.texts({path for _k, path, _t, _a in part})
            out = [(k, _joined(k, p, t, a, bodies)) for k, p, t, a in part]
            held.update(out)
            yield out

    return [title for _k, _p, title, _a in rows], len(rows), chunks()


def _analyse_part(todo: list[tuple[str, str]], analyser: Analyser) -> list[Analysed]:
    """Term counts of texts, read as the search index reads them (rjieba for Chinese)."""
    return [analysed(analyser, key, text) for key, text in todo]


#: What the key of a *subject* begins with (a title or a topic's name, no document's
#: key): its terms are read as a query reads them (no pieces of long Chinese words).
SUBJECT = "\0subject:"


def analysed(analyser: Analyser, key: str, text: str) -> Analysed:
    """The term counts of one text; of a subject (:data:`SUBJECT`), its terms once each."""
    if key.startswith(SUBJECT):
        return key, Counter(dict.fromkeys(analyser.analyze(text), 1)), {}
    return (key, *analyser.term_counts(text))


def chunk_size(count: int) -> int:
    """Texts a worker analyses at a time, of ``count`` (about eight chunks a worker)."""
    return max(1, min(64, count // (min(cores(), 4) * 8)))


def analysed_chunks(
    chunks: Iterable[list[tuple[str, str]]], count: int, analyser: Analyser
) -> Iterator[Analysed]:
    """The term counts of texts given in key order, a chunk at a time (taken as the
    workers need them; ``count`` in all), one text at a time as they come (in fresh
    worker processes for many: cutting Chinese is the slow part), so that the caller
    keeps what it needs of each and lets its term counts go before the next."""
    workers = min(cores(), 4)
    if count < PARALLEL_MIN or workers < 2:
        for chunk in chunks:
            for item in chunk:
                yield from _analyse_part([item], analyser)
        return
    # deferred: the fresh workers' side, loaded only where they are used
    from studykb.related.analysis_workers import analysed_fresh

    yield from analysed_fresh(analyser, chunks, workers)


def analyse_known(
    text: str, known: dict[str, int], analyser: Analyser
) -> tuple[Counter[str], dict[str, str]]:
    """Term counts of ``text`` without the Chinese dictionary: English as ``analyser``
    reads it, Chinese cut by longest match against the ``known`` terms (the vocabulary)."""
    tf: Counter[str] = Counter()
    seen: dict[str, str] = {}
    for m in re.finditer(rf"([{HAN}]+)|\d+(?:[.,]\d+)+|[^\W{HAN}]+", text):
        run = m.group(1)
        if run is None:
            # deferred: loads Stemmer
            from studykb.text.analysis import STOP_WORDS

            word = m.group().lower()
            if word not in STOP_WORDS:
                term = analyser.stem(word)
                tf[term] += 1
                seen.setdefault(term, word)
            continue
        for word in _longest(run, known):
            tf[word] += 1
            seen.setdefault(word, word)
    return tf, seen


def _longest(run: str, known: dict[str, int]) -> Iterable[str]:
    """The known words of a Chinese run, longest first from the left (others skipped)."""
    i = 0
    while i < len(run):
        for size in range(min(MAX_WORD, len(run) - i), 1, -1):
            if run[i : i + size] in known:
                yield run[i : i + size]
                i += size
                break
        else:
            i += 1
