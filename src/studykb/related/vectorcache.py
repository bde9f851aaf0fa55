"""Keeping the text vectors of :mod:`studykb.related.textsim` in step with the vault.

They are a derived structure (:data:`VECTORS`, kept fresh by
:mod:`studykb.vault.derived`): after an edit the vectors of the edited documents only are
read again (:func:`update`), and everything is built again (:func:`build`) when the drift
passes its bound, or the protected terms or the documents' names changed (see the drift
paragraph of :mod:`studykb.related.textsim`).
"""

from __future__ import annotations

import hashlib
import json
import os
from array import array
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from studykb.related.labels import Labels, label_names, labels_after
from studykb.related.mentions import NameRow, Names, count_named
from studykb.related.mentions import pack as pack_mentions
from studykb.related.textsim import (
    DRIFT_MAX,
    SUBJECT,
    VECTORS_ENTRY,
    TermVectors,
    _floats,
    _ints,
    _texts,
    analyse_known,
    analysed_chunks,
    stop_terms,
    texts_in_chunks,
    weigh,
)
from studykb.vault.cache import pack, unpack_inner
from studykb.vault.topics import TOPICS

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from studykb.text.analysis import Analyser
    from studykb.vault.derived import Change, Snapshot
    from studykb.vault.state.rows import DocNames


@dataclass
class Terms:
    """How many documents hold each term, and the terms of the documents read since the
    last full build (of the others only the terms of their vectors are known)."""

    df: array[int] = field(default_factory=lambda: array("i"))
    """Term number -> documents holding it."""
    sets: dict[int, bytes] = field(default_factory=dict)
    """Document -> the numbers of all its terms (int32), for documents read incrementally."""

    def set_of(self, tv: TermVectors, n: int) -> bytes:
        """The terms document ``n`` was counted with: all of them when it was read
        incrementally, else those of its vector (the rest were no distinctive terms; their
        frequencies keep the count, a drift the bound covers)."""
        got = self.sets.get(n)
        return got if got is not None else tv.packed_vectors[n][0]


def name_table(vault: Snapshot, labels: Labels | None = None) -> Names:
    """Every document's names (id, title, aliases, and the labels other documents link
    to it with, :mod:`studykb.related.labels`), for finding unlinked mentions."""
    labels = label_names(vault) if labels is None else labels
    table = Names(_name_rows(vault.name_rows(), labels.names))
    table.labels = labels.to_data()
    return table


def _name_rows(rows: Iterable[DocNames], labels: dict[str, list[str]]) -> Iterator[NameRow]:
    for key, _path, doc_id, title, _type, names, _url in rows:
        yield key, doc_id, title, [*json.loads(names or "[]"), *labels.get(key, ())]


def _analyser(vault: Snapshot) -> tuple[list[str], Analyser]:
    """(the topic names, the topic table's analyser: its one-word names protected from
    the stemmer, as search reads them)."""
    topics = vault.derived(TOPICS)
    names = [n for text in topics.texts.values() for n in text.split("\n")]
    return names, topics.analyser()


# -- a full build ------------------------------------------------------------------------------
def build(vault: Snapshot, fingerprint: str) -> tuple[TermVectors, Terms]:
    """Vectors of every document, analysed afresh (Chinese cut by rjieba)."""
    tv, store, _names = _build(vault, fingerprint)
    return tv, store


def _build(vault: Snapshot, fingerprint: str) -> tuple[TermVectors, Terms, Names]:
    """The vectors, their terms and the name table, with what is held at once kept small:
    the name table made before the texts are read; each document's term counts, as its
    analysis comes back, kept as two arrays (term numbers, counts) and let go; the
    postings built in arrays."""
    names, analyser = _analyser(vault)
    table = name_table(vault).for_many()
    held: dict[str, str] = {}  # the texts taken and not yet analysed
    titles, count, chunks = texts_in_chunks(vault, held)
    tv = TermVectors(
        files=_files(vault),
        fingerprint=fingerprint,
        protected=analyser.digest,
        made=os.urandom(8).hex(),
    )
    store = Terms()
    term_no: dict[str, int] = {}
    counts: list[tuple[array[int], array[int]]] = []  # (term numbers, counts) of each
    length = 0
    subjects: set[str] = set()  # the terms of the titles and topic names
    asked = with_subjects(chunks, titles + names)
    for n, (key, tf, seen) in enumerate(analysed_chunks(asked, count, analyser)):
        if key.startswith(SUBJECT):  # after every document's
            subjects.update(tf)
            continue
        tv.mentions.append(pack_mentions(table.mentioned(key, held.pop(key))))
        tv.keys.append(key)
        tv.number[key] = n
        for term in tf:
            if term not in term_no:
                term_no[term] = len(tv.terms)
                tv.terms.append(term)
                tv.forms.append(seen.get(term, term).replace("\0", ""))
        counts.append((array("i", (term_no[t] for t in tf)), array("i", tf.values())))
        length += sum(tf.values())
    table.for_few()  # every text searched
    size = tv.built = len(counts)
    store.df = array("i", bytes(4 * len(tv.terms)))
    for numbers, _n in counts:
        for t in numbers:
            store.df[t] += 1
    postings = [(array("i"), array("f")) for _ in tv.terms]
    stopped = stop_terms(analyser)
    tv.avglen = length / max(1, size)
    terms = tv.terms
    for n, (numbers, times) in enumerate(counts):
        counted = dict(zip([terms[t] for t in numbers], times, strict=True))
        vector = weigh(counted, lambda t: store.df[term_no[t]], size, stopped, tv.avglen)
        kept = array("i", (term_no[t] for _w, t in vector))
        weights = array("f", (w for w, _t in vector))
        tv.packed_vectors.append((kept.tobytes(), weights.tobytes()))
        for t, w in zip(kept, weights, strict=True):
            postings[t][0].append(n)
            postings[t][1].append(w)
    del counts
    tv.packed_postings = [(d.tobytes(), w.tobytes()) for d, w in postings]
    del postings
    tv.subjects = bytearray(len(tv.terms))
    for term in subjects:
        got = term_no.get(term)
        if got is not None:
            tv.subjects[got] = 1
    tv.names = table.digest
    for key, packed in zip(tv.keys, tv.mentions, strict=True):
        count_named(tv.named, key, packed)
    return tv, store, table


def with_subjects(
    chunks: Iterable[list[tuple[str, str]]], subjects: list[str]
) -> Iterator[list[tuple[str, str]]]:
    """The chunks of texts, then the ``subjects`` (titles and topic names, :data:`SUBJECT`)
    in chunks of their own: the workers read their terms too, so that this process never
    loads the Chinese dictionary (a memory seam: rjieba's is about 27 MB)."""
    yield from chunks
    for n in range(0, len(subjects), 512):
        yield [(f"{SUBJECT}{n + k}", text) for k, text in enumerate(subjects[n : n + 512])]


def _mark_subjects(
    tv: TermVectors, names: list[str], term_no: dict[str, int], analyser: Analyser, known: bool
) -> None:
    """Mark the terms of titles and topic names as subjects (``known``: cut Chinese
    against the vocabulary instead of the dictionary)."""
    for name in names:
        words = analyse_known(name, term_no, analyser)[0] if known else analyser.analyze(name)
        for term in words:
            t = term_no.get(term)
            if t is not None:
                tv.subjects[t] = 1


def _files(vault: Snapshot) -> dict[str, str]:
    return {path: digest for path, _mtime, digest in vault.file_rows()}


# -- an update ----------------------------------------------------------------------------------
def update(
    tv: TermVectors,
    store: Terms,
    vault: Snapshot,
    fingerprint: str,
    files: dict[str, str] | None = None,
    names: Names | None = None,
    maybe: Iterable[str] | None = None,
) -> set[str] | None:
    """Read again only the documents of changed or new files (``files``: path -> digest
    of every file, when the caller has them): the keys read or removed, or None when a
    full build is due instead (see :mod:`studykb.related.textsim`). ``names``: the name
    table kept with the vectors, brought up to date here for the changed files only
    (without it every document's names are read). ``maybe``: every file that may have
    changed since the vectors were made (the others' digests are not read), when the
    caller knows them."""
    _names, analyser = _analyser(vault)
    if analyser.digest != tv.protected:
        return None
    if files is None and maybe is not None:  # only these may differ from tv.files
        now_hashes = vault.file_hashes(maybe)
        gone = {p for p in maybe if p not in now_hashes and p in tv.files}
        changed = sorted(p for p, digest in now_hashes.items() if tv.files.get(p) != digest)
        files = {p: d for p, d in {**tv.files, **now_hashes}.items() if p not in gone}
    else:
        files = files if files is not None else _files(vault)
        changed = sorted(p for p, digest in files.items() if tv.files.get(p) != digest)
        gone = tv.files.keys() - files.keys()
    now = set(vault.keys_in(changed))
    paths = set(changed)
    touched = paths | gone
    near = tuple(touched)  # a key is its file's path, or the path and "#" and more
    before = {k for k in tv.number if k.startswith(near) and k.split("#", 1)[0] in touched}
    kept = Labels.from_data(names.labels) if names is not None else None
    labels = labels_after(kept, vault, touched)
    if names is None:
        table = name_table(vault, labels)
    elif kept is None or labels.names != kept.names:  # a label became or stopped being a name
        return None
    else:
        table = names
        table.labels = labels.to_data()  # the files holding labelled links may differ
        rows = _name_rows(vault.name_rows(paths), labels.names)
        table.updated(rows, before)  # the documents of every document's file
    if table.digest != tv.names:  # others' texts may name the new names
        return None
    if tv.drift + len(now | before) > DRIFT_MAX * max(tv.built, 1):
        return None
    for key in sorted(before - now):
        _drop(tv, store, key)
    texts = _texts(vault, now)
    known = tv.term_numbers()
    stopped = stop_terms(analyser)
    for key in sorted(now):
        text = texts[key].text if key in texts else ""
        tf, seen = analyse_known(text, known, analyser)
        _replace(tv, store, key, tf, seen, stopped)
        n = tv.number[key]
        count_named(tv.named, key, tv.mentions[n], -1)
        tv.mentions[n] = pack_mentions(table.mentioned(key, text))
        count_named(tv.named, key, tv.mentions[n])
    _mark_subjects(tv, [t.title for t in texts.values()], tv.term_numbers(), analyser, known=True)
    tv.drift += len(now | before)
    tv.files, tv.fingerprint = files, fingerprint
    return now | before


def _drop(tv: TermVectors, store: Terms, key: str) -> None:
    """A removed document: out of the frequencies and postings (its number stays unused)."""
    n = tv.number.pop(key)
    tv.touched.add(n)
    for t in _ints(store.set_of(tv, n)):
        store.df[t] -= 1
    _unpost(tv, n)
    store.sets[n] = b""
    tv.packed_vectors[n] = (b"", b"")
    count_named(tv.named, key, tv.mentions[n], -1)
    tv.mentions[n] = ""
    tv._vectors.pop(n, None)  # noqa: SLF001 - its own unpacked copy
    tv.keys[n] = "\0" + key


def _replace(
    tv: TermVectors,
    store: Terms,
    key: str,
    tf: Counter[str],
    seen: dict[str, str],
    stopped: frozenset[str],
) -> None:
    """A changed or new document: new terms, frequencies, vector and postings."""
    n = tv.number.get(key)
    if n is None:
        n = tv.number[key] = len(tv.keys)
        tv.keys.append(key)
        store.sets[n] = b""
        tv.packed_vectors.append((b"", b""))
        tv.mentions.append("")
    tv.touched.add(n)
    known = tv.term_numbers()
    for t in _ints(store.set_of(tv, n)):
        store.df[t] -= 1
    for term in tf:
        if term not in known:
            known[term] = len(tv.terms)
            tv.terms.append(term)
            tv.forms.append(seen.get(term, term).replace("\0", ""))
            tv.packed_postings.append((b"", b""))
            tv.subjects.append(0)
            store.df.append(0)
        store.df[known[term]] += 1
    store.sets[n] = array("i", (known[t] for t in tf)).tobytes()
    _unpost(tv, n)
    vector = weigh(tf, lambda t: store.df[known[t]], len(tv.number), stopped, tv.avglen)
    numbers = array("i", (known[t] for _w, t in vector))
    weights = array("f", (w for w, _t in vector))
    tv.packed_vectors[n] = (numbers.tobytes(), weights.tobytes())
    tv._vectors.pop(n, None)  # noqa: SLF001
    for t, w in zip(numbers, weights, strict=True):
        docs, ws = tv.packed_postings[t]
        tv.packed_postings[t] = (docs + array("i", [n]).tobytes(), ws + array("f", [w]).tobytes())


def _unpost(tv: TermVectors, n: int) -> None:
    """Take document ``n`` out of the postings of the terms of its vector."""
    for t in _ints(tv.packed_vectors[n][0]):
        docs, ws = tv.packed_postings[t]
        try:
            k = _ints(docs).index(n)
        except ValueError:
            continue
        tv.packed_postings[t] = (docs[: 4 * k] + docs[4 * k + 4 :], ws[: 4 * k] + ws[4 * k + 4 :])


def _post(tv: TermVectors, n: int) -> None:
    terms, weights = tv.packed_vectors[n]
    for t, w in zip(_ints(terms), _floats(weights), strict=True):
        docs, ws = tv.packed_postings[t]
        tv.packed_postings[t] = (docs + array("i", [n]).tobytes(), ws + array("f", [w]).tobytes())


# -- the derived structure -------------------------------------------------------------------
class Vectors:
    """The text vectors and the term counts they are updated with, and every document's
    names, kept for the mentions of the documents read again (:attr:`names`)."""

    def __init__(self, tv: TermVectors, terms: Terms, names: Names | bytes) -> None:
        self.tv, self.terms = tv, terms
        self._names = names

    @property
    def names(self) -> Names:
        """The name table, decoded on first use: kept (:meth:`names_data`) as the cache
        entry's own packed bytes, which only an update reads (a speed seam: decoding it
        was about 0.02 s of every fresh ``related`` at 10k documents, of which one
        with nothing edited needs none). A ``ValueError`` when it is not one."""
        if isinstance(self._names, bytes):
            table = Names.from_data(unpack_inner(self._names))
            if table.digest != self.tv.names:
                raise ValueError("the name table is not the one the mentions were found with")
            self._names = table
        return self._names

    def names_data(self) -> bytes:
        """The name table packed for the cache (the bytes read, when never decoded)."""
        return self._names if isinstance(self._names, bytes) else pack(self._names.to_data())


def engine_digest(tv: TermVectors) -> str:
    """A digest of what the engine's matrices are made of in ``tv``: each document's
    vector and mentions, by its number, and the size of the vocabulary (the words and
    their written forms are read by reasons, from the vectors themselves). Each list goes
    in whole, with the length of each of its items, so that no two share one."""
    digest = hashlib.blake2b(digest_size=16)
    update = digest.update
    update(f"{len(tv.terms)}:{len(tv.keys)}".encode())
    mentions = tv.mentions + ["\3"] * (len(tv.keys) - len(tv.mentions))
    for strings in (tv.keys, mentions[: len(tv.keys)]):
        update(array("q", map(len, strings)).tobytes())
        update("".join(strings).encode())
    terms = [t for t, _w in tv.packed_vectors]
    weights = [w for _t, w in tv.packed_vectors]
    for rows in (terms, weights):
        update(array("q", map(len, rows)).tobytes())
        update(b"".join(rows))
    return digest.hexdigest()


def stamp_after(tv: TermVectors, before: str) -> str:
    """The stamp of ``tv`` just updated, made from its stamp ``before`` the update (a
    value's :func:`engine_digest`, or one made so) and what the update changed: the
    vectors and mentions of the documents read again or removed (:attr:`TermVectors.touched`;
    the update leaves every other document's as they were), each by its number, and the
    sizes of the lists. A speed seam of :mod:`studykb.vault.derived` (``stamp_after``):
    :func:`engine_digest` reads every document's, about 0.01 s at 10k after every edit."""
    touched, tv.touched = sorted(tv.touched), set()
    if not touched:
        return before
    digest = hashlib.blake2b(before.encode(), digest_size=16)
    update = digest.update
    update(f"{len(tv.terms)}:{len(tv.keys)}".encode())
    for n in touched:
        key = tv.keys[n]
        mentions = tv.mentions[n] if n < len(tv.mentions) else "\3"
        terms, weights = tv.packed_vectors[n]
        update(array("q", [n, len(key), len(mentions), len(terms), len(weights)]).tobytes())
        update((key + mentions).encode())
        update(terms + weights)
    return digest.hexdigest()


class VectorsSpec:
    """The text vectors as a derived structure (:mod:`studykb.vault.derived`): built from
    every document's text, updated after an edit for the documents of the changed files
    (declined past the drift bound, or when the protected terms or anybody's names
    changed)."""

    name = VECTORS_ENTRY
    made_by = (
        "studykb.related.textsim",
        "studykb.related.analysis_workers",
        "studykb.related.vectorcache",
        "studykb.related.mentions",
        "studykb.related.labels",
        "studykb.text",
    )
    inputs = (TOPICS,)

    def build(self, vault: Snapshot) -> Vectors:
        return Vectors(*_build(vault, vault.fingerprint()))

    def update(self, value: Vectors, change: Change, vault: Snapshot) -> Vectors | None:
        try:
            names = value.names
        except (ValueError, KeyError, TypeError, AttributeError):
            return None  # not a name table: everything is built again
        keys = update(
            value.tv,
            value.terms,
            vault,
            vault.fingerprint(),
            names=names,
            maybe=change.paths,
        )
        return None if keys is None else value

    def stamp(self, value: Vectors) -> str:
        value.tv.touched.clear()
        return engine_digest(value.tv)

    def stamp_after(self, value: Vectors, before: str) -> str:
        return stamp_after(value.tv, before)

    def dump(self, value: Vectors) -> dict[str, Any]:
        sets = {str(n): got for n, got in value.terms.sets.items()}
        return {
            **value.tv.to_data(),
            "df": value.terms.df.tobytes(),
            "sets": sets,
            "name_table": value.names_data(),
            "name_digest": value.tv.names,
        }

    def load(self, data: Any) -> Vectors:
        tv = TermVectors.from_data(data)
        df = _ints(data["df"])
        if len(df) != len(tv.terms):
            raise ValueError("term counts do not match the vocabulary")
        sets = {int(n): bytes(got) for n, got in data["sets"].items()}
        names = data["name_table"]
        if not isinstance(names, bytes) or data["name_digest"] != tv.names:
            raise ValueError("the name table is not the one the mentions were found with")
        return Vectors(tv, Terms(df=array("i", df), sets=sets), names)


VECTORS = VectorsSpec()
