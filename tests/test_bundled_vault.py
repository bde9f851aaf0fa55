"""The starter knowledge base in notes/ and courses/: pinned so a content edit that breaks
the graph fails CI."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from studykb.cli.app import cli, prepare

prepare()




def run(root: Path, *args: str) -> dict:
    result = CliRunner().invoke(cli, ["--vault", str(root), *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def plan(root: Path, target: str, *extra: str) -> list[str]:
    return [s["id"] for s in run(root, "before", target, *extra)["steps"]]


def test_check_has_no_errors(bundled: Path) -> None:
    problems = run(bundled, "check")["problems"]
    assert [p for p in problems if p["severity"] == "error"] == []


def test_the_vault_is_substantial(bundled: Path) -> None:
    nodes = run(bundled, "graph")["nodes"]
    by_type: dict[str, int] = {}
    for node in nodes:
        by_type[node["type"]] = by_type.get(node["type"], 0) + 1
    assert by_type["topic"] >= 30
    assert by_type["entry"] >= 44
    assert by_type["course"] >= 6
    assert by_type["list"] >= 1
    items = run(bundled, "show", "serving-parallel-lowlevel")["references"]
    assert len([r for r in items if r["kind"] == "item" and r["target"]]) == 44


def test_before_fsdp2_is_a_plan_a_practitioner_would_sign(bundled: Path) -> None:
    steps = plan(bundled, "FSDP2")
    for needed in ("training-loop", "ddp", "distributed-training-overview"):
        assert needed in steps
    assert steps.index("training-loop") < steps.index("ddp")
    assert steps.index("distributed-training-overview") < steps.index("ddp")
    assert "bpe-tokenization" not in steps  # known from the finished CS336 units
    everything = plan(bundled, "FSDP2", "--all")
    assert everything[0] == "bpe-tokenization"
    assert set(steps) <= set(everything)


def test_flashattention_reaches_back_through_gemm_and_cuda(bundled: Path) -> None:
    steps = plan(bundled, "flashattention")
    assert steps.index("cuda-basics") < steps.index("gemm")
    assert "gpu-memory-hierarchy" in steps


def test_speculative_decoding_passes_through_kv_cache_and_decoding(bundled: Path) -> None:
    steps = plan(bundled, "speculative decoding")
    assert steps.index("decoding") < steps.index("kv-cache")
    data = run(bundled, "before", "投机解码")
    assert data["target"]["id"] == "speculative-decoding"
    readings = {r["id"] for s in data["steps"] for r in s["readings"]}
    assert readings  # every step names something to read


def test_topics_form_one_prerequisite_graph(bundled: Path) -> None:
    graph = run(bundled, "graph", "--type", "topic", "--kind", "requires")
    ids = {n["id"] for n in graph["nodes"]}
    linked = {e["source"] for e in graph["edges"]} | {e["target"] for e in graph["edges"]}
    roots = ids - {e["source"] for e in graph["edges"]}
    assert "bpe-tokenization" in roots
    assert len(ids - linked) <= 1  # at most a stray topic outside the graph


def test_status_shows_cs336_progress(bundled: Path) -> None:
    data = run(bundled, "status")
    cs336 = next(c for c in data["courses"] if c["id"] == "cs336")
    assert cs336["total"] == 8 and 0 < cs336["done"] < 8
    lst = next(entry for entry in data["lists"] if entry["id"] == "serving-parallel-lowlevel")
    assert lst["items"] == 44 and lst["beginner"] == 2
