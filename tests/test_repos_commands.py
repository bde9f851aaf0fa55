"""``studykb repos``, ``backlinks NAME:path`` and ``status`` reading course progress from
the history of the course's repository (real git repositories made with dulwich)."""

from __future__ import annotations

import time
from pathlib import Path

from conftest import run_json, tree_hashes
from repo_builder import DAY, GitRepo

COURSE = """---
id: cs336
title: CS336
repo:
  url: https://github.com/x/cs336
  path: ../cs336
units:
  - id: a1
    title: A1 tokenizer
    path: assignment1
  - id: a2
    title: A2 systems
    path: [assignment2/kernels, assignment2/README.md]
  - id: a3
    title: A3 scaling
    path: assignment3
    status: done
  - id: a4
    title: A4 data
---
"""


def _setup(make_vault, tmp_path: Path) -> tuple[Path, GitRepo]:  # type: ignore[no-untyped-def]
    now = int(time.time())
    repo = GitRepo(tmp_path / "cs336")
    repo.commit({"assignment1/bpe.py": "def train():\n    pass\n"}, "a1", now - 60 * DAY)
    repo.commit({"assignment2/kernels/add.cu": "__global__ void add() {}\n"}, "a2", now - 2 * DAY)
    repo.commit({"assignment3/run.py": "x = 1\n"}, "a3", now - DAY)
    vault = make_vault(
        {
            "courses/cs336.md": COURSE,
            "notes/a.md": "# a\n\n[[cs336:assignment1/bpe.py#train]]\n[[cs336:assignment2]]\n",
            "notes/b.md": "# b\n\nSee [[cs336:assignment1/bpe.py#L1-2]].\n",
        },
        name="vault",
    )
    return vault, repo


def test_repos_lists_state_and_notes(make_vault, run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    vault, repo = _setup(make_vault, tmp_path)
    (vault / "studykb.toml").write_text('[repos.elsewhere]\nurl = "https://github.com/x/y"\n')
    code, data = run_json(run, "repos", vault=vault)
    assert code == 0
    rows = {r["name"]: r for r in data["repos"]}
    mine = rows["cs336"]
    assert mine["state"] == "cloned" and mine["notes"] == 2 and mine["clean"] is True
    assert mine["head"] == repo.repo.head().decode() and mine["url"] == "https://github.com/x/cs336"
    assert rows["elsewhere"]["state"] == "missing" and rows["elsewhere"]["notes"] == 0
    (repo.folder / "assignment1" / "bpe.py").write_text("changed\n")
    before = tree_hashes(repo.folder)  # .git included: the index is not refreshed either
    _code, data = run_json(run, "repos", vault=vault)
    assert tree_hashes(repo.folder) == before
    assert {r["name"]: r for r in data["repos"]}["cs336"]["clean"] is False
    text = run("repos", vault=vault).stdout
    assert "cs336: HEAD" in text and "2 notes link into it" in text and "not cloned here" in text


def test_backlinks_of_a_code_path(make_vault, run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    vault, _repo = _setup(make_vault, tmp_path)
    _code, data = run_json(run, "backlinks", "cs336:assignment1/bpe.py", vault=vault)
    assert [(b["path"], b["line"]) for b in data["backlinks"]] == [
        ("notes/a.md", 3),
        ("notes/b.md", 3),
    ]
    _code, data = run_json(run, "backlinks", "cs336:assignment2", vault=vault)
    assert [b["path"] for b in data["backlinks"]] == ["notes/a.md"]
    _code, data = run_json(run, "backlinks", "cs336:nothing.py", vault=vault)
    assert data["backlinks"] == []
    # the course itself still has every code link among its backlinks
    _code, data = run_json(run, "backlinks", "cs336", vault=vault)
    assert len(data["backlinks"]) == 3


def test_status_reads_unit_activity_from_the_repository(make_vault, run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    vault, _repo = _setup(make_vault, tmp_path)
    _code, data = run_json(run, "status", vault=vault)
    course = data["courses"][0]
    units = {u["id"]: u for u in course["units"]}
    assert units["cs336#a1"]["activity"]["active"] is False  # 60 days ago
    assert units["cs336#a2"]["activity"]["active"] is True  # 2 days ago: being read
    assert units["cs336#a3"]["activity"]["active"] is True
    assert "activity" not in units["cs336#a4"]  # maps to no path
    assert course["current"] == ["cs336#a2"]  # a3 is done already
    text = run("status", vault=vault).stdout
    assert "reading: A2 systems" in text and "(active)" in text
    (vault / "studykb.toml").write_text("active_days = 90\n")
    _code, data = run_json(run, "status", vault=vault)
    assert data["courses"][0]["current"] == ["cs336#a1", "cs336#a2"]


def test_show_of_a_code_link(make_vault, run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    vault, repo = _setup(make_vault, tmp_path)
    repo.commit({"assignment1/evil.py": "x = '\x1b[2J'\ndef f():\n    return 1\n"}, "evil")
    code, data = run_json(run, "show", "cs336:assignment1/bpe.py#train", vault=vault)
    assert code == 0 and data["lines"] == [1, 2] and data["text"].startswith("def train")
    assert data["commit"] == repo.repo.head().decode()
    _code, data = run_json(run, "show", "cs336:assignment2", vault=vault)
    assert data["files"] == ["assignment2/kernels/add.cu"]
    text = run("show", "cs336:assignment1/evil.py#L1-3", vault=vault).stdout
    assert "\x1b[2J" not in text and "def f" in text and "lines 1-3" in text
    long = "x" * 150
    repo.commit({"assignment1/wide.py": f"def g():\n    return '{long}'\n"}, "wide")
    text = run("show", "cs336:assignment1/wide.py#g", vault=vault).stdout
    assert f"2      return '{long}'" in text  # piped: numbered, whole, not cut at 80
    assert all(line == line.rstrip() for line in text.split("\n"))
    result = run("show", "cs336:assignment1/bpe.py#L5-9", vault=vault)
    assert result.exit_code == 1 and "bpe.py has 2 lines" in result.stderr
    result = run("show", "cs336:nothing.py", vault=vault)
    assert result.exit_code == 1 and "nothing.py is not in cs336" in result.stderr
    # a document is still shown as before
    assert run("show", "cs336", vault=vault).exit_code == 0


def test_a_vault_without_code_links_never_loads_git(make_vault) -> None:  # type: ignore[no-untyped-def]
    """``check`` of a vault that names no repository and links into no code costs what it
    did before the repo tracker: neither dulwich nor tree-sitter is loaded."""
    import subprocess
    import sys

    root = make_vault({"notes/a.md": "# A\n\n[[b]]\n", "notes/b.md": "# B\n"})
    code = (
        "import sys\nfrom studykb.api import Session\n"
        f"kb = Session.open({str(root)!r}); kb.refresh(); kb.problems()\n"
        "print(sorted(m for m in sys.modules if m.startswith(('dulwich', 'tree_sitter'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_code_links_into_uncloned_repositories_are_checked_without_git(make_vault) -> None:  # type: ignore[no-untyped-def]
    """A vault whose repositories are tracked by URL only (the bundled one) gets the same
    code-link problems as the clone-reading path, and never loads dulwich or tree-sitter."""
    import json
    import subprocess
    import sys

    root = make_vault(
        {
            "studykb.toml": '[repos.kernels]\nurl = "https://example.org/kernels"\n',
            "notes/a.md": "# A\n\n[[kernels:src/gemm.cu#run]] and [[kernals:src/add.cu]]\n",
            "notes/b.md": "# B\n\n[[nowhere:x.py#L1-2]]\n",
        }
    )
    code = (
        "import json, sys\nfrom studykb.api import Session\n"
        f"kb = Session.open({str(root)!r}); kb.refresh()\n"
        "light = [[p.path, p.line, p.code, p.message] for p in kb.problems()]\n"
        "loaded = sorted(m for m in sys.modules if m.startswith(('dulwich', 'tree_sitter')))\n"
        "from studykb.repos.check import with_code_problems\n"
        "full = with_code_problems(kb.vault, kb.vault.problems())\n"
        "full = [[p.path, p.line, p.code, p.message] for p in full]\n"
        "print(json.dumps([light, full, loaded]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    light, full, loaded = json.loads(out.stdout)
    assert loaded == []
    assert light == full
    messages = [m for _p, _l, c, m in light if c == "dangling-code"]
    assert len(messages) == 2 and "did you mean 'kernels'?" in messages[0]


def test_a_clone_inside_the_vault_is_not_read_as_its_notes(make_vault, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A repository cloned into the vault's folder and named by ``[repos.NAME]`` is the
    repository's: its Markdown is not scanned as the vault's notes (no duplicate ids, no
    dangling links of its own), while a folder of the same name elsewhere still is."""
    from studykb.api import Session

    root = make_vault(
        {
            "studykb.toml": '[repos.kb]\npath = "repos/kb"\n',
            "notes/a.md": "# A\n\n[[b]]\n",
            "notes/b.md": "# B\n",
            "repos/kb/README.md": "---\nid: b\n---\n# Theirs\n\n[[nowhere]]\n",
            "other/kb/c.md": "# C\n",
        }
    )
    with Session.open(root) as kb:
        kb.refresh()
        paths = sorted(doc.path for doc in kb.documents().values())
        problems = [(p.path, p.code) for p in kb.problems()]
    assert paths == ["notes/a.md", "notes/b.md", "other/kb/c.md"]
    assert not [p for p in problems if p[0].startswith("repos/")]
