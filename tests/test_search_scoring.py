"""The scoring seam (studykb.search.scoring): BM25F with field lengths read from one list
per segment scores every document exactly as whoosh's own BM25F does over the live
documents (the deleted ones an edit leaves in a segment left out of the statistics)."""

from __future__ import annotations

from collections.abc import Callable
from math import log
from pathlib import Path

import pytest
from whoosh import index as windex
from whoosh.qparser import OrGroup, QueryParser
from whoosh.scoring import BM25F, BM25FScorer

from studykb.search import scoring
from studykb.search.index import FIELD_B, bind
from studykb.search.state import INDEX_NAME, index_dir
from studykb.vault import Vault

WORDS = ["tensor", "kernel", "memory", "cache", "pipeline", "gradient", "shard"]
WORDS += ["张量", "并行", "显存", "通信", "梯度"]


def _note(n: int) -> str:
    words = [WORDS[(n * k + 3) % len(WORDS)] for k in range(1, 4 + n % 9)]
    return f"---\ntitle: Note {n} {words[0]}\ntags: [{words[1]}]\n---\n\n" + " ".join(words) * (
        1 + n % 5
    )


def _scores(root: Path, weighting: object, queries: list[str]) -> list[list[tuple[int, float]]]:
    vault = Vault.open(root)
    ix = windex.open_dir(str(index_dir(vault)), indexname=INDEX_NAME)
    schema = bind(ix.schema, vault.topics().analyser())  # read back unbound: see schema.py
    parser = QueryParser("body", schema, group=OrGroup)
    with ix.searcher(weighting=weighting) as searcher:
        return [
            [(hit.docnum, hit.score) for hit in searcher.search(parser.parse(q), limit=None)]
            for q in queries
        ]


class _LivePlain(BM25F):
    """whoosh's BM25F over the live documents, each statistic counted the plain way: the
    reference BM25FTable must score as (deleted documents left out, lengths read one by
    one)."""

    def idf(self, searcher, fieldname, text):  # type: ignore[no-untyped-def]
        parent = searcher.get_parent()
        n = sum(
            len(list(r.postings(fieldname, text).all_ids()))
            for r, _b in parent.reader().leaf_readers()
            if (fieldname, text) in r
        )
        return log(parent.doc_count() / (n + 1)) + 1

    def scorer(self, searcher, fieldname, text, qf=1):  # type: ignore[no-untyped-def]
        scorer = super().scorer(searcher, fieldname, text, qf)
        if isinstance(scorer, BM25FScorer):
            parent = searcher.get_parent()
            reader = parent.reader()
            live = [d for d in range(reader.doc_count_all()) if not reader.is_deleted(d)]
            total = sum(reader.doc_field_length(d, fieldname, 0) for d in live)
            scorer.avgfl = total / len(live)
            scorer.setup(searcher, fieldname, text)
        return scorer


def test_lengths_from_a_list_score_as_whoosh_does(
    make_vault: Callable, run: Callable, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_vault({f"notes/n{n:02}.md": _note(n) for n in range(40)})
    assert run("build", vault=root).exit_code == 0
    # a second segment, with a deletion in the first
    (root / "notes/n07.md").write_text(_note(7) + " tensor tensor", encoding="utf-8")
    (root / "notes/extra.md").write_text("# Extra\n\nkernel cache 显存", encoding="utf-8")
    assert run("build", vault=root).exit_code == 0

    monkeypatch.setattr(scoring, "MANY", 1)  # every term reads its lengths from the list
    queries = ["tensor", "kernel cache", "gradient OR shard", "title:note", "张量 显存", "并行"]
    plain = _scores(root, _LivePlain(**FIELD_B), queries)
    listed = _scores(root, scoring.BM25FTable(**FIELD_B), queries)
    assert all(plain), plain  # every query finds something
    assert listed == plain


def test_a_segment_reader_gets_the_lengths_whoosh_stores(
    make_vault: Callable, run: Callable
) -> None:
    root = make_vault({f"notes/n{n:02}.md": _note(n) for n in range(12)})
    assert run("build", vault=root).exit_code == 0
    ix = windex.open_dir(str(index_dir(Vault.open(root))), indexname=INDEX_NAME)
    with ix.reader() as reader:
        segment = reader.leaf_readers()[0][0]
        lengths = scoring.field_lengths(segment, "body")
        assert lengths is not None and len(lengths) == segment.doc_count_all()
        assert lengths == [segment.doc_field_length(n, "body") for n in range(len(lengths))]
        assert scoring.field_lengths(segment, "no-such-field") is None
