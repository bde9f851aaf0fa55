"""The text analysis in fresh interpreters (studykb.related.analysis_workers, over
studykb.runtime.pools.python_stream): the same counts as in this process, in order,
and a worker's failure reaches the caller."""

from __future__ import annotations

import pytest

from studykb.related import textsim, vectorcache
from studykb.related.analysis_workers import analysed_fresh
from studykb.runtime import pools
from studykb.text.analysis import Analyser
from studykb.text.terms import TECH_TERMS

TEXTS = [
    (f"k{n:03d}", f"Parsing graphs {n} with Dijkstra 算法 和 图论 的 最短路径 queries {n % 7}")
    for n in range(40)
] + [("k900", ""), ("k901", "The the of and"), ("k902", "机器学习 machine learning models")]


def _here(analyser: Analyser) -> list[tuple[str, dict[str, int], dict[str, str]]]:
    return [(k, dict(c), s) for k, c, s in textsim._analyse_part(sorted(TEXTS), analyser)]  # noqa: SLF001


def test_fresh_workers_count_as_this_process_in_order() -> None:
    analyser = Analyser(TECH_TERMS | {"dijkstra"})
    chunks = [sorted(TEXTS)[n : n + 3] for n in range(0, len(TEXTS), 3)]
    got = [(k, dict(c), s) for k, c, s in analysed_fresh(analyser, chunks, workers=2)]
    assert got == _here(analyser)
    assert [list(c) for _k, c, _s in got] == [list(c) for _k, c, _s in _here(analyser)]


def test_analysed_chunks_above_the_threshold_is_the_same(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """In fresh workers (many texts) or here (few), the same counts, in key order."""
    analyser = Analyser()
    todo = sorted(TEXTS)
    chunks = [todo[n : n + 4] for n in range(0, len(todo), 4)]
    below = list(textsim.analysed_chunks(chunks, len(todo), analyser))
    monkeypatch.setattr(textsim, "PARALLEL_MIN", 2)
    monkeypatch.setattr(textsim, "cores", lambda: 2)
    taken: list[int] = []

    def lazily():  # type: ignore[no-untyped-def]
        for n, chunk in enumerate(chunks):
            taken.append(n)
            yield chunk

    above = []
    for got in textsim.analysed_chunks(lazily(), len(todo), analyser):
        above.append(got)
        if len(above) == 1:  # the chunks are taken as the workers need them, not all
            assert len(taken) < len(chunks)
    assert above == below
    assert [k for k, _c, _s in above] == [k for k, _t in todo]


def test_a_worker_that_does_not_answer_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="before answering"):
        list(pools.python_stream("studykb.runtime.pools:cores", [], [[1], [2], [3]]))


def test_a_worker_that_fails_says_why() -> None:
    with pytest.raises(RuntimeError, match="ModuleNotFoundError"):
        list(pools.python_stream("studykb.no_such_module:main", [], [[1]]))


def test_no_frames_no_answers() -> None:
    assert list(pools.python_stream("studykb.related.analysis_workers:main", [], [])) == []


def test_subjects_are_read_as_queries_in_the_workers_and_here() -> None:
    """A subject's terms (a title or a topic name) are those of a query (no pieces of long
    Chinese words), once each, in the fresh workers as in this process; the texts
    before them are counted as texts."""
    analyser = Analyser(TECH_TERMS | {"dijkstra"})
    names = ["最短路径算法 and Dijkstra", "机器学习模型", "Graph graph theory", ""]
    chunks = [sorted(TEXTS)[:5], *vectorcache.with_subjects([], names)]
    got = [(k, dict(c)) for k, c, _s in analysed_fresh(analyser, chunks, workers=2)]
    here = [(k, dict(c)) for k, c, _s in textsim._analyse_part(chunks[0] + chunks[1], analyser)]  # noqa: SLF001
    assert got == here
    subjects = got[5:]
    assert [k for k, _c in subjects] == [f"{textsim.SUBJECT}{n}" for n in range(len(names))]
    for (_k, counts), name in zip(subjects, names, strict=True):
        assert counts == dict.fromkeys(analyser.analyze(name), 1)
    assert dict(got[:5]) == {k: dict(analyser.term_counts(t)[0]) for k, t in sorted(TEXTS)[:5]}
    assert subjects[0][1] and not subjects[-1][1]
