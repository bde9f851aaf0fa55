"""The canonical readings of issue 26 in the starter vault: each is found by its name,
teaches the topic it belongs to, and gives the plan a practitioner expects; the serving
repositories send a learner to their paper first. A content edit that breaks one fails."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from studykb.cli.app import cli, prepare

prepare()


def run(root: Path, *args: str) -> dict:
    result = CliRunner().invoke(cli, ["--vault", str(root), *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def steps(root: Path, target: str) -> list[str]:
    return [s["id"] for s in run(root, "before", target, "--all")["steps"]]


#: name a learner types -> (entry, the topic it teaches)
READINGS = {
    "DistServe": ("paper-distserve", "disaggregated-serving"),
    "Splitwise": ("paper-splitwise", "disaggregated-serving"),
    "FlashAttention-3": ("paper-flashattention-3", "flashattention"),
    "AWQ": ("paper-awq", "quantization"),
    "SmoothQuant": ("paper-smoothquant", "quantization"),
    "EAGLE": ("paper-eagle", "speculative-decoding"),
    "Medusa": ("paper-medusa", "speculative-decoding"),
    "PPO": ("paper-ppo", "rl-alignment"),
    "InstructGPT": ("paper-instructgpt", "rl-alignment"),
    "Nsight Systems": ("nsight-systems-user-guide", "profiling"),
    "Nsight Compute": ("nsight-compute-profiling-guide", "profiling"),
    "GPU memory primer": ("gpu-memory-primer", "gpu-memory-hierarchy"),
}


@pytest.mark.parametrize("name", READINGS)
def test_a_reading_is_found_by_its_name_and_teaches_its_topic(bundled: Path, name: str) -> None:
    entry, topic = READINGS[name]
    assert run(bundled, "before", name)["target"]["id"] == entry
    readings = [r["id"] for r in run(bundled, "before", topic, "--all")["target"]["readings"]]
    assert entry in readings, readings


@pytest.mark.parametrize("entry", sorted(e for e, _t in READINGS.values()))
def test_a_reading_is_written_in_both_languages(bundled: Path, entry: str) -> None:
    text = next(bundled.glob(f"notes/entries/{entry}.md")).read_text(encoding="utf-8")
    english, _, chinese = text.partition("\n## 中文")
    assert len(re.findall(r"[\u4e00-\u9fff]", chinese)) >= 100, entry  # a Chinese summary
    assert len(english.split("---", 2)[2].split()) >= 60, entry  # a summary, not a line


def test_the_repositories_send_a_learner_to_their_paper_first(bundled: Path) -> None:
    vllm = steps(bundled, "vllm")
    assert "paper-pagedattention-vllm" in vllm and "llm-serving" in vllm
    sglang = steps(bundled, "SGLang")
    assert "paper-sglang" in sglang and "llm-serving" in sglang
    # each paper comes after what it needs
    assert vllm.index("kv-cache") < vllm.index("paper-pagedattention-vllm")
    assert sglang.index("continuous-batching") < sglang.index("paper-sglang")


def test_asking_about_the_vllm_paper_plans_for_the_paper(bundled: Path) -> None:
    asked = run(bundled, "ask", "what do I need to know before reading the vLLM paper?")
    assert asked["target"]["id"] == "paper-pagedattention-vllm"
    assert {"kv-cache", "continuous-batching"} <= {s["id"] for s in asked["steps"]}


def test_disaggregation_is_planned_after_chunked_prefill(bundled: Path) -> None:
    data = run(bundled, "before", "PD 分离", "--all")
    assert data["target"]["id"] == "disaggregated-serving"
    order = [s["id"] for s in data["steps"]]
    assert order.index("continuous-batching") < order.index("chunked-prefill")
    assert {"kv-cache", "roofline-model"} <= set(order)
    first = data["target"]["readings"][0]["id"]
    assert first in {"paper-distserve", "paper-splitwise"}


def test_follow_up_papers_need_the_original_first(bundled: Path) -> None:
    assert "paper-ppo" in steps(bundled, "InstructGPT")
    assert "paper-ppo" in steps(bundled, "GRPO")
    assert "paper-speculative-decoding" in steps(bundled, "EAGLE")
    fa3 = steps(bundled, "FlashAttention-3")
    assert fa3.index("paper-flashattention") < fa3.index("paper-flashattention-2")
