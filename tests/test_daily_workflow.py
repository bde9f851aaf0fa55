"""The daily workflow as a new user meets it (issue 28, the smaller items): a mistyped
command, ``init`` in an empty folder, a template with a placeholder of the user's own, a
front-matter fence one dash too long, daily notes, an empty tracker, and the search
examples of ``search --help`` and docs/guide/search.md run on the bundled vault."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from conftest import REPO, run_json, tree_hashes

GUIDE = REPO / "docs" / "guide" / "search.md"


# -- a mistyped command ------------------------------------------------------------------------


def test_a_mistyped_command_is_given_its_name(run, make_vault) -> None:
    root = make_vault({"a.md": "# A\n"})
    result = run("serch", "fsdp", vault=root)
    assert result.exit_code == 2
    assert "No such command 'serch' (did you mean 'search'?)" in result.stderr
    result = run("serch", "fsdp", "--json", vault=root)
    assert result.exit_code == 2 and json.loads(result.stdout)["suggestions"] == ["search"]
    result = run("zzzzqq", vault=root)  # nothing close: no suggestion
    assert result.exit_code == 2 and "did you mean" not in result.stderr


# -- init --------------------------------------------------------------------------------------


def test_init_in_an_empty_folder_names_the_first_note(run, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    out = run("init", str(empty)).stdout
    assert 'Next: studykb new note "My first note"' in out and "studykb build" not in out
    full = tmp_path / "full"
    (full / "notes").mkdir(parents=True)
    (full / "notes" / "a.md").write_text("# A\n", encoding="utf-8")
    assert "Next: studykb build" in run("init", str(full)).stdout


# -- templates ---------------------------------------------------------------------------------


def test_a_placeholder_of_the_users_own_keeps_the_front_matter_readable(
    run, make_vault, open_vault
) -> None:
    template = (
        "---\nid: {{id}}\ntitle: {{title}}\nmood: {{mood}}\nweather: '{{weather}} today'\n"
        "aliases: [{{topic}}, {{area}}]\n---\n# {{title}} ({{mood}})\n"
    )
    root = make_vault({".studykb-templates/note.md": template})
    result = run("new", "note", "Day one", vault=root)
    assert result.exit_code == 0, result.stderr
    assert "unknown placeholder {{mood}}" in result.stderr
    vault = open_vault(root)
    doc = vault.documents()["notes/day-one.md"]
    assert doc.meta["mood"] == "{{mood}}" and doc.meta["weather"] == "{{weather}} today"
    assert doc.meta["aliases"] == ["{{topic}}", "{{area}}"]
    assert [p.code for p in vault.problems()] == []
    text = (root / "notes" / "day-one.md").read_text(encoding="utf-8")
    assert "# Day one ({{mood}})" in text  # the body keeps it as written


def test_a_template_whose_front_matter_cannot_be_read_writes_nothing(run, make_vault) -> None:
    root = make_vault({".studykb-templates/note.md": "---\nid: {{id}}\nbad: [open\n---\n# x\n"})
    result = run("new", "note", "Day two", vault=root)
    assert result.exit_code == 1
    assert "template .studykb-templates/note.md:3:" in result.stderr
    assert not (root / "notes").exists()


# -- a fence of the wrong length ---------------------------------------------------------------


def test_front_matter_opened_by_a_longer_fence_is_said(run, make_vault) -> None:
    root = make_vault(
        {
            "long.md": "-----\ntitle: Long fence\ntags: [a]\n-----\n# Body\n",
            "rule.md": "-----\n\nA rule, then text: no front matter meant.\n",
        }
    )
    code, data = run_json(run, "check", vault=root)
    found = [(p["path"], p["line"], p["code"], p["severity"]) for p in data["problems"]]
    assert found == [("long.md", 1, "bad-front-matter", "warning")]
    assert "'-----'" in data["problems"][0]["message"] and code == 0


# -- daily notes -------------------------------------------------------------------------------


@pytest.fixture
def with_daily(run, make_vault) -> Path:
    root = make_vault({"notes/kv.md": "# KV cache\n\nPaged blocks.\n"})
    assert run("new", "note", "--today", vault=root).exit_code == 0
    return root


def test_next_never_offers_a_daily_note(run, with_daily: Path) -> None:
    code, data = run_json(run, "next", vault=with_daily)
    assert code == 0 and [d["path"] for d in data["next"]] == ["notes/kv.md"]


def test_sidebar_write_leaves_daily_notes_and_adds_no_empty_block(run, with_daily: Path) -> None:
    before = tree_hashes(with_daily)
    result = run("sidebar", "--write", vault=with_daily)
    assert result.exit_code == 0, result.stderr
    assert tree_hashes(with_daily) == before  # nothing related anywhere: no file changed
    daily = next((with_daily / "journal").glob("*.md")).relative_to(with_daily).as_posix()
    result = run("sidebar", daily, "--write", vault=with_daily)
    assert result.exit_code == 2 and "daily notes" in result.stderr


# -- status ------------------------------------------------------------------------------------


def test_status_of_an_empty_vault_says_none_under_every_header(run, make_vault) -> None:
    root = make_vault({"notes/a.md": "# A\n"})
    lines = run("status", vault=root).stdout.splitlines()
    headers = ["Courses", "Reading now", "Finished lately", "Reading lists"]
    for header in headers:
        at = lines.index(header)
        assert at + 1 < len(lines) and lines[at + 1].startswith("  ("), (header, lines)


# -- the search examples -----------------------------------------------------------------------


def _help_examples(run) -> list[list[str]]:  # type: ignore[no-untyped-def]
    """``studykb search ...`` lines of the Example block of ``search --help``."""
    text = run("search", "--help").stdout
    block = text.split("Example:", 1)[1].strip()
    out = []
    for line in block.splitlines():
        line = line.strip()
        if not line.startswith("studykb search "):
            break
        command = re.split(r"\s{3,}", line)[0]  # what follows is a comment
        out.append(shlex.split(command)[2:])
    return out


def _guide_examples() -> list[list[str]]:
    """The ``$ studykb search`` lines of docs/guide/search.md's console blocks, and the
    queries its prose gives as examples (code spans after "search"/"finds"/"across")."""
    text = GUIDE.read_text(encoding="utf-8")
    out = [shlex.split(m)[2:] for m in re.findall(r"^\$ (studykb search .*)$", text, re.M)]
    for sentence in (
        "across them (`KV 缓存`, `NCCL的all-reduce`)",
        "English words are stemmed (`sharding` finds `sharded`)",
        "`上下文并行 长序列训练` asks for two things",
        "`算子融合` finds the English notes",
        "`张量并行` those on *tensor parallelism*",
        "for `MPS`, the Apple backend's page",
    ):
        assert sentence in text, f"docs/guide/search.md no longer says {sentence!r}"
        out.extend([q] for q in re.findall(r"`([^`]+)`", sentence)[:2])
    return out


def test_every_search_example_finds_something_in_the_bundled_vault(run, bundled: Path) -> None:
    examples = _help_examples(run)
    assert len(examples) >= 5
    examples += _guide_examples()
    for args in examples:
        args = [a for a in args if a != "--json"]
        code, data = run_json(run, "search", *args, vault=bundled)
        assert code == 0 and data["hits"], f"studykb search {shlex.join(args)} finds nothing"
