"""Search ranks like a librarian: words together above scattered ones, topic names in the
other language, protected technical terms, and snippets that show what matched."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from conftest import run_json

FILLER = "Some unrelated words about cooking, gardening and travel plans for the weekend.\n"


def top(run: Callable, root: Path, query: str, *args: str) -> list[str]:
    code, data = run_json(run, "search", query, *args, vault=root)
    assert code in (0, 1), data
    return [h["id"] for h in data["hits"]]


def test_chinese_words_together_rank_above_scattered_ones(
    make_vault: Callable, run: Callable
) -> None:
    scattered = "数据很多。" + FILLER * 3 + "这里的并行指线程并行，和数据无关。" * 3
    root = make_vault(
        {
            "notes/scattered.md": f"# 线程笔记\n\n{scattered}",
            "notes/together.md": f"# 训练笔记\n\n{FILLER * 3}我们用数据并行训练模型。\n",
            "notes/other.md": f"# 其他\n\n{FILLER}",
        }
    )
    found = top(run, root, "数据并行")
    assert found[:2] == ["together", "scattered"]


def test_english_words_together_rank_above_scattered_ones(
    make_vault: Callable, run: Callable
) -> None:
    root = make_vault(
        {
            "notes/scattered.md": "# A\n\nThe kernel was slow. "
            + FILLER * 2
            + "Launch day had no overhead budget; the kernel again.\n",
            "notes/together.md": "# B\n\n" + FILLER * 2 + "CUDA graphs remove kernel launch "
            "overhead.\n",
        }
    )
    assert top(run, root, "kernel launch overhead")[0] == "together"


def test_a_note_with_every_word_ranks_above_one_repeating_a_word(
    make_vault: Callable, run: Callable
) -> None:
    root = make_vault(
        {
            "notes/repeats.md": "# Memory\n\n" + "memory memory memory. " * 20,
            "notes/both.md": "# Notes\n\nGPU memory is shared by the scheduler.\n" + FILLER,
        }
    )
    assert top(run, root, "memory scheduler")[0] == "both"


TOPICS = {
    "notes/topics/kernel-fusion.md": "---\ntitle: Kernel Fusion\naliases: [算子融合, "
    "operator fusion]\n---\n# Kernel Fusion\n\nFusing ops.\n",
    "notes/english.md": "# Fusion in compilers\n\nKernel fusion merges element-wise ops "
    "into one kernel.\n" + FILLER,
    "notes/chinese.md": "# 编译器笔记\n\n算子融合把多个算子合成一个 kernel。\n" + FILLER,
    "notes/unrelated.md": "# Unrelated\n\n" + FILLER,
}


def test_a_topic_named_in_chinese_finds_english_notes_a_little_below(
    make_vault: Callable, run: Callable
) -> None:
    root = make_vault(TOPICS)
    code, data = run_json(run, "search", "算子融合", vault=root)
    assert code == 0
    found = [h["id"] for h in data["hits"]]
    assert "english" in found and "unrelated" not in found
    assert found.index("chinese") < found.index("english")
    assert "Kernel Fusion" in data["also"] and "operator fusion" in data["also"]


def test_also_searched_is_shown(make_vault: Callable, run: Callable) -> None:
    root = make_vault(TOPICS)
    result = run("search", "operator fusion", vault=root)
    assert result.exit_code == 0
    assert result.stdout.splitlines()[0].startswith("also searched: 算子融合")
    exact = run_json(run, "search", "operator fusion", "--limit", "3", vault=root)[1]
    assert exact["hits"][0]["id"] == "kernel-fusion"  # its own name, first


def test_a_note_with_every_part_of_the_query_ranks_above_notes_with_one(
    make_vault: Callable, run: Callable
) -> None:
    root = make_vault(
        {
            **TOPICS,
            "notes/triton.md": "# Triton notes\n\nTriton makes kernel fusion easy.\n" + FILLER,
        }
    )
    found = top(run, root, "Triton 算子融合")
    assert found.index("triton") < min(found.index("english"), found.index("chinese"))
    assert found.index("triton") <= 1  # the topic page itself may come first


def test_transformer_is_not_transform(make_vault: Callable, run: Callable) -> None:
    root = make_vault(
        {
            "notes/augment.md": "# Augmentation\n\nRandom transforms: flip, crop; transform "
            "each image.\n",
            "notes/model.md": "# Models\n\nThe Transformers library and a decoder-only "
            "transformer.\n",
        }
    )
    assert top(run, root, "transformer") == ["model"]
    assert "augment" in top(run, root, "transform")
    assert top(run, root, "GPUs") == top(run, root, "gpu")


def test_one_word_topic_names_are_protected_and_follow_topic_edits(
    make_vault: Callable, run: Callable
) -> None:
    topic = "notes/topics/request-scheduler.md"  # its id is no one-word name
    root = make_vault(
        {
            topic: "---\ntitle: Scheduler\n---\n# Scheduler\n\nOrders requests in a batch.\n",
            "notes/calendar.md": "# Calendar\n\nMy schedule for the week, scheduled daily.\n",
            "notes/serving.md": "# Serving\n\nThe request scheduler of vLLM.\n",
        }
    )
    assert "calendar" not in top(run, root, "scheduler")
    (root / topic).write_text(
        "---\ntitle: Batching\n---\n# Batching\n\nOrders requests.\n", encoding="utf-8"
    )
    assert "calendar" in top(run, root, "scheduler")  # the calendar note was read again


def test_snippets_show_links_by_title_and_what_matched(make_vault: Callable, run: Callable) -> None:
    root = make_vault(
        {
            "notes/topics/kv-cache.md": "---\ntitle: KV Cache\n---\n# KV Cache\n\nKeys.\n",
            "notes/apple.md": "# Apple backend\n\n" + FILLER * 3 + "PyTorch runs on Apple "
            "silicon through MPS (Metal Performance Shaders).\n",
            "notes/nvidia.md": "# GPU sharing\n\n" + FILLER * 3 + "Several processes share one "
            "GPU with MPS, NVIDIA's Multi-Process Service.\n",
            "notes/serving.md": "# Serving\n\nPaged memory for the [[kv-cache]] of each request.\n",
        }
    )
    code, data = run_json(run, "search", "MPS", vault=root)
    snippets = {h["id"]: h["snippet"] for h in data["hits"]}
    assert "Metal Performance Shaders" in snippets["apple"]
    assert "Multi-Process Service" in snippets["nvidia"]
    for hit in data["hits"]:
        assert any(hit["snippet"][s:e] == "MPS" for s, e in hit["highlights"])
    serving = run_json(run, "search", "paged memory", vault=root)[1]["hits"][0]
    assert "KV Cache" in serving["snippet"] and "kv-cache" not in serving["snippet"]


def test_a_document_found_by_a_topic_it_is_about_says_so(
    make_vault: Callable, run: Callable
) -> None:
    root = make_vault(
        {
            "notes/topics/paged.md": "---\ntitle: PagedAttention\naliases: [paged KV cache]\n---\n"
            "# PagedAttention\n\nBlocks.\n",
            "notes/vllm.md": "---\ntags: [pagedattention]\n---\n# vLLM\n\nA serving engine.\n",
        }
    )
    hits = run_json(run, "search", "paged", vault=root)[1]["hits"]
    vllm = next(h for h in hits if h["id"] == "vllm")
    assert vllm["snippet"].startswith("about: PagedAttention (paged KV cache)")
