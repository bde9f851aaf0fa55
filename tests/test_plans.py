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
    assert data["target"] == {
        **data["target"],
        "id": "t-x",
        "path": "topics/t-x.md",
        "title": "X-ray",
    }
    bravo = next(s for s in data["steps"] if s["id"] == "t-b")
    assert set(bravo) >= {"id", "path", "title", "type", "level", "status", "readings"}
    # none has a kind or a curated place and each covers one topic: lower level first,
    # then by title
    assert [r["id"] for r in bravo["readings"]] == ["e-5", "n-2", "e-1"]
    assert bravo["readings"][0]["url"] == "https://example.org/bravo"
    assert bravo["needed_by"] == [{"id": "t-d", "title": "Delta", "reason": ""}]
    alpha = next(s for s in data["steps"] if s["id"] == "t-a")
    reasons = {n["id"]: n["reason"] for n in alpha["needed_by"]}
    assert reasons["t-b"] == "Bravo builds on Alpha"
    charlie = next(s for s in data["steps"] if s["id"] == "t-c")
    assert charlie["known"] is True
    assert data["totals"] == {"steps": 6, "readings": 4, "minutes": 40}
    assert data["skipped"] == {"known": 0, "through_known": 0}
    assert data["target"]["readings"] == []  # nothing covers X-ray


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
        needs = (
            draw(
                st.lists(st.integers(min_value=0, max_value=max(0, i - 1)), max_size=3, unique=True)
            )
            if i
            else []
        )
        level = draw(st.one_of(st.none(), st.integers(min_value=1, max_value=5)))
        status = draw(st.sampled_from([None, "todo", "reading", "done"]))
        covers = draw(st.lists(st.integers(min_value=0, max_value=n - 1), max_size=2, unique=True))
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
            own = {target.key, *kb.taught.get(target.key, ())}
            for include_known in (False, True):
                plan = plans.plan(vault, target, include_known=include_known, kb=kb)
                order = [s.doc.key for s in plan.steps]
                assert len(order) == len(set(order))
                # never its own prerequisite, directly or through a topic it covers
                assert not own & set(order)
                assert target.key not in {r.doc.key for s in plan.steps for r in s.readings}
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


# -- what a document needs, what a plan left out, and the readings it shows --------------


def plan_json(vault_dir: Path, *args: str) -> dict:
    code, out = run(vault_dir, "before", *args, "--json")
    assert code == 0, out
    return json.loads(out)


def test_readings_ranked_by_how_much_they_teach(vault_dir: Path) -> None:
    data = plan_json(vault_dir, "t-r")
    # paper and tutorials (teaching kinds) before the article; the focused ones before the
    # tutorial that covers two topics; the curated list puts the paper first; the forum
    # post comes last but is still listed (ranked, never dropped); the tutorial only
    # tagged with Romeo is not a reading while something covers it
    assert [r["id"] for r in data["target"]["recommended"]] == [
        "r-paper",
        "r-focused",
        "r-broad",
        "r-article",
        "r-post",
    ]
    assert all(r["teaches"] for r in data["target"]["recommended"])
    assert [s["id"] for s in data["steps"]] == ["t-q"]
    assert [r["id"] for r in data["steps"][0]["recommended"]] == ["r-broad"]
    # the vault format's list: every document that covers the topic (the forum post
    # too), unread and lower-level first
    listed = data["target"]["readings"]
    assert {r["id"] for r in listed} >= {"r-paper", "r-focused", "r-broad", "r-article"}
    assert all(r["teaches"] for r in listed)
    keys = [(r["known"], r["level"] is None, r["level"] or 0) for r in listed]
    assert keys == sorted(keys)


def test_posts_ranked_last_and_tags_only_when_nothing_covers(vault_dir: Path) -> None:
    papa = plan_json(vault_dir, "Papa")["target"]["recommended"]
    assert [(r["id"], r["teaches"]) for r in papa] == [("p-post", True)]
    oscar = plan_json(vault_dir, "Oscar")["target"]
    assert [(r["id"], r["teaches"]) for r in oscar["recommended"]] == [("p-tagged", False)]
    assert oscar["readings"] == []  # nothing covers Oscar: tags are never readings
    code, text = run(vault_dir, "before", "Oscar")
    assert "see Mentions Papa" in text


def test_tags_above_a_documents_level_add_no_prerequisites(vault_dir: Path) -> None:
    # a level-1 tutorial tagged with two level-3 topics, covering nothing: it mentions
    # them, it does not assume them (what it is built on: tests/test_answers.py)
    data = plan_json(vault_dir, "r-tagged")
    assert data["steps"] == [] and data["skipped"] == {"known": 0, "through_known": 0}
    code, text = run(vault_dir, "before", "r-tagged")
    assert "Nothing to read first: Mentions Romeo has no prerequisites." in text
    assert plan_json(vault_dir, "r-focused")["steps"][0]["id"] == "t-q"  # covers Romeo


def test_a_document_is_never_its_own_prerequisite(vault_dir: Path) -> None:
    # r-broad covers Romeo and Quebec, and Romeo needs Quebec: it needs nothing
    assert plan_json(vault_dir, "r-broad")["steps"] == []
    # e-mike covers Mike (which needs November) and is tagged with November: November is
    # a step, and e-mike is not offered as its reading
    steps = plan_json(vault_dir, "e-mike")["steps"]
    assert [(s["id"], s["readings"]) for s in steps] == [("t-n", [])]


def test_the_plan_says_what_it_left_out(vault_dir: Path) -> None:
    data = plan_json(vault_dir, "t-x")
    assert data["skipped"] == {"known": 1, "through_known": 1}  # Charlie, and Foxtrot
    code, text = run(vault_dir, "before", "t-x")
    assert "4 steps, 3 readings, about 40 min." in text
    assert (
        "1 step you already know and 1 step only they need were skipped (--all shows them)."
    ) in text
    code, text = run(vault_dir, "before", "t-x", "--all")
    assert "skipped" not in text


def test_everything_known_is_not_the_same_as_no_prerequisites(vault_dir: Path) -> None:
    code, out = run(vault_dir, "mark", "t-q", "done")
    assert code == 0, out
    code, text = run(vault_dir, "before", "r-focused")
    assert "Nothing to read first: the 1 step it needs is already known (--all shows it)." in text
    code, md = run(vault_dir, "before", "r-focused", "--format", "md")
    assert "the 1 step it needs is already known" in md


def test_no_status_shows_none(vault_dir: Path) -> None:
    data = plan_json(vault_dir, "t-r")
    assert data["target"]["status"] is None and data["steps"][0]["status"] is None
    for fmt in ("text", "md"):
        code, out = run(vault_dir, "before", "t-r", "--format", fmt)
        assert code == 0 and "todo" not in out
    code, out = run(vault_dir, "mark", "t-q", "todo")
    code, text = run(vault_dir, "before", "t-r", "--all")
    assert "Quebec  topic · level 1 · todo" in text


def test_a_topic_plan_ends_with_the_topic_itself_in_every_format(vault_dir: Path) -> None:
    code, text = run(vault_dir, "before", "t-r")
    lines = text.splitlines()
    then = lines.index("  then Romeo itself")
    assert "read The Romeo paper (paper · level 4)" in lines[then + 1]
    assert "… 2 more readings" in text  # five readings (the post too), three shown
    assert "1 step, 5 readings." in text
    code, md = run(vault_dir, "before", "t-r", "--format", "md")
    assert "Then [[t-r|Romeo]] itself:\n    - [ ] [[r-paper|The Romeo paper]]" in md


def test_status_reading_now_and_finished_by_the_date_done(vault_dir: Path) -> None:
    import datetime as dt

    code, out = run(vault_dir, "status", "--json")
    data = json.loads(out)
    assert [d["id"] for d in data["reading"]] == ["c#u2"]
    assert [d["id"] for d in data["finished"][:2]] == ["e-done", "c#u1"]
    assert data["finished"][0]["done"] == "2026-02-01"
    assert {d["id"] for d in data["finished"][2:]} <= {"c#u3", "n-done"}
    code, text = run(vault_dir, "status")
    reading = text.split("Reading now")[1].split("Finished lately")[0]
    assert "Unit two" in reading and "c#u2" in reading
    assert "2026-02-01 Finished in February" in text
    code, out = run(vault_dir, "mark", "t-q", "done")
    code, out = run(vault_dir, "status", "--json")
    first = json.loads(out)["finished"][0]
    assert (first["id"], first["done"]) == ("t-q", dt.date.today().isoformat())


def test_counts_and_articles_read_as_english(vault_dir: Path) -> None:
    code, text = run(vault_dir, "topics")
    lines = {line.split()[0]: line for line in text.splitlines() if line.strip()}
    assert " 1 doc " in lines["Charlie"] and " 3 docs " in lines["Bravo"]
    code, text = run(vault_dir, "topic", "e-1")
    assert "e-1 is an entry, not a topic." in text
    code, text = run(vault_dir, "check")
    assert "2 errors, 0 warnings" in text
    (vault_dir / "topics" / "t-l2.md").write_text("---\nid: t-l2\ntitle: Loop Two\n---\n")
    code, text = run(vault_dir, "check")
    assert "1 error, 0 warnings" in text  # the dangling reference is left
