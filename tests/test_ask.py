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


# -- issue 26: the answer each phrasing must give, direction included ----------------------
#: Names a small vault answers to (what the resolver says is a document).
NAMES = frozenset(
    n.casefold()
    for n in (
        "FSDP2",
        "DDP",
        "KV cache",
        "PagedAttention",
        "paged attention",
        "attention",
        "CUDA",
        "vLLM paper",
        "SGLang",
        "online softmax",
        "张量并行",
        "投机解码",
        "混合精度",
        "Learn the Basics",
    )
)


def _known(name: str) -> bool:
    return name.casefold() in NAMES


#: (question, command, target): before = what to read first; after = what builds on
#: something known; next = what is ready from what I know; about = what something is.
ANSWERS = [
    # before, in forms the first table did not have
    ("what do I need to know before reading the vLLM paper?", "before", "vLLM paper"),
    ("how do I get started with CUDA", "before", "CUDA"),
    ("how can I get started on online softmax?", "before", "online softmax"),
    ("where do I start with KV cache", "before", "KV cache"),
    ("recommend readings on PagedAttention", "before", "PagedAttention"),
    ("suggest some papers about DDP", "before", "DDP"),
    ("good resources for FSDP2?", "before", "FSDP2"),
    ("what should I read before paged attention", "before", "paged attention"),
    ("I know DDP, what should I read before FSDP2?", "before", "FSDP2"),
    ("what should I know before FSDP2", "before", "FSDP2"),
    ("SGLang 需要哪些基础", "before", "SGLang"),
    ("学 KV cache 要什么基础", "before", "KV cache"),
    ("学KV cache之前要看什么", "before", "KV cache"),
    ("开始学 FSDP2 之前要看什么", "before", "FSDP2"),
    ("正式学习张量并行以前先读什么", "before", "张量并行"),
    ("CUDA 从哪里开始学", "before", "CUDA"),
    ("推荐几篇投机解码的文章", "before", "投机解码"),
    ("有哪些关于混合精度的资料", "before", "混合精度"),
    ("DDP 的论文", "before", "DDP"),
    # after: what builds on what I know
    ("I know DDP, what next?", "after", "DDP"),
    ("what should I learn after KV cache?", "after", "KV cache"),
    ("I already understand attention, what now", "after", "attention"),
    ("I've read the vLLM paper, what next", "after", "vLLM paper"),
    ("once I know FSDP2 what should I read", "after", "FSDP2"),
    ("done with DDP, what comes next?", "after", "DDP"),
    ("what builds on online softmax", "after", "online softmax"),
    ("what comes after PagedAttention", "after", "PagedAttention"),
    ("学完 KV cache 之后学什么", "after", "KV cache"),
    ("KV cache 以后读什么", "after", "KV cache"),
    ("我已经会 DDP 了，下一步学什么", "after", "DDP"),
    ("懂了注意力接下来看什么", "after", "注意力"),
    ("掌握了张量并行之后看哪些", "after", "张量并行"),
    ("在投机解码的基础上还能学什么", "after", "投机解码"),
    ("看完 vLLM paper 下一篇读什么", "after", "vLLM paper"),
    # next from what I know
    ("what should I read next", "next", None),
    ("I already know that, what now?", "next", None),
    ("接下来读什么", "next", None),
    # about: what something is (only when it names a document)
    ("what is PagedAttention", "about", "PagedAttention"),
    ("what's online softmax?", "about", "online softmax"),
    ("explain DDP", "about", "DDP"),
    ("tell me about KV cache", "about", "KV cache"),
    ("什么是投机解码", "about", "投机解码"),
    ("混合精度是什么", "about", "混合精度"),
    ("介绍一下张量并行", "about", "张量并行"),
    # progress
    ("what do I know", "status", None),
    ("我学了哪些", "status", None),
]


def test_the_answer_table_has_both_languages_and_every_direction() -> None:
    zh = [q for q, _c, _t in ANSWERS if any("\u4e00" <= ch <= "\u9fff" for ch in q)]
    assert len(ANSWERS) >= 42 and len(zh) >= 18 and len(ANSWERS) - len(zh) >= 18
    assert {c for _q, c, _t in ANSWERS} == {"before", "after", "next", "about", "status"}


@pytest.mark.parametrize(("question", "command", "target"), ANSWERS)
def test_each_phrasing_gives_its_answer(question: str, command: str, target: str | None) -> None:
    asked = parse(question, _known)
    assert (asked.command, asked.target) == (command, target)


def test_what_is_only_asks_about_a_document() -> None:
    with pytest.raises(UsageError, match="I don't know that question"):
        parse("what is the meaning of life", _known)
    with pytest.raises(UsageError, match="I don't know that question"):
        parse("what is FSDP2")  # nothing to say whether FSDP2 names a document


def test_a_target_that_is_part_of_the_words_says_so() -> None:
    asked = parse("what should I read before paged attention kernels", _known)
    assert asked == Question("before", "paged attention")
    assert asked.typed == "paged attention kernels"  # the front end says what it read
    assert parse("what should I read before Learn the Basics", _known).typed is None


def test_a_long_question_is_refused_with_a_clear_message() -> None:
    from studykb.study.ask import MAX_CHARS

    with pytest.raises(UsageError, match=f"at most {MAX_CHARS}"):
        parse("what should I read before " + "FSDP2 " * 2000, _known)
    parse("what should I read before " + "x " * ((MAX_CHARS - 30) // 2), _known)  # fits


def test_reading_a_question_is_linear_in_its_length() -> None:
    from studykb.study.ask import MAX_PIECES

    calls: list[str] = []

    def counting(name: str) -> bool:
        calls.append(name)
        return False

    def work(words: int) -> int:
        calls.clear()
        parse("what should I read before " + " ".join(f"w{i}" for i in range(words)), counting)
        return len(calls)

    # each 30 more words cost the same 30 * MAX_PIECES more looks: linear, not quadratic
    counts = [work(n) for n in (30, 60, 90)]
    assert counts[2] - counts[1] == counts[1] - counts[0] == 30 * MAX_PIECES
    assert counts[2] < 90 * 91 // 2  # fewer than all the runs of words of the question


def test_ask_says_which_document_a_loose_name_was_read_as(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    shutil.copytree(FIXTURE, vault)
    result = CliRunner().invoke(
        cli, ["--vault", str(vault), "ask", "what should I read before romeo-paper", "--json"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["target"]["id"] == "r-paper"
    assert "read as The Romeo paper (r-paper" in result.stderr


def test_a_question_not_understood_gives_its_examples_as_data(run, make_vault) -> None:
    from conftest import run_json

    root = make_vault({"notes/a.md": "# A\n"})
    code, data = run_json(run, "ask", "zzzqqq", vault=root)
    assert code == 2
    assert data["error"] == "I don't know that question."
    assert "what should I read before FSDP2" in data["suggestions"]
    assert "FSDP2 之前应该读什么" in data["suggestions"]
