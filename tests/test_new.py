"""``studykb new``: files from templates, slugs, no overwrites, vault templates."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import pytest

from studykb.parse import parse_file
from studykb.study.new import render, slugify

TODAY = dt.date.today().isoformat()


def parsed(root: Path, rel: str):  # type: ignore[no-untyped-def]
    parsed = parse_file(rel, (root / rel).read_bytes())
    assert not [p for p in parsed.problems if p.severity == "error"], parsed.problems
    return parsed


@pytest.mark.parametrize(
    ("doc_type", "folder"),
    [
        ("note", "notes"),
        ("entry", "notes/entries"),
        ("topic", "notes/topics"),
        ("course", "courses"),
        ("list", "notes/lists"),
    ],
)
def test_each_type_lands_in_its_folder(run, make_vault, doc_type, folder):
    vault = make_vault({})
    result = run("new", doc_type, "Tensor Parallelism: a first look", vault=vault)
    assert result.exit_code == 0, result.output
    rel = f"{folder}/tensor-parallelism-a-first-look.md"
    assert result.stdout.strip().endswith(rel)
    doc = parsed(vault, rel).documents[0]
    assert doc.id == "tensor-parallelism-a-first-look"
    assert doc.title == "Tensor Parallelism: a first look"
    assert doc.type == doc_type
    assert doc.date == TODAY


def test_front_matter_is_filled(run, make_vault, open_vault):
    vault = make_vault({"notes/topics/ddp.md": "---\nid: ddp\n---\n# DDP\n"})
    result = run(
        "new",
        "topic",
        "Tensor",
        "Parallelism",
        "--tag",
        "parallelism",
        "--tag",
        "并行",
        "--requires",
        "ddp",
        "--requires",
        "Data: loading",
        vault=vault,
    )
    assert result.exit_code == 0, result.output
    meta = parsed(vault, "notes/topics/tensor-parallelism.md").documents[0].meta
    assert meta["tags"] == ["parallelism", "并行"]
    assert meta["requires"] == ["ddp", "Data: loading"]
    links = {link.ref.target: link.state for link in open_vault(vault).links()}
    assert links["ddp"] == "ok"


def test_entry_gets_url_and_covers(run, make_vault):
    vault = make_vault({})
    result = run(
        "new",
        "entry",
        "FSDP2 tutorial",
        "--url",
        "https://pytorch.org/t?a=1#x",
        "--tag",
        "fsdp2",
        vault=vault,
    )
    assert result.exit_code == 0, result.output
    doc = parsed(vault, "notes/entries/fsdp2-tutorial.md").documents[0]
    assert doc.url == "https://pytorch.org/t?a=1#x"
    assert doc.covers == ("fsdp2",)
    assert doc.status == "todo"


def test_url_on_a_note_is_bad_usage(run, make_vault):
    vault = make_vault({})
    result = run("new", "note", "x", "--url", "https://example.com", vault=vault)
    assert result.exit_code == 2
    assert "entries and courses" in result.stderr
    assert not (vault / "notes").exists()


def test_chinese_title_gets_a_pinyin_slug(run, make_vault):
    vault = make_vault({})
    result = run("new", "note", "张量并行 学习笔记", vault=vault)
    assert result.exit_code == 0, result.output
    doc = parsed(vault, "notes/zhang-liang-bing-xing-xue-xi-bi-ji.md").documents[0]
    assert doc.title == "张量并行 学习笔记"
    assert slugify("CS336 学习总结") == "cs336-xue-xi-zong-jie"
    assert slugify("Café: über") == "cafe-uber"
    assert len(slugify("长" * 200)) <= 64


def test_id_option_and_json(run, make_vault):
    vault = make_vault({})
    result = run("new", "course", "深度学习系统", "--id", "cmu-dlsys", "--json", vault=vault)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["path"] == "courses/cmu-dlsys.md"
    assert data["template"] == "built-in"
    doc = parsed(vault, "courses/cmu-dlsys.md").documents[0]
    assert doc.id == "cmu-dlsys" and doc.title == "深度学习系统"


@pytest.mark.parametrize("bad", ["../x", "a/b", ".hidden", ""])
def test_bad_id_is_refused(run, make_vault, bad):
    vault = make_vault({})
    result = run("new", "note", "Title", "--id", bad, vault=vault)
    assert result.exit_code == 2
    assert not (vault / "notes").exists() or not any((vault / "notes").iterdir())


def test_untitleable_title_needs_an_id(run, make_vault):
    vault = make_vault({})
    result = run("new", "note", "!!!", vault=vault)
    assert result.exit_code == 2
    assert "--id" in result.stderr


def test_refuses_to_overwrite(run, make_vault):
    vault = make_vault({"notes/topics/ddp.md": "mine\n"})
    result = run("new", "topic", "DDP", vault=vault)
    assert result.exit_code == 1
    assert "exists already" in result.stderr
    assert (vault / "notes/topics/ddp.md").read_text() == "mine\n"
    assert [p.name for p in (vault / "notes/topics").iterdir()] == ["ddp.md"]  # no temp left


def test_create_never_replaces(tmp_path):
    from studykb.errors import StudyError
    from studykb.vault.files import create

    target = tmp_path / "a.md"
    create(tmp_path, target, b"one")
    with pytest.raises(StudyError):
        create(tmp_path, target, b"two")
    assert target.read_text() == "one"
    assert os.listdir(tmp_path) == ["a.md"]


def test_vault_template_overrides_the_built_in(run, make_vault):
    vault = make_vault(
        {
            ".studykb-templates/note.md": "---\nid: {{id}}\ntitle: {{title}}\n"
            "status: reading\n---\n"
            "# {{title}}\n\nWritten {{date}}. Tags: {{tags}}. {{unknown}}\n"
        }
    )
    result = run("new", "note", "My: note", "--tag", "a", "--requires", "b", "--json", vault=vault)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["template"] == ".studykb-templates/note.md"
    text = (vault / "notes/my-note.md").read_text()
    assert f"Written {TODAY}. Tags: a. {{{{unknown}}}}" in text
    assert (
        "template .studykb-templates/note.md:8: unknown placeholder {{unknown}}" in result.stderr
    )  # left as written, and said so
    meta = parsed(vault, "notes/my-note.md").documents[0].meta
    # values the template has no placeholder for are still written
    assert meta["requires"] == ["b"] and meta["tags"] == ["a"] and meta["status"] == "reading"


def test_template_folder_from_config(run, make_vault):
    vault = make_vault(
        {
            "tpl/topic.md": "+++\nid = {{id}}\ntitle = {{title}}\n"
            "requires = {{requires}}\n+++\nbody\n"
        },
        config='templates = "tpl"\n',
    )
    result = run("new", "topic", "Ring all-reduce", "--requires", "ddp", vault=vault)
    assert result.exit_code == 0, result.output
    doc = parsed(vault, "notes/topics/ring-all-reduce.md").documents[0]
    assert doc.title == "Ring all-reduce" and doc.meta["requires"] == ["ddp"]


def test_render_quotes_what_yaml_would_misread():
    out = render(
        "---\ntitle: {{title}}\ntags: {{tags}}\nurl: {{url}}\n---\n# {{title}}\n",
        {"title": "yes", "tags": ["a: b", "#c"], "url": None},
    )
    assert out == '---\ntitle: "yes"\ntags: ["a: b", "#c"]\nurl: \n---\n# yes\n'


def test_edit_opens_the_editor(run, make_vault, tmp_path):
    script = tmp_path / "editor.py"
    script.write_text("import sys\nopen(sys.argv[-1], 'a').write('edited\\n')\n")
    vault = make_vault({})
    import sys

    env = {"EDITOR": f"{sys.executable} {script}", "VISUAL": f"{sys.executable} {script}"}
    result = run("new", "note", "Edit me", "--edit", vault=vault, env=env)
    assert result.exit_code == 0, result.output
    assert (vault / "notes/edit-me.md").read_text().endswith("edited\n")


def test_an_id_taken_by_another_document_is_refused(run, make_vault):
    vault = make_vault({"notes/ddp.md": "---\nid: ddp\n---\n# my notes on DDP\n"})
    result = run("new", "topic", "DDP", vault=vault)
    assert result.exit_code == 1
    assert "taken by notes/ddp.md" in result.stderr
    assert not (vault / "notes/topics").exists()
    assert run("new", "topic", "DDP", "--id", "ddp-topic", vault=vault).exit_code == 0


def test_daily_note_is_made_once_and_then_found(run, make_vault):
    vault = make_vault({})
    first = run("new", "note", "--today", "--json", vault=vault)
    assert first.exit_code == 0, first.output
    made = json.loads(first.stdout)
    assert made["path"] == f"journal/{TODAY}.md" and made["existed"] is False
    doc = parsed(vault, made["path"]).documents[0]
    assert doc.id == TODAY and doc.title == TODAY and doc.type == "note"
    (vault / made["path"]).write_text("---\nid: x\n---\nmy day\n")
    again = run("new", "note", "--today", "--json", vault=vault)
    assert json.loads(again.stdout)["existed"] is True
    assert (vault / made["path"]).read_text() == "---\nid: x\n---\nmy day\n"  # kept
    other = run("new", "note", "Reading group", "--date", "2025-03-04", vault=vault)
    assert other.stdout.strip().endswith("journal/2025-03-04.md")
    assert parsed(vault, "journal/2025-03-04.md").documents[0].title == "Reading group"
    assert run("new", "topic", "--today", vault=vault).exit_code == 2
    assert run("new", "note", vault=vault).exit_code == 2  # no title, no --today


def test_a_typo_in_requires_is_written_with_a_warning(run, make_vault):
    vault = make_vault({"notes/topics/data-parallel.md": "---\nid: data-parallel\n---\n# DP\n"})
    result = run(
        "new",
        "topic",
        "FSDP",
        "--requires",
        "dataparallel",
        "--requires",
        "data-parallel",
        "--json",
        vault=vault,
    )
    assert result.exit_code == 0, result.output
    warnings = json.loads(result.stdout)["warnings"]
    assert len(warnings) == 1
    assert "'dataparallel' names no document" in warnings[0] and "data-parallel" in warnings[0]
    assert "studykb: warning: --requires 'dataparallel'" in result.stderr
    meta = parsed(vault, "notes/topics/fsdp.md").documents[0].meta
    assert meta["requires"] == ["dataparallel", "data-parallel"]
