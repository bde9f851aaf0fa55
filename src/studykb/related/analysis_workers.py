"""The text analysis of many documents in fresh interpreters (:func:`analysed_fresh`).

A full build analyses every document's text at its end, when the parent holds the whole
parsed vault (at 50k documents, over a gigabyte). Workers forked from it would each map
all of that (their resident sets count it once more per worker, and what their
collections touch is copied), so they are fresh isolated interpreters instead
(:func:`studykb.runtime.pools.python_stream`): each is sent the analyser's protected
words once, then chunks of (key, text), and answers each chunk's term counts as plain
data, in order. The counts are the same as in this process (the same
:meth:`~studykb.text.analysis.Analyser.term_counts`, on the same words).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from studykb.runtime.pools import python_stream, serve_frames

if TYPE_CHECKING:
    from studykb.related.textsim import Analysed
    from studykb.text.analysis import Analyser


def analysed_fresh(
    analyser: Analyser, chunks: Iterable[list[tuple[str, str]]], workers: int
) -> Iterator[Analysed]:
    """(key, term counts, first written forms) of every text of ``chunks``, in order."""
    words = sorted(analyser.protected)
    for part in python_stream(f"{__name__}:main", words, chunks, workers):
        for key, counts, seen in part:
            yield key, Counter(counts), seen


def main() -> None:
    """A worker: the analyser from its protected words, then each chunk's counts."""
    serve_frames(_analyser, _counts)


def _analyser(words: list[str]) -> Analyser:
    # deferred: the worker loads the stemmer once it is started
    from studykb.text import segment
    from studykb.text.analysis import Analyser  # deferred: as above

    # a worker's cuts are never saved: holding them cost ~35 MB a 5,000 texts (the same
    # CPU, measured on the 10k bench vault)
    segment.segments().keep = False
    return Analyser(frozenset(words))


def _counts(analyser: Analyser, chunk: list[list[Any]]) -> list[list[Any]]:
    # deferred: as the analyser
    from studykb.related.textsim import analysed

    return [list(analysed(analyser, key, text)) for key, text in chunk]
