"""Search on the starter vault shipped in the repository (notes/, courses/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_json

WANTED = {
    "notes/entries/deepinfer-repo.md",
    "notes/entries/dflash2-qwen-drafter.md",
    "notes/topics/speculative-decoding.md",
}


@pytest.mark.parametrize("query", ["投机解码", "speculative decoding"])
def test_speculative_decoding_in_both_languages(run, bundled: Path, query: str) -> None:
    code, data = run_json(run, "search", query, "--limit", "15", vault=bundled)
    assert code == 0
    found = [h["path"] for h in data["hits"]]
    assert set(found) >= WANTED, found
    assert found[0] == "notes/topics/speculative-decoding.md"
    assert any("deepinfer-part" in p for p in found), found


def test_deepinfer_notes(run, bundled: Path) -> None:
    code, data = run_json(run, "search", "DeepInfer DSpark", vault=bundled)
    assert code == 0
    assert "notes/deepinfer-part2.md" in [h["path"] for h in data["hits"]][:3]


def test_filters_on_the_bundled_vault(run, bundled: Path) -> None:
    code, data = run_json(run, "search", "", "--course", "cs336", "--type", "unit", vault=bundled)
    assert code == 0 and data["hits"]
    assert all(h["type"] == "unit" and h["path"] == "courses/cs336.md" for h in data["hits"])


@pytest.mark.parametrize(
    "query",
    [
        "投机解码",
        "speculative decoding",
        "KV cache",
        "DeepInfer",
        "FSDP2 OR DDP",
        "(kernel OR 算子) AND GPU",
        "并行",
        '"tensor parallelism" OR 张量并行',
        "decod*",
    ],
)
def test_a_small_limit_gives_the_top_of_a_large_one(run, bundled: Path, query: str) -> None:
    _code, wide = run_json(run, "search", query, "--limit", "100", vault=bundled)
    scores = [h["score"] for h in wide["hits"]]
    for limit in (1, 2, 3, 5):
        _code, narrow = run_json(run, "search", query, "--limit", str(limit), vault=bundled)
        assert [h["score"] for h in narrow["hits"]] == scores[:limit], limit
