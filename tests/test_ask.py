"""``ask`` reads English and Chinese questions by their parts (what is asked, reading
verbs and small words set aside, a target) and runs the plan command they ask for."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from studykb.cli.app import cli, prepare
from studykb.errors import UsageError
from studykb.study.ask import Question, parse

prepare()
FIXTURE = Path(__file__).parent / "fixtures" / "plans_vault"

ENGLISH = [
    ("what should I read before FSDP2", "before", "FSDP2"),
    ("What should I learn before flash attention?", "before", "flash attention"),
    ("what do I need to read before FSDP2", "before", "FSDP2"),
    ("What do I need to know before KV cache?", "before", "KV cache"),
    ("which papers should I read before speculative decoding", "before", "speculative decoding"),
    ("prerequisites of KV cache", "before", "KV cache"),
    ("what are the prerequisites for FSDP2?", "before", "FSDP2"),
    ("FSDP2 prerequisites", "before", "FSDP2"),
    ("prereqs for tensor parallelism", "before", "tensor parallelism"),
    ("what does FSDP2 require", "before", "FSDP2"),
    ("what does FlashAttention depend on?", "before", "FlashAttention"),
    ("what is needed for pipeline parallelism", "before", "pipeline parallelism"),
    ("how do I learn FSDP2", "before", "FSDP2"),
    ("how should I study speculative decoding?", "before", "speculative decoding"),
    ("I want to learn PagedAttention", "before", "PagedAttention"),
    ("I'd like to understand FlashAttention", "before", "FlashAttention"),
    ("what should I read to understand FSDP2", "before", "FSDP2"),
    ("what do I need to understand tensor parallelism", "before", "tensor parallelism"),
    ("how do I prepare for FSDP2", "before", "FSDP2"),
    ("what background do I need for KV cache", "before", "KV cache"),
    ('Before reading "FlashAttention", what should I know?', "before", "FlashAttention"),
    ("what comes before FSDP2", "before", "FSDP2"),
    ("what to read prior to FSDP2", "before", "FSDP2"),
    ("reading plan for FSDP2", "before", "FSDP2"),
    ("study path to KV cache", "before", "KV cache"),
    ("what next", "next", None),
    ("what should I read next", "next", None),
    ("What should I learn next?", "next", None),
    ("what's next for FSDP2", "next", "FSDP2"),
    ("what can I read now", "next", None),
    ("what should I study now?", "next", None),
    ("what am I ready to read", "next", None),
    ("next steps toward FSDP2", "next", "FSDP2"),
    ("related to KV cache", "related", "KV cache"),
    ("what is related to FSDP2?", "related", "FSDP2"),
    ("anything similar to FlashAttention", "related", "FlashAttention"),
    ("more on speculative decoding", "related", "speculative decoding"),
    ("what goes with tensor parallelism", "related", "tensor parallelism"),
    ("how am I doing?", "status", None),
    ("show my progress", "status", None),
    ("what have I finished", "status", None),
    ("what am I reading", "status", None),
    ("where am I", "status", None),
    ("what should I read now, before FSDP2", "before", "FSDP2"),
]

CHINESE = [
    ("FSDP2 之前应该读什么", "before", "FSDP2"),
    ("学 FSDP2 之前要先看什么？", "before", "FSDP2"),
    ("在学 FSDP2 之前要读什么", "before", "FSDP2"),
    ("学习投机解码需要先看什么", "before", "投机解码"),
    ("FSDP2 的前置知识", "before", "FSDP2"),
    ("FSDP2 的前置知识是什么", "before", "FSDP2"),
    ("FSDP2有哪些前置要求", "before", "FSDP2"),
    ("学 KV cache 前要读什么", "before", "KV cache"),
    ("读 FlashAttention 之前需要了解什么", "before", "FlashAttention"),
    ("想学张量并行，先看什么？", "before", "张量并行"),
    ("要看懂 PagedAttention 需要先学什么", "before", "PagedAttention"),
    ("投机解码的先修知识有哪些", "before", "投机解码"),
    ("学习流水线并行以前应该读哪些", "before", "流水线并行"),
    ("FSDP2 需要什么基础知识", "before", "FSDP2"),
    ("怎么入门 FSDP2？", "before", "FSDP2"),
    ("如何学习投机解码", "before", "投机解码"),
    ("我想学 KV cache", "before", "KV cache"),
    ("请问学 FSDP2 前应该先读哪些文章", "before", "FSDP2"),
    ("理解 FlashAttention 要先掌握什么", "before", "FlashAttention"),
    ("看《FlashAttention》之前要读什么", "before", "FlashAttention"),
    ("FSDP2 之前", "before", "FSDP2"),
    ("下一步读什么", "next", None),
    ("下一步学什么？", "next", None),
    ("接下来应该看什么", "next", None),
    ("我接下来读什么", "next", None),
    ("现在可以读什么", "next", None),
    ("FSDP2 下一步读什么", "next", "FSDP2"),
    ("下一篇读哪篇", "next", None),
    ("然后学什么", "next", None),
    ("和 KV cache 相关的内容", "related", "KV cache"),
    ("跟 FSDP2 有关的文章", "related", "FSDP2"),
    ("与投机解码类似的内容有哪些", "related", "投机解码"),
    ("FlashAttention 相关笔记", "related", "FlashAttention"),
    ("张量并行的相关阅读", "related", "张量并行"),
    ("我的学习进度", "status", None),
    ("学习进度", "status", None),
    ("我学到哪了", "status", None),
    ("我现在在读什么", "status", None),
    ("我学了多少", "status", None),
    ("看看我的进度", "status", None),
    ("我完成了哪些", "status", None),
    ("现在学 FSDP2 之前要读什么", "before", "FSDP2"),
]


def test_forty_phrasings_in_each_language() -> None:
    assert len(ENGLISH) >= 40 and len(CHINESE) >= 40


@pytest.mark.parametrize(("question", "command", "target"), ENGLISH + CHINESE)
def test_phrasings(question: str, command: str, target: str | None) -> None:
    assert parse(question) == Question(command, target)


@pytest.mark.parametrize(
    "question", ["tell me a joke", "what is the meaning", "FSDP2", "今天天气怎么样", "hello"]
)
def test_what_is_not_a_question_about_reading_is_refused_with_examples(question: str) -> None:
    with pytest.raises(UsageError) as info:
        parse(question)
    assert "what should I read before FSDP2" in str(info.value)
    assert "我的学习进度" in str(info.value)


@pytest.mark.parametrize("question", ["what should I read before", "之前要读什么", "related to"])
def test_a_plan_or_related_question_needs_a_target(question: str) -> None:
    with pytest.raises(UsageError, match="which document"):
        parse(question)


def test_a_target_is_the_name_that_resolves() -> None:
    names = {"learn the basics", "深度学习", "getting started with fsdp2"}

    def resolves(name: str) -> bool:
        return name.casefold() in names

    # the small words inside a name are kept when the whole name resolves
    assert (
        parse("what should I read before Learn the Basics", resolves).target == "Learn the Basics"
    )
    # a Chinese name that starts with a verb (学) is found in the question as written
    assert parse("深度学习之前要读什么", resolves).target == "深度学习"
    assert (
        parse("prerequisites for getting started with FSDP2", resolves).target
        == "getting started with FSDP2"
    )
    # nothing resolves: the leftover is the target (the command then suggests names)
    assert parse("what should I read before Foo Bar", resolves).target == "Foo Bar"


def _run(vault: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--vault", str(vault), *args])
    return result.exit_code, result.output


def test_ask_runs_the_plan_status_and_refuses_nonsense(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    shutil.copytree(FIXTURE, vault)
    code, out = _run(vault, "ask", "在学 目标 之前要读什么", "--json")
    assert code == 0, out
    assert [s["id"] for s in json.loads(out)["steps"]] == ["t-a", "t-e", "t-b", "t-d"]
    code, out = _run(vault, "ask", "学习", "Romeo tutorial", "需要先看什么", "--json")
    assert code == 0, out
    assert json.loads(out)["target"]["id"] == "r-focused"
    code, out = _run(vault, "ask", "我的学习进度", "--json")
    assert code == 0, out
    assert [d["id"] for d in json.loads(out)["reading"]] == ["c#u2"]
    code, out = _run(vault, "ask", "what", "is", "the", "meaning")
    assert code == 2
