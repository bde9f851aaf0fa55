"""``studykb mv``: a document moved and every reference to it rewritten, in every form."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import run_json, tree_hashes

ZERO = """---
id: zero-sharding
title: ZeRO sharding
aliases: [ZeRO]
---
# ZeRO

## Stages

See [the DDP note](ddp.md) and [[zero-sharding#Stages]].
"""
NOTE = """---
requires: [zero-sharding, {ref: "notes/topics/zero-sharding", reason: memory}]
related:
  - zero-sharding
---
# A

[[zero-sharding]], [[zero-sharding|Z]], ![[zero-sharding#Stages]], [[ZeRO]],
[z](topics/zero-sharding.md#stages), [t](<topics/zero-sharding.md>), [[ZeRO sharding]]
"""
COURSE = """---
id: cs336
units:
  - id: a1
    title: Basics
---
# CS336
"""
FILES = {
    "notes/topics/zero-sharding.md": ZERO,
    "notes/topics/ddp.md": "---\nid: ddp\n---\n# DDP\n",
    "notes/a.md": NOTE,
    "courses/cs336.md": COURSE,
    "notes/b.md": "---\ncourse: cs336\n---\n[[cs336#a1]] and [[cs336]]\r\nCRLF line\r\n",
}


def problems(run, vault: Path) -> list[dict]:  # type: ignore[no-untyped-def]
    return run_json(run, "check", vault=vault)[1]["problems"]


def test_every_form_of_reference_is_rewritten(run, make_vault) -> None:  # type: ignore[no-untyped-def]
    vault = make_vault(FILES)
    assert problems(run, vault) == []
    result = run("mv", "zero-sharding", "notes/zero/zero-redundancy.md", vault=vault)
    assert result.exit_code == 0, result.output
    assert "rewrote 11 references in 2 files" in result.stdout
    assert not (vault / "notes/topics/zero-sharding.md").exists()
    moved = (vault / "notes/zero/zero-redundancy.md").read_text()
    assert "id: zero-redundancy" in moved
    assert "[the DDP note](../topics/ddp.md)" in moved  # its own relative link, re-rooted
    assert "[[zero-redundancy#Stages]]" in moved
    note = (vault / "notes/a.md").read_text()
    assert (
        'requires: [zero-redundancy, {ref: "notes/zero/zero-redundancy", reason: memory}]' in note
    )
    assert "  - zero-redundancy\n" in note
    assert (
        "[[zero-redundancy]], [[zero-redundancy|Z]], ![[zero-redundancy#Stages]], [[ZeRO]]" in note
    )  # the alias still fits: kept
    assert "[z](zero/zero-redundancy.md#stages), [t](<zero/zero-redundancy.md>)" in note
    assert "[[ZeRO sharding]]" in note  # the title too
    assert problems(run, vault) == []  # nothing dangles after the move


def test_dry_run_writes_nothing_and_json_lists_the_edits(run, make_vault) -> None:  # type: ignore[no-untyped-def]
    vault = make_vault(FILES)
    before = tree_hashes(vault)
    code, data = run_json(run, "mv", "zero-sharding", "zero-redundancy", "--dry-run", vault=vault)
    assert code == 0
    assert tree_hashes(vault) == before
    assert data["to"] == "notes/topics/zero-redundancy.md" and data["id"] == "zero-redundancy"
    assert {
        "path": "notes/a.md",
        "line": 4,
        "old": "zero-sharding",
        "new": "zero-redundancy",
    } in data["edits"]
    assert data["files"] == ["notes/a.md", "notes/topics/zero-sharding.md"]


def test_a_course_keeps_its_units_and_crlf(run, make_vault) -> None:  # type: ignore[no-untyped-def]
    vault = make_vault(FILES)
    result = run("mv", "cs336", "cs336-2025", vault=vault)
    assert result.exit_code == 0, result.output
    b = (vault / "notes/b.md").read_bytes().decode()
    assert (
        b == "---\ncourse: cs336-2025\n---\n[[cs336-2025#a1]] and [[cs336-2025]]\r\nCRLF line\r\n"
    )
    assert "id: cs336-2025" in (vault / "courses/cs336-2025.md").read_text()
    assert problems(run, vault) == []


@pytest.mark.parametrize(
    ("new", "message"),
    [
        ("a", "taken by notes/a.md"),
        ("notes/topics/ddp.md", "exists already"),
        ("../outside", "not a name or a path inside the vault"),
    ],
)
def test_refusals_change_nothing(run, make_vault, new, message) -> None:  # type: ignore[no-untyped-def]
    vault = make_vault(FILES)
    before = tree_hashes(vault)
    code, data = run_json(run, "mv", "zero-sharding", new, vault=vault)
    assert code in (1, 2)
    assert message in data["error"]
    assert tree_hashes(vault) == before


def test_a_file_changed_since_it_was_read_stops_the_move(make_vault, open_vault) -> None:  # type: ignore[no-untyped-def]
    from studykb.session import Session
    from studykb.vault.files import FileChanged

    vault_dir = make_vault(FILES)
    kb = Session(open_vault(vault_dir))
    move = kb.plan_move(kb.find("zero-sharding"), "zero-redundancy")
    (vault_dir / "notes/a.md").write_text(NOTE + "\nsaved by an editor meanwhile\n")
    with pytest.raises(FileChanged):
        kb.move(move)
    assert (vault_dir / "notes/topics/zero-sharding.md").exists()
    assert "saved by an editor" in (vault_dir / "notes/a.md").read_text()
    assert not (vault_dir / "notes/topics/zero-redundancy.md").exists()


def test_list_for_pickers(run, make_vault, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    vault = make_vault(FILES)
    monkeypatch.chdir(vault)
    paths = run("list").stdout.splitlines()
    assert paths == sorted(paths) and "notes/a.md" in paths
    assert all(os.path.isfile(p) for p in paths)  # usable as they are: xargs $EDITOR
    rows = run(
        "list", "--type", "course", "--type", "unit", "--format", "{id}\t{title}"
    ).stdout.splitlines()
    assert rows == ["cs336\tCS336", "cs336#a1\tBasics"]
    bad = run("list", "--format", "{nope}")
    assert bad.exit_code == 2 and "unknown field {nope}" in bad.stderr
    code, data = run_json(run, "list", "--tag", "nothing")
    assert code == 0 and data == {"documents": []}


def test_json_errors_are_one_object(run, make_vault) -> None:  # type: ignore[no-untyped-def]
    vault = make_vault(FILES)
    result = run("show", "zero-shardin", "--json", vault=vault)
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["error"] == "No document matches 'zero-shardin'."
    assert data["suggestions"][0].startswith("zero-sharding")
    assert result.stderr.startswith("studykb: No document matches")
    result = run("search", "--limit", "x", "q", "--json", vault=vault)
    assert result.exit_code == 2
    assert "--limit" in json.loads(result.stdout)["error"]
    assert result.stderr.startswith("studykb: ")


def test_check_text_is_check_json_one_a_line(run, make_vault) -> None:  # type: ignore[no-untyped-def]
    files = {f"notes/n{i}.md": f"# N{i}\n\n[[missing-{i}]] [[n{i + 1}]]\n" for i in range(50)}
    vault = make_vault(files)
    listed = run_json(run, "check", vault=vault)[1]["problems"]
    text = run("check", vault=vault)
    assert text.exit_code == 1
    lines = text.stdout.splitlines()
    assert lines[-1] == f"{len(listed)} errors, 0 warnings"
    assert lines[:-1] == [
        f"{p['path']}:{p['line']}: {p['severity']} {p['code']} {p['message']}" for p in listed
    ]
    assert "\x1b[" not in text.stdout  # no colours when piped


def test_shell_completion_of_document_ids(make_vault) -> None:  # type: ignore[no-untyped-def]
    """Every argument naming a document completes ids from the state (bash, zsh, fish)."""
    from click.testing import CliRunner

    from studykb.cli.app import cli, prepare

    prepare()
    vault = make_vault(FILES)

    def complete(*words: str) -> list[str]:
        line = ["studykb", "--vault", str(vault), *words]
        env = {
            "_STUDYKB_COMPLETE": "bash_complete",
            "COMP_WORDS": " ".join(line),
            "COMP_CWORD": str(len(line) - 1),
        }
        out = CliRunner().invoke(cli, [], env=env, prog_name="studykb").output
        return [row.split(",", 1)[1] for row in out.splitlines() if row.startswith("plain,")]

    assert complete("show", "ze") == []  # never built: nothing read, nothing written
    assert not (vault / ".studykb" / "state.sqlite").exists()
    CliRunner().invoke(cli, ["--vault", str(vault), "build"])
    for command in ("show", "before", "backlinks", "related", "mv", "mark", "sidebar"):
        assert complete(command, "ze") == ["zero-sharding"], command
    assert complete("show", "") == ["a", "b", "cs336", "cs336#a1", "ddp", "zero-sharding"]
    assert complete("new", "note", "--requires", "dd") == ["ddp"]
    assert complete("search", "ze") == []  # a search query is not a document


def test_a_long_build_shows_each_phase() -> None:
    """The parse bar, then a spinner naming each later step (here shown at once)."""
    import io
    import time

    from rich.console import Console

    from studykb.cli.phases import Phases

    screen = io.StringIO()
    phases = Phases(Console(file=screen, force_terminal=True, width=100))
    phases.DELAY = 0.0

    def shown_soon(text: str) -> None:  # the spinner is drawn by a timer thread
        deadline = time.monotonic() + 30
        while text not in screen.getvalue():
            assert time.monotonic() < deadline, f"{text!r} never shown"
            time.sleep(0.01)

    for done in range(0, 301, 50):
        phases.tick(done, 300)
    shown_soon("resolving references and writing the state")
    with phases.phase("building the search index"):
        shown_soon("building the search index")
    phases.stop()
    shown = screen.getvalue()
    for step in (
        "parsing",
        "resolving references and writing the state",
        "building the search index",
    ):
        assert step in shown, step
    quiet = io.StringIO()
    small = Phases(Console(file=quiet, force_terminal=True))
    small.tick(10, 10)  # a few files: nothing to show
    with small.phase("building the search index"):
        pass  # quicker than the delay: nothing either
    small.stop()
    assert quiet.getvalue() == ""


def test_list_formats_typed_in_a_shell(run, make_vault, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    vault = make_vault({"notes/t.md": '---\nid: t\ntitle: "Tabs\\tand\\nlines"\n---\n'})
    monkeypatch.chdir(vault)
    out = run("list", "--format", "{id}\\t{title}\\n--").stdout  # as typed in '...'
    assert out == "t\tTabs and lines\n--\n"  # escapes understood, values kept on one line


# -- every kind of reference (issue 28) ------------------------------------------------------

TOPICS = {
    "notes/topics/fsdp.md": "---\ntitle: Fully sharded data parallel\n---\nSharding.\n",
    "notes/topics/ddp.md": "---\ntitle: DDP\n---\nData parallel.\n",
    "notes/a.md": (
        "---\ntags: [fsdp, other]\ncovers:\n  - fsdp  # the topic\n  - ddp\n---\n# A\n\n"
        "About #fsdp, not `#fsdp` in code, nor #fsdp/nested or #fsdpx.\n"
    ),
    "notes/b.md": "---\ntitle: B\ncovers: FSDP, ddp\ntags: ['#fsdp']\n---\n# B\n",
    "notes/z.md": '+++\ntitle = "Z"\n[taxonomies]\ntags = ["fsdp"]\n+++\n# Z\n',
    "courses/c.md": (
        "---\nunits:\n  - id: u1\n    title: One\n    covers: [fsdp]\n"
        "  - {id: u2, title: Two, tags: [FSDP], requires: [ddp]}\n---\n# C\n"
    ),
}


def covered(open_vault, vault: Path) -> dict[str, int]:  # type: ignore[no-untyped-def]
    """Topic id -> how many documents cover it or are about it (a fresh refresh)."""
    from studykb.session import Session

    kb = Session(open_vault(vault))
    return {t.id: t.count for t in kb.topics()}


def test_renaming_a_topic_renames_it_in_tags_covers_units_and_inline_tags(
    run, make_vault, open_vault
) -> None:  # type: ignore[no-untyped-def]
    vault = make_vault(TOPICS)
    assert problems(run, vault) == []
    counts = covered(open_vault, vault)
    assert counts["fsdp"] == 4  # a.md, b.md, z.md and the course (by its units)
    code, dry = run_json(run, "mv", "fsdp", "fully-sharded", "--dry-run", vault=vault)
    assert code == 0
    listed = {(e["path"], e["line"], e["old"], e["new"]) for e in dry["edits"]}
    assert listed == {
        ("notes/a.md", 2, "fsdp", "fully-sharded"),
        ("notes/a.md", 4, "fsdp", "fully-sharded"),
        ("notes/a.md", 9, "#fsdp", "#fully-sharded"),
        ("notes/b.md", 3, "FSDP", "fully-sharded"),
        ("notes/b.md", 4, "#fsdp", "#fully-sharded"),
        ("notes/z.md", 4, "fsdp", "fully-sharded"),
        ("courses/c.md", 5, "fsdp", "fully-sharded"),
        ("courses/c.md", 6, "FSDP", "fully-sharded"),
    }
    result = run("mv", "fsdp", "fully-sharded", vault=vault)
    assert result.exit_code == 0, result.output
    a = (vault / "notes/a.md").read_text()
    assert a.startswith("---\ntags: [fully-sharded, other]\ncovers:\n  - fully-sharded  # the")
    assert "About #fully-sharded, not `#fsdp` in code, nor #fsdp/nested or #fsdpx." in a
    assert (
        "covers: fully-sharded, ddp\ntags: ['#fully-sharded']\n"
        in (vault / "notes/b.md").read_text()
    )
    assert 'tags = ["fully-sharded"]' in (vault / "notes/z.md").read_text()
    course = (vault / "courses/c.md").read_text()
    assert "    covers: [fully-sharded]\n" in course
    assert "{id: u2, title: Two, tags: [fully-sharded], requires: [ddp]}" in course
    after = covered(open_vault, vault)
    assert after["fully-sharded"] == counts["fsdp"] and "fsdp" not in after
    assert problems(run, vault) == []


def test_a_name_the_topic_keeps_is_left_as_written(run, make_vault) -> None:  # type: ignore[no-untyped-def]
    files = {**TOPICS, "notes/topics/fsdp.md": "---\naliases: [FSDP]\n---\n# Sharding\n"}
    vault = make_vault(files)
    code, data = run_json(run, "mv", "fsdp", "fully-sharded", "--dry-run", vault=vault)
    assert code == 0 and data["edits"] == []  # "fsdp" still names it: an alias


def test_a_new_id_that_cannot_be_a_tag_is_refused(run, make_vault) -> None:  # type: ignore[no-untyped-def]
    vault = make_vault(TOPICS)
    before = tree_hashes(vault)
    code, data = run_json(run, "mv", "fsdp", "fsdp (2)", vault=vault)
    assert code == 1
    assert "notes/a.md: the tag #fsdp cannot be renamed #fsdp (2)" in data["error"]
    assert tree_hashes(vault) == before


SIDEBAR = (
    "# S\n\nText.\n\n<!-- studykb:sidebar -->\n## Related\n\n"
    "- [ZeRO sharding](topics/zero-sharding.md) — links here\n"
    "- [DDP](topics/ddp.md) — same topic\n\n<!-- /studykb:sidebar -->\n"
)


def test_links_in_written_sidebars_follow_the_move(run, make_vault) -> None:  # type: ignore[no-untyped-def]
    own = ZERO + "\n<!-- studykb:sidebar -->\n- [S](../s.md)\n<!-- /studykb:sidebar -->\n"
    vault = make_vault({**FILES, "notes/s.md": SIDEBAR, "notes/topics/zero-sharding.md": own})
    result = run("mv", "zero-sharding", "notes/zero/zero-redundancy.md", vault=vault)
    assert result.exit_code == 0, result.output
    assert "notes/s.md:8: topics/zero-sharding.md -> zero/zero-redundancy.md" in result.stdout
    text = (vault / "notes/s.md").read_text()
    assert "- [ZeRO sharding](zero/zero-redundancy.md) — links here\n" in text
    assert "- [DDP](topics/ddp.md) — same topic\n" in text  # another note's link: kept
    moved = (vault / "notes/zero/zero-redundancy.md").read_text()
    assert "- [S](../s.md)\n" in moved  # its own sidebar: re-rooted (same depth here)


def test_a_typo_in_covers_is_a_dangling_ref_with_a_suggestion(run, make_vault) -> None:  # type: ignore[no-untyped-def]
    files = {
        **TOPICS,
        "notes/a.md": "---\ntitle: A\ncovers:\n  - ddp\n  - fsdq\n---\n# A\n",
        "courses/c.md": "---\nunits:\n  - id: u1\n    title: One\n    covers: [fsdpp]\n---\n# C\n",
    }
    vault = make_vault(files)
    found = [(p["path"], p["line"], p["code"], p["message"]) for p in problems(run, vault)]
    assert found == [
        (
            "courses/c.md",
            5,
            "dangling-ref",
            "covers 'fsdpp', which names no topic (did you mean 'fsdp'?)",
        ),
        (
            "notes/a.md",
            5,
            "dangling-ref",
            "covers 'fsdq', which names no topic (did you mean 'fsdp'?)",
        ),
    ]


def test_a_name_the_front_matter_would_read_otherwise_is_refused(run, make_vault) -> None:  # type: ignore[no-untyped-def]
    vault = make_vault(FILES)
    before = tree_hashes(vault)
    code, data = run_json(run, "mv", "zero-sharding", "zero: two", vault=vault)
    assert code == 1  # id: zero: two is no YAML; requires: [zero: two] holds a mapping
    assert data["error"].startswith(
        "notes/topics/zero-sharding.md: renaming it there would change its front matter"
    )
    assert tree_hashes(vault) == before
