"""Keeping the text vectors of :mod:`studykb.related.textsim` in step with the vault.

:func:`load` answers from memory or the cache when nothing changed; after an edit it
updates the vectors of the edited documents only (:func:`update`), and builds everything
again (:func:`build`) when the drift passes its bound, documents were removed, or the
protected terms changed (see the drift paragraph of :mod:`studykb.related.textsim`).
"""

from __future__ import annotations

from array import array
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from studykb.related.mentions import Names
from studykb.related.mentions import pack as pack_mentions
from studykb.related.textsim import (
    DRIFT_MAX,
    VECTORS_ENTRY,
    TermVectors,
    _analyse,
    _floats,
    _ints,
    _texts,
    analyse_known,
    stop_terms,
    weigh,
)

if TYPE_CHECKING:
    from studykb.vault import Vault


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


def name_table(vault: Vault) -> Names:
    """Every document's names (id, title, aliases), for finding unlinked mentions."""
    import json

    return Names(
        (key, doc_id, title, json.loads(names or "[]"))
        for key, _path, doc_id, title, _type, names, _url in vault.store.name_rows()
    )


def _protect(vault: Vault) -> tuple[list[str], str]:
    """Protect the vault's one-word topic names from the stemmer, as search does; (the
    names, the digest of the protected set)."""
    from studykb.text import terms

    names = [n for text in vault.topics().texts.values() for n in text.split("\n")]
    terms.protect(names)
    return names, terms.digest()


# -- a full build ------------------------------------------------------------------------------
def build(vault: Vault, fingerprint: str) -> tuple[TermVectors, Terms]:
    """Vectors of every document, analysed afresh (Chinese cut by rjieba)."""
    names, protected = _protect(vault)
    texts = _texts(vault)
    analysed = sorted(_analyse([(k, t.text) for k, t in texts.items()], names))
    tv = TermVectors(
        files=_files(vault), fingerprint=fingerprint, protected=protected, built=len(analysed)
    )
    store = Terms()
    term_no: dict[str, int] = {}
    counts: list[Counter[str]] = []
    for n, (key, tf, seen) in enumerate(analysed):
        tv.keys.append(key)
        tv.number[key] = n
        for term in tf:
            if term not in term_no:
                term_no[term] = len(tv.terms)
                tv.terms.append(term)
                tv.forms.append(seen.get(term, term).replace("\0", ""))
        counts.append(tf)
    store.df = array("i", bytes(4 * len(tv.terms)))
    for tf in counts:
        for term in tf:
            store.df[term_no[term]] += 1
    tv.packed_postings = [(b"", b"")] * len(tv.terms)
    postings: list[tuple[list[int], list[float]]] = [([], []) for _ in tv.terms]
    stopped = stop_terms()
    size = len(analysed)
    tv.avglen = sum(sum(tf.values()) for tf in counts) / max(1, size)
    for n, tf in enumerate(counts):
        vector = weigh(tf, lambda t: store.df[term_no[t]], size, stopped, tv.avglen)
        numbers = array("i", (term_no[t] for _w, t in vector))
        weights = array("f", (w for w, _t in vector))
        tv.packed_vectors.append((numbers.tobytes(), weights.tobytes()))
        for t, w in zip(numbers, weights, strict=True):
            postings[t][0].append(n)
            postings[t][1].append(w)
    tv.packed_postings = [(array("i", d).tobytes(), array("f", w).tobytes()) for d, w in postings]
    tv.subjects = bytearray(len(tv.terms))
    _mark_subjects(tv, [t.title for t in texts.values()] + names, term_no, known=False)
    table = name_table(vault)
    tv.names = table.digest
    tv.mentions = [pack_mentions(table.mentioned(key, texts[key].text)) for key in tv.keys]
    return tv, store


def _mark_subjects(tv: TermVectors, names: list[str], term_no: dict[str, int], known: bool) -> None:
    """Mark the terms of titles and topic names as subjects (``known``: cut Chinese
    against the vocabulary instead of the dictionary)."""
    from studykb.text.analysis import analyze

    for name in names:
        words = analyse_known(name, term_no)[0] if known else analyze(name)
        for term in words:
            t = term_no.get(term)
            if t is not None:
                tv.subjects[t] = 1


def _files(vault: Vault) -> dict[str, str]:
    return {path: digest for path, _mtime, digest in vault.file_rows()}


# -- an update ----------------------------------------------------------------------------------
def update(
    tv: TermVectors,
    store: Terms,
    vault: Vault,
    fingerprint: str,
    files: dict[str, str] | None = None,
) -> set[str] | None:
    """Read again only the documents of changed or new files (``files``: path -> digest
    of every file, when the caller has them): the keys read or removed, or None when a
    full build is due instead (see :mod:`studykb.related.textsim`)."""
    _names, protected = _protect(vault)
    files = files if files is not None else _files(vault)
    if protected != tv.protected:
        return None
    table = name_table(vault)
    if table.digest != tv.names:  # others' texts may name the new names
        return None
    changed = sorted(p for p, digest in files.items() if tv.files.get(p) != digest)
    now = set(vault.store.keys_in(changed))
    paths = set(changed)
    gone = tv.files.keys() - files.keys()
    before = {k for k in tv.number if k.split("#", 1)[0] in paths | gone}
    if tv.drift + len(now | before) > DRIFT_MAX * max(tv.built, 1):
        return None
    for key in sorted(before - now):
        _drop(tv, store, key)
    texts = _texts(vault, now)
    known = tv.term_numbers()
    stopped = stop_terms()
    for key in sorted(now):
        text = texts[key].text if key in texts else ""
        tf, seen = analyse_known(text, known)
        _replace(tv, store, key, tf, seen, stopped)
        tv.mentions[tv.number[key]] = pack_mentions(table.mentioned(key, text))
    _mark_subjects(tv, [t.title for t in texts.values()], tv.term_numbers(), known=True)
    tv.drift += len(now | before)
    tv.files, tv.fingerprint = files, fingerprint
    return now | before


def _drop(tv: TermVectors, store: Terms, key: str) -> None:
    """A removed document: out of the frequencies and postings (its number stays unused)."""
    n = tv.number.pop(key)
    for t in _ints(store.set_of(tv, n)):
        store.df[t] -= 1
    _unpost(tv, n)
    store.sets[n] = b""
    tv.packed_vectors[n] = (b"", b"")
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


# -- the journal of updates ---------------------------------------------------------------------
JOURNAL_ENTRY = "related-journal"
#: Documents an update journal may hold before the whole vectors are written again.
JOURNAL_MAX = 64


@dataclass
class Journal:
    """What the updates since the vectors were last written whole changed. The cache keeps
    it apart and small, so an edit writes kilobytes, not the megabytes of every vector."""

    base: str = ""
    """Fingerprint of the written vectors it applies to."""
    fingerprint: str = ""
    files: dict[str, str] = field(default_factory=dict)
    """Digests of the files changed since (a removed file: "")."""
    docs: dict[str, list[bytes]] = field(default_factory=dict)
    """Key -> [vector terms, vector weights, all its terms]; [] for a removed document."""
    terms: list[str] = field(default_factory=list)
    forms: list[str] = field(default_factory=list)
    """Terms added to the vocabulary since, with their written forms."""
    subjects: list[int] = field(default_factory=list)
    df: dict[int, int] = field(default_factory=dict)
    """Changes of document frequency since."""
    drift: int = 0

    def to_data(self) -> dict[str, Any]:
        return {
            "base": self.base,
            "fingerprint": self.fingerprint,
            "files": self.files,
            "docs": self.docs,
            "terms": self.terms,
            "forms": self.forms,
            "subjects": self.subjects,
            "df": self.df,
            "drift": self.drift,
        }

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Journal:
        return cls(
            **{
                k: data[k]
                for k in (
                    "base",
                    "fingerprint",
                    "files",
                    "docs",
                    "terms",
                    "forms",
                    "subjects",
                    "df",
                    "drift",
                )
            }
        )


@dataclass(frozen=True)
class Base:
    """The written vectors, as an update journal counts from them."""

    vocabulary: int
    subjects: bytes
    files: dict[str, str]

    @classmethod
    def of(cls, tv: TermVectors) -> Base:
        return cls(len(tv.terms), bytes(tv.subjects), dict(tv.files))


def replay(tv: TermVectors, journal: Journal) -> None:
    """Bring written vectors to the journal's state."""
    for term, form in zip(journal.terms, journal.forms, strict=True):
        tv.terms.append(term)
        tv.forms.append(form)
        tv.subjects.append(0)
        tv.packed_postings.append((b"", b""))
    for t in journal.subjects:
        tv.subjects[t] = 1
    for key, parts in journal.docs.items():
        n = tv.number.get(key)
        if n is not None:
            _unpost(tv, n)
        if not parts:
            if n is not None:
                del tv.number[key]
                tv.packed_vectors[n] = (b"", b"")
                tv.mentions[n] = ""
                tv.keys[n] = "\0" + key
            continue
        if n is None:
            n = tv.number[key] = len(tv.keys)
            tv.keys.append(key)
            tv.packed_vectors.append((b"", b""))
            tv.mentions.append("")
        tv.packed_vectors[n] = (parts[0], parts[1])
        tv.mentions[n] = parts[3].decode() if len(parts) > 3 else ""
        _post(tv, n)
    for path, digest in journal.files.items():
        if digest:
            tv.files[path] = digest
        else:
            tv.files.pop(path, None)
    tv.fingerprint, tv.drift = journal.fingerprint, journal.drift
    tv._vectors.clear()  # noqa: SLF001 - its own unpacked copies


def replay_terms(store: Terms, journal: Journal, tv: TermVectors) -> None:
    """Bring the written frequencies to the journal's state (``tv`` already replayed)."""
    store.df.extend([0] * (len(tv.terms) - len(store.df)))
    for t, delta in journal.df.items():
        store.df[t] += delta
    for key, parts in journal.docs.items():
        n = tv.number.get(key)
        if parts and n is not None:
            store.sets[n] = parts[2]


def _post(tv: TermVectors, n: int) -> None:
    terms, weights = tv.packed_vectors[n]
    for t, w in zip(_ints(terms), _floats(weights), strict=True):
        docs, ws = tv.packed_postings[t]
        tv.packed_postings[t] = (docs + array("i", [n]).tobytes(), ws + array("f", [w]).tobytes())


def record(
    journal: Journal,
    tv: TermVectors,
    store: Terms,
    base: Base,
    written_df: array[int],
    keys: set[str],
) -> None:
    """Add what an update changed (the documents ``keys``) to ``journal``."""
    for key in keys:
        n = tv.number.get(key)
        journal.docs[key] = (
            []
            if n is None
            else [*tv.packed_vectors[n], store.set_of(tv, n), tv.mentions[n].encode()]
        )
    journal.terms, journal.forms = tv.terms[base.vocabulary :], tv.forms[base.vocabulary :]
    journal.subjects = [
        t
        for t, on in enumerate(tv.subjects)
        if on and (t >= len(base.subjects) or not base.subjects[t])
    ]
    journal.df = {
        t: d - (written_df[t] if t < len(written_df) else 0)
        for t, d in enumerate(store.df)
        if d != (written_df[t] if t < len(written_df) else 0)
    }
    journal.files = {p: d for p, d in tv.files.items() if base.files.get(p) != d}
    journal.files.update({p: "" for p in base.files if p not in tv.files})
    journal.fingerprint, journal.drift = tv.fingerprint, tv.drift


# -- loading ---------------------------------------------------------------------------------------
_MEMO: dict[str, TermVectors] = {}


def load(vault: Vault, fingerprint: str, files: dict[str, str] | None = None) -> TermVectors:
    """The vectors for the vault state ``fingerprint``: from memory, or the cache and its
    journal, updated for the files that changed since, or built (``files``: path ->
    digest of every file, when the caller has them)."""
    from studykb.vault.cache import key as cache_key

    root = str(vault.root)
    tv = _MEMO.get(root)
    if tv is not None and tv.fingerprint == fingerprint:
        return tv
    data = vault.cache.get(VECTORS_ENTRY, cache_key(VECTORS_ENTRY))
    tv = TermVectors.from_data(data) if isinstance(data, dict) else None
    if tv is not None and isinstance(data, dict):
        base = Base.of(tv)
        written_df = _ints(data.get("df", b""))
        stored = vault.cache.get(JOURNAL_ENTRY, cache_key(JOURNAL_ENTRY))
        journal = Journal.from_data(stored) if isinstance(stored, dict) else None
        if journal is None or journal.base != tv.fingerprint:
            journal = Journal(base=tv.fingerprint, fingerprint=tv.fingerprint, drift=tv.drift)
        replay(tv, journal)
        if tv.fingerprint != fingerprint and not _updated(
            vault, tv, journal, base, written_df, fingerprint, files
        ):
            tv = None
    if tv is None:
        tv, store = build(vault, fingerprint)
        _write(vault, tv, store)
    _MEMO[root] = tv
    return tv


def _updated(
    vault: Vault,
    tv: TermVectors,
    journal: Journal,
    base: Base,
    written_df: array[int],
    fingerprint: str,
    files: dict[str, str] | None,
) -> bool:
    """Update ``tv`` for what changed and keep it (the journal, or everything once the
    journal is full); False when it must be built again."""
    from studykb.vault.cache import key as cache_key

    if len(written_df) != base.vocabulary:
        return False
    store = Terms(df=array("i", written_df))
    replay_terms(store, journal, tv)
    keys = update(tv, store, vault, fingerprint, files)
    if keys is None:
        return False
    record(journal, tv, store, base, written_df, keys)
    if len(journal.docs) > JOURNAL_MAX:
        _write(vault, tv, store)
    else:
        vault.cache.put(JOURNAL_ENTRY, cache_key(JOURNAL_ENTRY), journal.to_data())
    return True


def _write(vault: Vault, tv: TermVectors, store: Terms) -> None:
    """Keep the vectors and the document frequencies whole (an empty journal follows)."""
    from studykb.vault.cache import key as cache_key

    vault.cache.put(
        VECTORS_ENTRY, cache_key(VECTORS_ENTRY), {**tv.to_data(), "df": store.df.tobytes()}
    )
    vault.cache.put(
        JOURNAL_ENTRY,
        cache_key(JOURNAL_ENTRY),
        Journal(base=tv.fingerprint, fingerprint=tv.fingerprint, drift=tv.drift).to_data(),
    )


def forget(vault: Vault | None = None) -> None:
    """Drop the vectors kept in memory (all of them without ``vault``)."""
    if vault is None:
        _MEMO.clear()
    else:
        _MEMO.pop(str(vault.root), None)


def terms(vault: Vault) -> Terms | None:
    """The document frequencies of the vectors in use (for evaluation: after :func:`load`)."""
    from studykb.vault.cache import key as cache_key

    tv = _MEMO.get(str(vault.root))
    data = vault.cache.get(VECTORS_ENTRY, cache_key(VECTORS_ENTRY))
    if tv is None or not isinstance(data, dict):
        return None
    store = Terms(df=_ints(data.get("df", b"")))
    stored = vault.cache.get(JOURNAL_ENTRY, cache_key(JOURNAL_ENTRY))
    if isinstance(stored, dict):
        replay_terms(store, Journal.from_data(stored), tv)
    return store
