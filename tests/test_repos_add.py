"""``studykb repos add NAME --path P [--url U]``: a ``[repos.NAME]`` table appended to
studykb.toml with every other byte kept, the address read from the clone's ``origin``
remote, and refusals (no repository, a name or address taken, a bad name) that write
nothing. Real clones made with dulwich."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from conftest import run_json, tree_hashes
from repo_builder import GitRepo

CONFIG = """# my vault's settings
title = "Study"   # shown on the site

exclude = ["drafts/**"]

[repos.kernels]   # the seminar's kernels
path = "~/src/kernels"
url = "https://github.com/x/kernels"

# keep this comment
"""
COURSE = """---
id: cs336
title: CS336
repo: https://github.com/stanford/cs336
---
# CS336
"""


def clone(tmp_path: Path, name: str = "cs336", origin: str | None = None) -> GitRepo:
    repo = GitRepo(tmp_path / name)
    repo.commit({"a1/bpe.py": "def train():\n    pass\n"}, "a1")
    if origin is not None:
        config = repo.repo.get_config()
        config.set((b"remote", b"origin"), b"url", origin.encode())
        config.write_to_path()
    return repo


def vault_with(make_vault: Any, config: str | None = CONFIG) -> Path:
    vault: Path = make_vault(
        {"courses/cs336.md": COURSE, "notes/a.md": "# a\n\n[[cs336:a1/bpe.py#train]]\n"},
        config=config,
        name="vault",
    )
    return vault


def read(vault: Path) -> bytes:
    return (vault / "studykb.toml").read_bytes()


def test_add_keeps_every_other_byte_and_reads_origin(
    make_vault: Any, run: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = vault_with(make_vault)
    repo = clone(tmp_path, origin="https://user:secret@github.com/stanford/cs336.git")
    monkeypatch.chdir(tmp_path)
    code, data = run_json(run, "repos", "add", "cs336", "--path", "cs336", vault=vault)
    assert code == 0
    after = read(vault)
    assert after.startswith(CONFIG.encode())  # every byte kept, comments included
    added = after[len(CONFIG) :].decode()
    assert added == (
        '\n[repos.cs336]\npath = "../cs336"\nurl = "https://github.com/stanford/cs336.git"\n'
    )  # relative to the vault's folder; the password never written
    assert data["path"] == "../cs336" and data["head"] == repo.repo.head().decode()
    assert data["url"] == "https://github.com/stanford/cs336.git" and data["created"] is False
    assert data["document"] == "courses/cs336.md"  # it gives the course its clone
    # the table is read back: the course's repository is now cloned, its link judged
    _code, listing = run_json(run, "repos", vault=vault)
    rows = {r["name"]: r for r in listing["repos"]}
    assert rows["cs336"]["state"] == "cloned" and rows["cs336"]["head"] == data["head"]
    assert rows["cs336"]["path"] == str(tmp_path / "cs336")


def test_add_with_a_url_makes_the_file_and_writes_names_toml_must_quote(
    make_vault: Any, run: Any, tmp_path: Path
) -> None:
    vault = vault_with(make_vault, config=None)
    clone(tmp_path, "dp")
    where = str(tmp_path / "dp")
    code, data = run_json(
        run, "repos", "add", "deep.infer", "--path", where, "--url", "https://g/x", vault=vault
    )
    assert code == 0 and data["created"] is True and data["head"]
    text = read(vault).decode()
    assert text == f'[repos."deep.infer"]\npath = "{where}"\nurl = "https://g/x"\n'
    assert tomllib.loads(text)["repos"]["deep.infer"]["path"] == where
    plain = run("repos", "add", "other", "--path", "~/nowhere-at-all", vault=vault)
    assert plain.exit_code == 1 and "not a folder" in plain.stderr


def test_add_under_a_studykb_table(make_vault: Any, run: Any, tmp_path: Path) -> None:
    config = '[studykb]\ntitle = "x"\n'
    vault = vault_with(make_vault, config=config)
    clone(tmp_path, "k")
    code, _data = run_json(run, "repos", "add", "k", "--path", str(tmp_path / "k"), vault=vault)
    assert code == 0
    text = read(vault).decode()
    assert text.startswith(config) and "\n[studykb.repos.k]\n" in text
    assert tomllib.loads(text)["studykb"]["repos"]["k"]["path"] == str(tmp_path / "k")


@pytest.mark.parametrize(
    ("args", "exit_code", "says"),
    [
        (["kernels", "--path", "{clone}"], 1, "studykb.toml:6: [repos.kernels] names"),
        (["KERNELS", "--path", "{clone}"], 1, "[repos.kernels] names a repository"),
        (["k2", "--path", "{clone}", "--url", "https://github.com/x/kernels/"], 1, "tracks"),
        (["k2", "--path", "{plain}"], 1, "is not a git repository"),
        (["k2", "--path", "{missing}"], 1, "is not a folder"),
        (["bad name", "--path", "{clone}"], 2, "cannot name a repository"),
        (["-x", "--path", "{clone}"], 2, ""),
        (["a:b", "--path", "{clone}"], 2, "cannot name a repository"),
    ],
)
def test_refusals_write_nothing(
    make_vault: Any, run: Any, tmp_path: Path, args: list[str], exit_code: int, says: str
) -> None:
    vault = vault_with(make_vault)
    clone(tmp_path)
    (tmp_path / "plain").mkdir()
    places = {
        "clone": str(tmp_path / "cs336"),
        "plain": str(tmp_path / "plain"),
        "missing": str(tmp_path / "missing"),
    }
    before = tree_hashes(vault)
    result = run("repos", "add", *[a.format(**places) for a in args], vault=vault)
    assert result.exit_code == exit_code, result.stdout + result.stderr
    assert says in result.stderr
    assert tree_hashes(vault) == before


def test_an_inline_repos_table_is_refused(make_vault: Any, run: Any, tmp_path: Path) -> None:
    config = 'title = "x"\nrepos = { a = { path = "../a" } }\n'
    vault = vault_with(make_vault, config=config)
    clone(tmp_path)
    result = run("repos", "add", "b", "--path", str(tmp_path / "cs336"), vault=vault)
    assert result.exit_code == 1 and "studykb.toml:2: repos is written as a value" in result.stderr
    assert read(vault).decode() == config


def test_repos_add_is_never_sent_to_a_running_watch() -> None:
    from studykb.launch import reads_only

    assert reads_only(["repos", "--json"]) == (None, True)
    assert reads_only(["repos", "add", "x", "--path", "p"]) == (None, False)
    assert reads_only(["--vault", "repos", "repos", "add", "x"]) == ("repos", False)
    assert reads_only(["--vault", "repos", "repos"]) == ("repos", True)


def test_add_in_a_folder_without_studykb_toml_is_not_told_there_is_none(
    make_vault: Any, run: Any, tmp_path: Path
) -> None:
    """The notice "no studykb.toml here" is said by the first refresh of a folder read as a
    vault without one; after ``repos add`` made the file it would be false."""
    vault = vault_with(make_vault, config=None)
    clone(tmp_path, "k")
    result = run("repos", "add", "k", "--path", str(tmp_path / "k"), cwd=vault)
    assert result.exit_code == 0, result.stderr
    assert (vault / "studykb.toml").is_file()
    assert "no studykb.toml" not in result.stderr
    other = make_vault({"notes/a.md": "# a\n"}, config=None, name="other")
    told = run("check", cwd=other)
    assert told.exit_code == 0 and "no studykb.toml here" in told.stderr
