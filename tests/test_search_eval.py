"""The judged queries of benchmarks/eval/search_judged.json on the bundled vault: search
must reach MRR 0.8 and stay ahead of a plain BM25 baseline run on the same documents."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_judged_queries_beat_plain_bm25(bundled: Path) -> None:
    sys.path.insert(0, str(REPO / "benchmarks"))
    import eval_search

    from studykb.search import index
    from studykb.vault import Vault

    judged = eval_search.load_judged(eval_search.JUDGED)
    assert len(judged) >= 40
    assert sum(q.lang == "zh" for q in judged) * 2 >= len(judged)
    vault = Vault.open(bundled)
    try:
        vault.refresh()
        index.sync(vault, quiet=True)
        ours, _ = eval_search.evaluate("studykb", eval_search.studykb_ranker(vault), judged)
        base, _ = eval_search.evaluate(
            "bm25", eval_search.PlainBM25(eval_search.baseline_texts(vault)), judged
        )
    finally:
        index.close(vault)
        vault.close()
    mine, theirs = ours[0], base[0]  # the "all" rows
    assert mine.mrr >= eval_search.GOAL_MRR
    assert mine.mrr > theirs.mrr and mine.ndcg5 > theirs.ndcg5
