"""``ask`` maps English and Chinese questions onto the plan commands."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from studykb.cli.app import cli, prepare
from studykb.cli.plans import parse_question
from studykb.errors import UsageError

prepare()
FIXTURE = Path(__file__).parent / "fixtures" / "plans_vault"


@pytest.mark.parametrize(("question", "command", "target"), [
    ("what should I read before FSDP2", "before", "FSDP2"),
    ("What should I learn before flash attention?", "before", "flash attention"),
    ("FSDP2 之前应该读什么", "before", "FSDP2"),
    ("学 FSDP2 之前要先看什么？", "before", "FSDP2"),
    ("prerequisites of KV cache", "before", "KV cache"),
    ("what next", "next", None),
    ("what should I read next", "next", None),
    ("what's next for FSDP2", "next", "FSDP2"),
    ("下一步读什么", "next", None),
    ("related to KV cache", "related", "KV cache"),
    ("和 KV cache 相关的内容", "related", "KV cache"),
    ("how am I doing?", "status", None),
])
def test_patterns(question: str, command: str, target: str | None) -> None:
    assert parse_question(question) == (command, target)


def test_unknown_question_lists_patterns() -> None:
    with pytest.raises(UsageError) as info:
        parse_question("tell me a joke")
    assert "what should I read before FSDP2" in str(info.value)
    assert "下一步读什么" in str(info.value)


def test_ask_runs_the_plan(tmp_path: Path) -> None:
    shutil.copytree(FIXTURE, tmp_path / "v")
    runner = CliRunner()
    result = runner.invoke(cli, ["--vault", str(tmp_path / "v"), "ask", "目标 之前应该读什么",
                                 "--json"])
    assert result.exit_code == 0, result.output
    assert [s["id"] for s in json.loads(result.output)["steps"]] == ["t-a", "t-e", "t-b", "t-d"]
    result = runner.invoke(cli, ["--vault", str(tmp_path / "v"), "ask", "what", "is", "the",
                                 "meaning"])
    assert result.exit_code == 2
