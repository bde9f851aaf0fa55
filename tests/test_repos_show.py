"""``studykb repos show NAME`` and a repository's ``progress`` file (its README's task
items, counted at the clone's HEAD), shown by ``status``; on small real git repositories
made with dulwich."""

from __future__ import annotations

from pathlib import Path

from conftest import run_json, tree_hashes
from repo_builder import DAY, START, GitRepo

README = """# Lab

Progress:

- [x] tokenizer
- [x] training loop
- [ ] kernels
  - [X] softmax
  - [ ] matmul

```markdown
- [x] an example in a fence: no task
- [ ] nor this
```

    - [x] indented code: no task either
"""
COURSE = """---
id: lab
title: The lab
aliases: [the-lab]
repo:
  url: https://github.com/x/lab
  path: ../lab
  progress: README.md
units:
  - id: u1
    title: Unit one
---
"""


def _setup(make_vault, tmp_path: Path, config: str = "") -> tuple[Path, GitRepo]:  # type: ignore[no-untyped-def]
    repo = GitRepo(tmp_path / "lab")
    repo.commit(
        {"README.md": README, "Notes/intro.md": "# Lab intro\n\nHello.\n", "src/a.py": "x = 1\n"},
        "lab",
        START,
    )
    vault = make_vault(
        {
            "courses/lab.md": COURSE,
            "notes/a.md": "# A\n\n[[lab:src/a.py#L1]] and [[lab:README.md]]\n",
            "notes/b.md": "# B\n\nSee [[lab:src/a.py]].\n",
        },
        config=config,
        name="vault",
    )
    return vault, repo


def test_repos_show_in_full(make_vault, run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    config = '[repos.lab]\nnotes = ["Notes/"]\n'
    vault, repo = _setup(make_vault, tmp_path, config)
    before = tree_hashes(repo.folder)
    code, data = run_json(run, "repos", "show", "lab", vault=vault)
    assert code == 0
    assert data["name"] == "lab" and data["state"] == "cloned"
    assert data["head"] == repo.repo.head().decode() and data["url"] == "https://github.com/x/lab"
    assert data["path"] == str(repo.folder)
    assert data["progress"]["done"] == 3 and data["progress"]["total"] == 5
    assert data["progress"]["commit"] == data["head"] and data["progress"]["path"] == "README.md"
    assert data["own_notes"] == [
        {"id": "intro", "path": "lab:Notes/intro.md", "title": "Lab intro"}
    ]
    files = {f["path"]: [(b["path"], b["line"]) for b in f["backlinks"]] for f in data["files"]}
    assert files == {
        "README.md": [("notes/a.md", 3)],
        "src/a.py": [("notes/a.md", 3), ("notes/b.md", 3)],
    }
    # by an alias of the course, in another case
    assert run_json(run, "repos", "show", "THE-LAB", vault=vault)[1]["name"] == "lab"
    text = run("repos", "show", "lab", vault=vault).stdout
    assert f"lab: HEAD {data['head'][:12]}" in text
    assert f"progress (README.md at {data['head'][:7]}): 3 of 5 checked" in text
    assert "lab:Notes/intro.md  Lab intro" in text
    assert "Links into its code (3 in 2 files)" in text
    assert "  lab:src/a.py\n    notes/a.md:3: [[lab:src/a.py#L1]]\n    notes/b.md:3:" in text
    assert tree_hashes(repo.folder) == before


def test_repos_show_of_an_unknown_name(make_vault, run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    vault, _repo = _setup(make_vault, tmp_path)
    result = run("repos", "show", "lap", vault=vault)
    assert result.exit_code == 1
    assert "No tracked repository named 'lap'" in result.stderr
    assert "Did you mean: lab?" in result.stderr
    assert result.stdout == ""


def test_repos_show_escapes_the_terminal(make_vault, run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    vault, repo = _setup(make_vault, tmp_path, '[repos.lab]\nnotes = ["Notes/"]\n')
    repo.commit({"Notes/evil.md": "# Evil \x1b[2J title\n"}, "evil", START + DAY)
    _code, data = run_json(run, "repos", "show", "lab", vault=vault)
    assert "\x1b" in data["own_notes"][0]["title"]  # JSON carries it as it is (escaped by JSON)
    text = run("repos", "show", "lab", vault=vault).stdout
    assert "\x1b" not in text and "Evil" in text and "title" in text


def test_progress_is_read_at_head_and_follows_new_commits(make_vault, run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    vault, repo = _setup(make_vault, tmp_path)
    _code, data = run_json(run, "status", vault=vault)
    progress = data["courses"][0]["progress"]
    assert (progress["done"], progress["total"], progress["message"]) == (3, 5, None)
    first = repo.repo.head().decode()
    assert progress["commit"] == first
    text = run("status", vault=vault).stdout
    assert f"progress (README.md at {first[:7]}): 3 of 5 checked" in text
    # the working tree is not read: only what is committed counts
    (repo.folder / "README.md").write_text("- [x] a\n- [x] b\n")
    assert run_json(run, "status", vault=vault)[1]["courses"][0]["progress"]["done"] == 3
    second = repo.commit(
        {"README.md": README.replace("- [ ] kernels", "- [x] kernels")}, "k", START + DAY
    )
    progress = run_json(run, "status", vault=vault)[1]["courses"][0]["progress"]
    assert (progress["done"], progress["total"], progress["commit"]) == (4, 5, second)
    assert (
        f"progress (README.md at {second[:7]}): 4 of 5 checked" in run("status", vault=vault).stdout
    )


def test_progress_named_in_studykb_toml(make_vault, run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = GitRepo(tmp_path / "k")
    repo.commit({"TODO.md": "- [x] one\n- [ ] two\n", "README.md": "- [x] r\n"}, "k", START)
    course = COURSE.replace("  progress: README.md\n", "").replace("../lab", "")
    vault = make_vault(
        {"courses/lab.md": course},
        config='[repos.lab]\npath = "../k"\nprogress = "TODO.md"\n',
        name="vault",
    )
    progress = run_json(run, "status", vault=vault)[1]["courses"][0]["progress"]
    assert (progress["path"], progress["done"], progress["total"]) == ("TODO.md", 1, 2)
    result = run("status", vault=vault, cwd=vault)
    assert result.exit_code == 0
    (vault / "studykb.toml").write_text('[repos.lab]\npath = "../k"\nprogress = 3\n')
    result = run("status", vault=vault)
    assert (
        result.exit_code == 2
        and "studykb.toml:1" in result.stderr
        and "progress = 3" in result.stderr
    )


def test_progress_file_missing_or_no_clone(make_vault, run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    vault, repo = _setup(make_vault, tmp_path)
    repo.commit({"README.md": None}, "gone", START + DAY)
    progress = run_json(run, "status", vault=vault)[1]["courses"][0]["progress"]
    assert progress["done"] is None and progress["total"] is None
    assert "README.md is not in lab at HEAD" in progress["message"]
    text = run("status", vault=vault).stdout
    assert "progress (README.md): README.md is not in lab at HEAD" in text
    # tracked by URL only: no clone, so nothing to read it from
    (vault / "courses" / "lab.md").write_text(COURSE.replace("  path: ../lab\n", ""))
    _code, data = run_json(run, "status", vault=vault)
    message = data["courses"][0]["progress"]["message"]
    assert "lab names no clone here" in message and "cannot be read without a clone" in message
    code, shown = run_json(run, "repos", "show", "lab", vault=vault)
    assert code == 0 and shown["state"] == "missing" and shown["progress"]["message"] == message
    assert "cannot be read without a clone" in run("repos", "show", "lab", vault=vault).stdout


def test_status_without_progress_has_no_progress_key(make_vault, run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    vault, _repo = _setup(make_vault, tmp_path)
    (vault / "courses" / "lab.md").write_text(COURSE.replace("  progress: README.md\n", ""))
    _code, data = run_json(run, "status", vault=vault)
    assert "progress" not in data["courses"][0]
    assert "progress (" not in run("status", vault=vault).stdout


def test_progress_of_an_entry_with_kind_repo(make_vault, run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = GitRepo(tmp_path / "eng")
    repo.commit({"docs/ROADMAP.md": "- [x] a\n- [x] b\n- [ ] c\n"}, "e", START)
    entry = (
        "---\nid: eng\ntitle: Engine\nkind: repo\nurl: https://github.com/x/eng\n"
        "repo:\n  progress: docs/ROADMAP.md\n---\n"
    )
    vault = make_vault(
        {"entries/eng.md": entry}, config='[repos.eng]\npath = "../eng"\n', name="vault"
    )
    _code, data = run_json(run, "repos", "show", "eng", vault=vault)
    assert (data["progress"]["done"], data["progress"]["total"]) == (2, 3)
    assert data["files"] == [] and data["own_notes"] == []
    assert "No notes link into eng" in run("repos", "show", "eng", vault=vault).stdout


def test_check_says_a_progress_file_that_cannot_be_counted(make_vault, run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = GitRepo(tmp_path / "k")
    repo.commit({"TODO.md": "- [x] one\n", "docs/a.md": "# a\n"}, "k", START)
    config = '# tracked\n[repos.lab]\npath = "../k"\nprogress = "TODO.md"\n'
    vault = make_vault({"notes/a.md": "# a\n"}, config=config, name="vault")

    def progress_problems() -> list[dict]:  # type: ignore[type-arg]
        _code, data = run_json(run, "check", vault=vault)
        return [p for p in data["problems"] if p["code"] == "bad-progress"]

    assert progress_problems() == []
    for named, why in (("NOPE.md", "NOPE.md is not in lab at HEAD"), ("docs", "is a folder")):
        (vault / "studykb.toml").write_text(config.replace("TODO.md", named))
        found = progress_problems()
        assert [(p["path"], p["line"], p["severity"]) for p in found] == [
            ("studykb.toml", 2, "warning")
        ]
        assert why in found[0]["message"] and "'lab'" in found[0]["message"]
    # a repository tracked by URL only has no clone here to read it from: not a problem
    (vault / "studykb.toml").write_text('[repos.lab]\nurl = "https://x/y"\nprogress = "NOPE.md"\n')
    assert progress_problems() == []
