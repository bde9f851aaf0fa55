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
from studykb.text.analysis import Analyser
from studykb.text.analysis import fold_name as fold_name
from studykb.text.segment import HAN

if TYPE_CHECKING:
    from studykb.model import Document

_HAN_RUNS = re.compile(f"([{HAN}]+)")
_WORDS = re.compile(rf"[^\W{HAN}]+")


def terms(text: str, analyser: Analyser) -> Counter[str]:
    """How often each term occurs in ``text`` (in the order terms first occur); only its
    Chinese is read by ``analyser`` (cut, never stemmed)."""
    found: list[str] = []
    # split on Han runs: spaced text, a Han run, spaced text, ... (the words of the
    # spaced text found at once, not one match at a time: most of a vault's words)
    for n, part in enumerate(_HAN_RUNS.split(unicodedata.normalize("NFKC", text))):
        if n % 2:
            found.extend(t.text for t in analyser.tokens(part))
        elif part:
            found.extend(map(str.lower, _WORDS.findall(part)))
    return Counter(found)


def weights(doc: Document, body: str, named: list[str]) -> Counter[str]:
    analyser = Analyser()  # the browser's index stems nothing: any analyser cuts alike
    counts = terms(body, analyser)
    for text, weight in _names(doc, named):
        for term, n in terms(text, analyser).items():
            counts[term] += round(n * weight)
    return counts


def _names(doc: Document, named: list[str]) -> Iterable[tuple[str, float]]:
    """Texts weighted as the CLI's index weighs them (studykb.search.records)."""
    for name in (doc.title, *doc.aliases, doc.id):
        yield name, NAME_WEIGHT
    for name in (*dict.fromkeys((*doc.tags, *doc.covers)), *named):
        yield name, TAG_WEIGHT
