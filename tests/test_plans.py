"""Reading plans on a fixture vault with known answers, and hypothesis properties."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from studykb.cli.app import cli  # noqa: F401
from studykb.study import plans
from studykb.vault import Vault
from studykb.vault.lookup import find

FIXTURE = Path(__file__).parent / "fixtures" / "plans_vault"


@pytest.fixture()
def vault_dir(tmp_path: Path) -> Path:
    dest = tmp_path / "vault"
    shutil.copytree(FIXTURE, dest)
    return dest


def run(vault_dir: Path, *args: str) -> tuple[int, str]:
    from studykb.cli.app import prepare

    prepare()
    result = CliRunner().invoke(cli, ["--vault", str(vault_dir), *args])
    return result.exit_code, result.output


def step_ids(vault_dir: Path, *args: str) -> list[str]:
    code, out = run(vault_dir, "before", *args, "--json")
    assert code == 0, out
    return [s["id"] for s in json.loads(out)["steps"]]


def test_plan_prunes_known_and_what_only_they_need(vault_dir: Path) -> None:
    # t-c is known (a done note covers it), so t-c and t-f (needed only by t-c) are left out
    assert step_ids(vault_dir, "t-x") == ["t-a", "t-e", "t-b", "t-d"]


def test_plan_all_orders_by_level_then_list_then_title(vault_dir: Path) -> None:
    # level 1 first by title (Alpha, Echo, Foxtrot); at level 2 the curated list puts
    # Charlie before Bravo; Delta last because it needs both
    assert step_ids(vault_dir, "t-x", "--all") == ["t-a", "t-e", "t-f", "t-c", "t-b", "t-d"]


def test_plan_json_shape_and_readings(vault_dir: Path) -> None:
    code, out = run(vault_dir, "before", "目标", "--all", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["target"] == {**data["target"], "id": "t-x", "path": "topics/t-x.md",
                              "title": "X-ray"}
    bravo = next(s for s in data["steps"] if s["id"] == "t-b")
    assert set(bravo) >= {"id", "path", "title", "type", "level", "status", "readings"}
    # unread, lower level first; entries before notes at the same level
    assert [r["id"] for r in bravo["readings"]] == ["e-5", "n-2", "e-1"]
    assert bravo["readings"][0]["url"] == "https://example.org/bravo"
    assert bravo["needed_by"] == [{"id": "t-d", "title": "Delta", "reason": ""}]
    alpha = next(s for s in data["steps"] if s["id"] == "t-a")
    reasons = {n["id"]: n["reason"] for n in alpha["needed_by"]}
    assert reasons["t-b"] == "Bravo builds on Alpha"
    charlie = next(s for s in data["steps"] if s["id"] == "t-c")
    assert charlie["known"] is True
    assert data["totals"] == {"steps": 6, "readings": 4, "minutes": 40}


def test_entry_covering_a_topic_needs_the_topics_prerequisites(vault_dir: Path) -> None:
    assert step_ids(vault_dir, "e-gpu") == ["t-j"]


def test_loop_is_one_block_and_the_rest_still_listed(vault_dir: Path) -> None:
    code, out = run(vault_dir, "before", "t-y", "--json")
    data = json.loads(out)
    assert [s["id"] for s in data["steps"]] == ["t-a", "t-l1", "t-l2"]
    assert data["loops"] == [["t-l1", "t-l2"]]
    assert data["steps"][1]["loop"] == ["t-l1", "t-l2"]
    # a plan that does not pass through the loop is unaffected
    assert step_ids(vault_dir, "t-x") == ["t-a", "t-e", "t-b", "t-d"]
    code, text = run(vault_dir, "before", "t-y")
    assert "prerequisite loop" in text and "Loop One" in text


def test_cycle_reported_once_with_every_file_and_line(vault_dir: Path) -> None:
    code, out = run(vault_dir, "check", "--json")
    assert code == 1
    cycles = [p for p in json.loads(out)["problems"] if p["code"] == "cycle"]
    assert len(cycles) == 1
    assert "topics/t-l1.md:5" in cycles[0]["message"]
    assert "topics/t-l2.md:6" in cycles[0]["message"]


def test_dangling_requires_never_stops_a_plan(vault_dir: Path) -> None:
    assert step_ids(vault_dir, "t-z") == ["t-a"]
    code, out = run(vault_dir, "check", "--json")
    dangling = [p for p in json.loads(out)["problems"] if p["code"] == "dangling-ref"]
    assert [(p["path"], p["line"]) for p in dangling] == [("topics/t-z.md", 6)]


def test_depth_limits_how_far_back(vault_dir: Path) -> None:
    assert step_ids(vault_dir, "t-x", "--all", "--depth", "1") == ["t-e", "t-d"]


def test_marking_done_prunes_the_plan(vault_dir: Path) -> None:
    code, out = run(vault_dir, "mark", "t-b", "done")
    assert code == 0, out
    assert step_ids(vault_dir, "t-x") == ["t-e", "t-d"]


def test_markdown_and_tree_formats(vault_dir: Path) -> None:
    code, md = run(vault_dir, "before", "t-x", "--format", "md")
    assert code == 0
    assert md.startswith("## Reading plan: X-ray")
    assert "1. [ ] [[t-a|Alpha]]" in md
    code, tree = run(vault_dir, "before", "t-x", "--tree")
    assert code == 0 and "Delta" in tree and "Bravo" in tree


def test_next_lists_ready_documents(vault_dir: Path) -> None:
    code, out = run(vault_dir, "next", "t-x", "--json")
    assert code == 0
    ready = [d["id"] for d in json.loads(out)["next"]]
    # Alpha and Echo have no unknown prerequisites; Bravo waits on Alpha
    assert set(ready) == {"t-a", "t-e"}
    code, out = run(vault_dir, "next", "--json", "--limit", "50")
    ids = {d["id"] for d in json.loads(out)["next"]}
    assert "t-b" not in ids and "t-a" in ids and "n-done" not in ids


def test_unknown_target_suggests(vault_dir: Path) -> None:
    code, out = run(vault_dir, "before", "Bravoo")
    assert code == 1
    assert "Did you mean" in out and "t-b" in out


# -- properties -------------------------------------------------------------------------

@st.composite
def random_vaults(draw):  # type: ignore[no-untyped-def]
    n = draw(st.integers(min_value=2, max_value=9))
    docs = []
    for i in range(n):
        needs = draw(st.lists(st.integers(min_value=0, max_value=max(0, i - 1)), max_size=3,
                              unique=True)) if i else []
        level = draw(st.one_of(st.none(), st.integers(min_value=1, max_value=5)))
        status = draw(st.sampled_from([None, "todo", "reading", "done"]))
        covers = draw(st.lists(st.integers(min_value=0, max_value=n - 1), max_size=2,
                               unique=True))
        docs.append((needs, level, status, covers))
    return docs


def _write(root: Path, docs, all_done: bool = False) -> None:  # type: ignore[no-untyped-def]
    (root / "topics").mkdir(parents=True)
    for i, (needs, level, status, covers) in enumerate(docs):
        lines = ["---", f"id: d{i}", f"title: Doc {i}"]
        if needs:
            lines.append("requires: [" + ", ".join(f"d{j}" for j in needs) + "]")
        if level:
            lines.append(f"level: {level}")
        status = "done" if all_done else status
        if status:
            lines.append(f"status: {status}")
        covered = [f"d{j}" for j in covers if j != i]
        if covered:
            lines.append("covers: [" + ", ".join(covered) + "]")
        lines.append("---")
        (root / "topics" / f"d{i}.md").write_text("\n".join(lines) + "\nbody\n")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_vaults())
def test_plan_properties(docs) -> None:  # type: ignore[no-untyped-def]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _write(root, docs)
        vault = Vault.open(root)
        vault.refresh()
        kb = plans.knowledge(vault)
        for i in range(len(docs)):
            target = find(vault, f"d{i}")
            for include_known in (False, True):
                plan = plans.plan(vault, target, include_known=include_known, kb=kb)
                order = [s.doc.key for s in plan.steps]
                assert len(order) == len(set(order))
                pos = {k: n for n, k in enumerate(order)}
                for key in order:  # a step never comes before its own prerequisites
                    step = plan.steps[pos[key]]
                    for need in kb.graph.successors(key):
                        if need in pos and need not in step.loop:
                            assert pos[need] < pos[key]
                if not include_known:
                    assert not any(s.known for s in plan.steps)
        vault.close()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _write(root, docs, all_done=True)
        vault = Vault.open(root)
        vault.refresh()
        for i in range(len(docs)):
            assert plans.plan(vault, find(vault, f"d{i}")).steps == ()
        vault.close()
