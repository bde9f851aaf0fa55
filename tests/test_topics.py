"""Topics: counts, co-occurring topics, and the topic page."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import FIXTURES, run_json


@pytest.fixture
def rv(tmp_path: Path) -> Path:
    dest = tmp_path / "related_vault"
    shutil.copytree(FIXTURES / "related_vault", dest)
    return dest


def test_topics_count_covering_documents(rv: Path, run: Callable) -> None:
    code, data = run_json(run, "topics", vault=rv)
    assert code == 0
    by_id = {t["id"]: t for t in data["topics"]}
    # kv-cache: kv-blog, paged-paper, rare-reading, the course, kv-notes, serving-notes
    assert by_id["kv-cache"]["count"] == 6
    assert by_id["decoding"]["count"] == 0
    assert data["topics"][0]["id"] == "kv-cache"  # most covered first
    assert [t["count"] for t in data["topics"]] == sorted(
        (t["count"] for t in data["topics"]), reverse=True
    )


def test_related_topics_by_co_occurrence(rv: Path, run: Callable) -> None:
    _code, data = run_json(run, "topics", vault=rv)
    by_id = {t["id"]: t for t in data["topics"]}
    kv_related = by_id["kv-cache"]["related"]
    assert kv_related[0]["id"] == "pagedattention"
    assert kv_related[0]["together"] == 3  # paged-paper, the course, kv-notes
    assert by_id["ddp"]["related"] == []


def test_topic_page(rv: Path, run: Callable) -> None:
    code, page = run_json(run, "topic", "KV 缓存", vault=rv)  # by alias
    assert code == 0
    assert page["id"] == "kv-cache" and page["count"] == 6
    assert page["explanation"].startswith("Keys and values of earlier tokens")
    assert [(p["id"], p["note"]) for p in page["prerequisites"]] == [
        ("decoding", "the cache makes step-by-step decoding cheap"),
        ("attention", "it stores the keys and values attention reads"),
    ]
    assert [n["id"] for n in page["leads_to"]] == ["pagedattention"]
    levels = [(g["level"], [d["id"] for d in g["documents"]]) for g in page["levels"]]
    # "Covered by" is what teaches it (covers); what is only tagged with it is mentioned
    assert levels == [(2, ["kv-blog"]), (4, ["paged-paper"]), (None, ["rare-reading"])]
    mentioned = {n["id"] for n in page["mentions"]}
    assert {"kv-notes", "serving-notes", "serving"} <= mentioned
    assert page["related"][0]["id"] == "pagedattention"


def test_topic_page_text(rv: Path, run: Callable) -> None:
    result = run("topic", "kv-cache", vault=rv)
    assert result.exit_code == 0
    out = result.stdout
    assert out.startswith("KV Cache  6 documents")
    for part in (
        "Before this",
        "Leads to",
        "Covered by",
        "level 2:",
        "Related topics",
        "PagedAttention (3)",
    ):
        assert part in out


def test_topic_of_a_non_topic_fails_with_a_hint(rv: Path, run: Callable) -> None:
    result = run("topic", "kv-notes", vault=rv)
    assert result.exit_code == 1
    assert "not a topic" in result.stderr and "studykb topics" in result.stderr
    assert run("topic", "nothing-like-this", vault=rv).exit_code == 1


def test_hostile_topic_title_is_plain_text(rv: Path, run: Callable) -> None:
    result = run("topics", vault=rv)
    assert "Evil <b>topic</b> {{ .Site.Title }} | {% raw %}" in result.stdout
    code, page = run_json(run, "topic", "evil", vault=rv)
    assert code == 0 and page["count"] == 2


def test_topics_text_and_limit(rv: Path, run: Callable) -> None:
    result = run("topics", "--limit", "2", vault=rv)
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith("KV Cache")
