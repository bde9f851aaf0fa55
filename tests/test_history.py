"""``status --history``: progress over time from the vault's own git history (real git
repositories made with dulwich in each test)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import run_json, tree_hashes
from repo_builder import DAY, START, GitRepo
from studykb.outputs.progress import Bucket, bar, buckets
from studykb.repos.history import Day


def _note(title: str, status: str | None = None, extra: str = "") -> str:
    line = f"status: {status}\n" if status else ""
    return f"---\ntitle: {title}\n{line}{extra}---\n\n# {title}\n"


def _course(first: str | None, second: str | None) -> str:
    def unit(uid: str, status: str | None) -> str:
        return f"  - id: {uid}\n    title: Unit {uid}\n" + (
            f"    status: {status}\n" if status else ""
        )

    return f"---\nid: c1\ntitle: Course one\nunits:\n{unit('u1', first)}{unit('u2', second)}---\n"


def _vault(folder: Path, config: str = "") -> GitRepo:
    repo = GitRepo(folder)
    repo.commit(
        {
            "studykb.toml": config,
            "notes/a.md": _note("Note A", "todo"),
            "notes/b.md": _note("Note B"),
            "courses/c1.md": _course("reading", None),
            "notes/plain.txt": "status: done\n",
        },
        "start",
        START,
    )
    repo.commit({"notes/a.md": _note("Note A", "reading")}, "reading a", START + 2 * DAY)
    repo.commit({"notes/b.md": _note("Note B", extra="tags: [x]\n")}, "no status", START + 3 * DAY)
    repo.commit(
        {"notes/a.md": _note("Note A", "done"), "courses/c1.md": _course("done", None)},
        "done",
        START + 5 * DAY,
    )
    repo.commit({"notes/b.md": _note("Note B", "reading")}, "b", START + 5 * DAY + 3600)
    return repo


def test_history_counts_each_day_and_lists_the_changes(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = _vault(tmp_path / "vault")
    before = tree_hashes(repo.folder)
    code, data = run_json(run, "status", "--history", vault=repo.folder)
    assert code == 0
    assert data["history"] == [
        {"date": "2026-11-01", "done": 0, "reading": 1, "todo": 2},
        {"date": "2026-11-03", "done": 0, "reading": 2, "todo": 1},
        {"date": "2026-11-06", "done": 2, "reading": 1, "todo": 1},
    ]
    changes = [(e["date"], e["id"], e["from"], e["to"]) for e in data["events"]]
    assert changes == [
        ("2026-11-01", "a", None, "todo"),
        ("2026-11-01", "c1#u1", None, "reading"),
        ("2026-11-01", "c1#u2", None, "todo"),
        ("2026-11-03", "a", "todo", "reading"),
        ("2026-11-06", "a", "reading", "done"),
        ("2026-11-06", "c1#u1", "reading", "done"),
        ("2026-11-06", "b", None, "reading"),
    ]
    last = data["events"][-1]
    assert last["path"] == "notes/b.md" and last["title"] == "Note B"
    assert last["commit"] == repo.repo.head().decode()[:12]
    assert data["commits"] == 5 and data["complete"] is True and data["folder"] == ""
    assert tree_hashes(repo.folder) == before  # read only


def test_history_text_is_a_chart_of_block_characters(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = _vault(tmp_path / "vault")
    result = run("status", "--history", "--limit", "2", vault=repo.folder)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "Progress" and "by day, from 5 commits" in lines[1]
    chart = lines[2 : lines.index("Latest changes (of 7)")]
    assert [line.split()[0] for line in chart] == [f"2026-11-0{d}" for d in range(1, 7)]
    # the day's counts carried into the days without a change; 4 items at most: 40 columns
    assert chart[0].split()[1] == "▒" * 10 + "░" * 20
    assert chart[-1].split()[1] == "█" * 20 + "▒" * 10 + "░" * 10
    assert "2 done   1 reading   1 todo" in chart[-1]
    shown = lines[lines.index("Latest changes (of 7)") + 1 :]
    assert len(shown) == 2
    assert "new → reading" in shown[0] and "Note B (b)" in shown[0]
    assert "reading → done" in shown[1] and "(c1#u1)" in shown[1]
    assert "\x1b" not in result.stdout  # NO_COLOR, piped


def test_a_vault_in_a_subfolder_reads_only_its_folder(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = GitRepo(tmp_path / "project")
    repo.commit(
        {
            "README.md": _note("Readme", "done"),
            "kb/studykb.toml": "",
            "kb/notes/a.md": _note("Note A", "reading"),
        },
        "start",
        START,
    )
    repo.commit({"src/x.md": _note("X", "done")}, "outside", START + DAY)
    repo.commit({"kb/notes/a.md": _note("Note A", "done")}, "done", START + 2 * DAY)
    code, data = run_json(run, "status", "--history", vault=repo.folder / "kb")
    assert code == 0
    assert data["folder"] == "kb"
    assert data["history"] == [
        {"date": "2026-11-01", "done": 0, "reading": 1, "todo": 0},
        {"date": "2026-11-03", "done": 1, "reading": 0, "todo": 0},
    ]
    assert [(e["path"], e["from"], e["to"]) for e in data["events"]] == [
        ("notes/a.md", None, "reading"),
        ("notes/a.md", "reading", "done"),
    ]


def test_excluded_hidden_and_renamed_files(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = GitRepo(tmp_path / "vault")
    repo.commit(
        {
            "studykb.toml": 'exclude = ["drafts", "*.tmp.md"]\n',
            "notes/a.md": _note("Note A", "reading", "id: a\n"),
            "drafts/d.md": _note("Draft", "done"),
            "notes/x.tmp.md": _note("Tmp", "done"),
            ".hidden/h.md": _note("Hidden", "done"),
        },
        "start",
        START,
    )
    repo.commit({"notes/a.md": None, "notes/moved.md": _note("Note A", "reading", "id: a\n")})
    code, data = run_json(run, "status", "--history", vault=repo.folder)
    assert code == 0
    assert [(e["id"], e["to"]) for e in data["events"]] == [("a", "reading")]  # the move: none
    assert data["history"] == [{"date": "2026-11-01", "done": 0, "reading": 1, "todo": 0}]


def test_since_and_commits_start_from_the_counts_before(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = _vault(tmp_path / "vault")
    code, data = run_json(run, "status", "--history", "--since", "2026-11-04", vault=repo.folder)
    assert code == 0 and data["complete"] is False and data["commits"] == 3
    assert data["history"] == [
        {"date": "2026-11-04", "done": 0, "reading": 2, "todo": 1},
        {"date": "2026-11-06", "done": 2, "reading": 1, "todo": 1},
    ]
    assert [e["id"] for e in data["events"]] == ["a", "c1#u1", "b"]
    code, data = run_json(run, "status", "--history", "--commits", "2", vault=repo.folder)
    assert code == 0 and data["commits"] == 2
    assert [e["id"] for e in data["events"]] == ["a", "c1#u1", "b"]
    assert data["history"] == [{"date": "2026-11-06", "done": 2, "reading": 1, "todo": 1}]


def test_no_repository_is_a_clear_message(run, make_vault) -> None:  # type: ignore[no-untyped-def]
    vault = make_vault({"notes/a.md": _note("A", "done")})
    result = run("status", "--history", vault=vault)
    assert result.exit_code == 1
    assert "not in a git repository" in result.stderr and str(vault.resolve()) in result.stderr
    result = run("status", "--history", "--json", vault=vault)
    assert result.exit_code == 1 and "not in a git repository" in result.stdout + result.stderr


def test_an_empty_repository_and_a_bad_date(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = GitRepo(tmp_path / "vault")
    (repo.folder / "studykb.toml").write_text("")
    result = run("status", "--history", vault=repo.folder)
    assert result.exit_code == 1 and "no commits yet" in result.stderr
    repo.commit({"notes/a.md": _note("A", "done")})
    result = run("status", "--history", "--since", "last week", vault=repo.folder)
    assert result.exit_code == 2 and "'last week' is not a date" in result.stderr


def test_a_hostile_title_is_printed_harmless(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = GitRepo(tmp_path / "vault")
    title = "[bold red]x[/] \x1b]0;pwned\x07 <b>"
    repo.commit({"studykb.toml": "", "notes/a.md": _note(json.dumps(title), "done")})
    result = run("status", "--history", vault=repo.folder)
    assert result.exit_code == 0, result.stderr
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "[bold red]x[/] ␛]0;pwned␇ <b>" in result.stdout


def test_a_vault_with_nothing_marked(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = GitRepo(tmp_path / "vault")
    repo.commit({"studykb.toml": "", "notes/a.md": "# A\n"})
    result = run("status", "--history", vault=repo.folder)
    assert result.exit_code == 0, result.stderr
    assert "2026-11-01" in result.stdout and "0 done" in result.stdout


def test_buckets_carry_the_counts_forward_by_week_and_month() -> None:
    days = [Day("2026-11-02", 1, 0, 3), Day("2026-11-20", 2, 1, 1), Day("2027-01-05", 4, 0, 0)]
    by, weeks = buckets(days, "week")
    assert by == "week" and weeks[0] == Bucket("2026-W45", 1, 0, 3)
    assert weeks[2] == Bucket("2026-W47", 2, 1, 1) and weeks[-1] == Bucket("2027-W01", 4, 0, 0)
    assert len(weeks) == 10
    by, months = buckets(days, "month")
    assert [b.label for b in months] == ["2026-11", "2026-12", "2027-01"]
    assert months[1] == Bucket("2026-12", 2, 1, 1)
    assert buckets(days)[0] == "week" and buckets(days[:2])[0] == "day"
    assert bar(Bucket("x", 1, 1, 2), 8, 8) == "█▒░░"


def test_a_vault_in_a_worktree(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    git = shutil.which("git")
    if git is None:
        pytest.skip("no git binary")
    repo = _vault(tmp_path / "main")
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(
        [git, "-C", str(repo.folder), "worktree", "add", "-q", "--detach", str(tmp_path / "wt")],
        check=True,
        env=env,
    )
    code, data = run_json(run, "status", "--history", vault=tmp_path / "wt")
    assert code == 0 and data["commits"] == 5 and data["history"][-1]["done"] == 2
    assert data["repository"] == str((tmp_path / "wt").resolve())


def test_a_shallow_clone_and_a_damaged_one(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = _vault(tmp_path / "vault")
    head = repo.repo[repo.repo.head()]
    middle = repo.repo[head.parents[0]]  # the 4th commit: "done"
    (repo.folder / ".git" / "shallow").write_text(middle.id.decode() + "\n")
    code, data = run_json(run, "status", "--history", vault=repo.folder)
    assert code == 0 and data["commits"] == 2 and data["complete"] is False
    assert [e["id"] for e in data["events"]] == ["b"]  # the counts before: from the files
    assert data["history"][-1] == {"date": "2026-11-06", "done": 2, "reading": 1, "todo": 1}
    (repo.folder / ".git" / "shallow").unlink()
    tree = middle.tree.decode()
    (repo.folder / ".git" / "objects" / tree[:2] / tree[2:]).unlink()
    result = run("status", "--history", vault=repo.folder)
    assert result.exit_code == 1 and "is damaged" in result.stderr


def test_a_dot_git_that_is_no_repository(run, make_vault) -> None:  # type: ignore[no-untyped-def]
    vault = make_vault({"notes/a.md": _note("A", "done"), ".git/nothing": ""})
    result = run("status", "--history", vault=vault)
    assert result.exit_code == 1 and "is not a git repository" in result.stderr
