"""The terms and weights of the static site's search index, as the command line's
index weighs them (:mod:`studykb.search.records`), so the page in a browser ranks as
``studykb search`` does.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING

from studykb.search.records import NAME_WEIGHT, TAG_WEIGHT
from studykb.text.analysis import fold_name as fold_name
from studykb.text.segment import HAN, SEGMENTS_ENTRY, Segments, stamp

if TYPE_CHECKING:
    from studykb.model import Document
    from studykb.text.segment import Store

_HAN_RUNS = re.compile(f"([{HAN}]+)")
#: The words of spaced text: the text between two Han runs holds no Han character, so
#: ``\w+`` finds there what ``[^\W{HAN}]+`` finds, a third faster.
_WORDS = re.compile(r"\w+")


class HanTerms:
    """The terms of each run of Han characters, as :meth:`studykb.text.analysis.Analyser.
    tokens` gives them (each word rjieba cuts, then the shorter words inside it), cut
    once for every text one index reads (the cutting seam of :func:`weights`: the same
    run in many notes, or in a title and its body, is cut once)."""

    def __init__(self) -> None:
        self.segments = Segments()
        self.segments.keep = False  # what is cut here is held below, flat
        self.runs: dict[str, tuple[str, ...]] = {}

    def of(self, run: str) -> tuple[str, ...]:
        found = self.runs.get(run)
        if found is None:
            cut = self.segments.cut(run)
            found = self.runs[run] = tuple(t for word, inner in cut for t in (word, *inner))
        return found


class RememberedTerms(HanTerms):
    """:class:`HanTerms` that take a run's cut first from those the search index's
    incremental updates keep in the vault's cache (:class:`studykb.text.segment.Segments`,
    read only when a run is missing), and keep there what they cut (:meth:`save`): an
    update of a few documents that brings no new Chinese never loads rjieba's dictionary
    (about 0.13 s of CPU). For a few documents only: what is cut is also held to save."""

    def __init__(self, cache: Store) -> None:
        super().__init__()
        self.cache, self.entry = cache, segments_entry()
        self.segments.keep = True
        self.segments.load(cache, self.entry)

    def save(self) -> None:
        """Keep the runs cut here (the newest :data:`studykb.text.segment.SEGMENTS_MAX`)."""
        self.segments.save(self.cache, self.entry)


def segments_entry() -> str:
    """The cache key of the remembered Chinese cuts: this analysis code, this rjieba."""
    # deferred: the cache's key, for an update only
    from studykb.vault.cache import key

    return key(SEGMENTS_ENTRY, *stamp())


def terms(text: str, han: HanTerms) -> Counter[str]:
    """How often each term occurs in ``text`` (in the order terms first occur); only its
    Chinese is cut (never stemmed), by ``han``."""
    found: list[str] = []
    # split on Han runs: spaced text, a Han run, spaced text, ... (the words of the
    # spaced text found at once, not one match at a time: most of a vault's words)
    for n, part in enumerate(_HAN_RUNS.split(unicodedata.normalize("NFKC", text))):
        if n % 2:
            found.extend(han.of(part))
        elif part:
            found.extend(map(str.lower, _WORDS.findall(part)))
    return Counter(found)


def weights(
    doc: Document, body: str, named: list[str], han: HanTerms | None = None
) -> Counter[str]:
    """The terms of ``doc`` with their weights; ``han``: the cuts of the index made (one
    for every document of an index; a new one without)."""
    han = HanTerms() if han is None else han
    counts = terms(body, han)
    for text, weight in _names(doc, named):
        for term, n in terms(text, han).items():
            counts[term] += round(n * weight)
    return counts


def _names(doc: Document, named: list[str]) -> Iterable[tuple[str, float]]:
    """Texts weighted as the CLI's index weighs them (studykb.search.records)."""
    for name in (doc.title, *doc.aliases, doc.id):
        yield name, NAME_WEIGHT
    for name in (*dict.fromkeys((*doc.tags, *doc.covers)), *named):
        yield name, TAG_WEIGHT
