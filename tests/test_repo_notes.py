"""A tracked repository's own Markdown read into the vault (``notes``): searchable,
linkable, in plans, read-only, and refreshed when the clone's HEAD moves; on small real
git repositories made with dulwich."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_json, tree_hashes
from repo_builder import DAY, START, GitRepo

README = "# Kernels lab\n\nHow to build the kernels. See [[kernels:Notes/tiling.md]].\n"
TILING = (
    "---\ntitle: Shared-memory tiling\nrequires: [warps]\n---\n"
    "# Shared-memory tiling\n\nTiling loads a block into shared memory; "
    "see [the intro](intro.md) and [the readme](../README.md), ![a figure](fig.png).\n"
)
INTRO = "# Lab intro\n\nWhat the lab is about: coalescing and occupancy.\n"


@pytest.fixture
def lab(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "clones" / "kernels")
    repo.commit(
        {
            "README.md": README,
            "Notes/tiling.md": TILING,
            "Notes/intro.md": INTRO,
            "Notes/fig.png": b"\x89PNG\r\n\x1a\n\0\0",
            "src/gemm.cu": "__global__ void gemm() {}\n",
            "docs/other.md": "# Not read\n\nzzzunread\n",
        },
        "lab",
        START,
    )
    return repo


CONFIG = '[repos.kernels]\npath = "../clones/kernels"\nnotes = ["README.md", "Notes/"]\n'
GEMM = (
    "---\ntitle: GEMM\nrequires: ['[[Shared-memory tiling]]']\n---\n"
    "# GEMM\n\nRead [[kernels:Notes/tiling.md]] and [[Lab intro]].\n"
)


def _vault(make_vault, config: str = CONFIG) -> Path:  # type: ignore[no-untyped-def]
    return make_vault(
        {
            "notes/warps.md": "---\ntitle: Warps\n---\n# Warps\n\nThirty-two threads.\n",
            "notes/gemm.md": GEMM,
        },
        config=config,
        name="vault",
    )


def _hits(run, vault: Path, query: str) -> list[str]:  # type: ignore[no-untyped-def]
    _code, data = run_json(run, "search", query, vault=vault)
    return [h["path"] for h in data["hits"]]


def test_notes_are_documents_searchable_and_linked(make_vault, run, lab) -> None:  # type: ignore[no-untyped-def]
    vault = _vault(make_vault)
    assert _hits(run, vault, "coalescing") == ["kernels:Notes/intro.md"]
    assert _hits(run, vault, "zzzunread") == []  # docs/ is not named in notes
    # [[kernels:Notes/tiling.md]] is the repository's note, not only its course
    _code, shown = run_json(run, "show", "notes/gemm.md", vault=vault)
    targets = {r["text"]: (r["target"] or {}).get("path") for r in shown["references"]}
    assert targets["[[kernels:Notes/tiling.md]]"] == "kernels:Notes/tiling.md"
    assert targets["[[Lab intro]]"] == "kernels:Notes/intro.md"
    assert targets["[[Shared-memory tiling]]"] == "kernels:Notes/tiling.md"
    _code, back = run_json(run, "backlinks", "kernels:Notes/tiling.md", vault=vault)
    assert {b["path"] for b in back["backlinks"]} == {"notes/gemm.md", "kernels:README.md"}
    # its relative links stay inside the repository
    _code, back = run_json(run, "backlinks", "Lab intro", vault=vault)
    assert {b["path"] for b in back["backlinks"]} == {"notes/gemm.md", "kernels:Notes/tiling.md"}
    _code, back = run_json(run, "backlinks", "kernels:README.md", vault=vault)
    assert {b["path"] for b in back["backlinks"]} == {"kernels:Notes/tiling.md"}
    _code, listed = run_json(run, "list", vault=vault)
    files = {d["path"]: d["file"] for d in listed["documents"]}
    assert files["kernels:Notes/intro.md"] == str(lab.folder / "Notes/intro.md")  # edit there
    assert files["notes/gemm.md"] == str(vault / "notes/gemm.md")
    code, checked = run_json(run, "check", vault=vault)
    assert code == 0, checked  # its figure is the repository's file: no missing-attachment
    assert checked["problems"] == []


def test_notes_are_in_plans(make_vault, run, lab) -> None:  # type: ignore[no-untyped-def]
    vault = _vault(make_vault)
    _code, plan = run_json(run, "before", "GEMM", "--all", vault=vault)
    steps = [s["path"] for s in plan["steps"]]
    # the repository's note requires the vault's note: both come before GEMM, in order
    assert steps == ["notes/warps.md", "kernels:Notes/tiling.md"]


def test_writing_commands_refuse_a_repository_note(make_vault, run, lab) -> None:  # type: ignore[no-untyped-def]
    vault = _vault(make_vault)
    run("check", vault=vault)
    clone, mine = tree_hashes(lab.folder), tree_hashes(vault)
    for args in (
        ("mark", "kernels:Notes/intro.md", "done"),
        ("sidebar", "kernels:Notes/intro.md", "--write"),
        ("mv", "kernels:README.md", "lab-readme"),
    ):
        result = run(*args, vault=vault)
        assert result.exit_code == 1, (args, result.stderr)
        assert "note of repository 'kernels'" in result.stderr, result.stderr
        assert "nothing was changed" in result.stderr
    # every note's sidebar: the vault's notes get one, the repository's are left alone
    assert run("sidebar", "--write", vault=vault).exit_code == 0
    assert "studykb:sidebar" in (vault / "notes/gemm.md").read_text(encoding="utf-8")
    # moving a vault note a repository's note requires leaves that note as it is
    code, moved = run_json(run, "mv", "warps", "warp-basics", vault=vault)
    assert code == 0
    assert moved["kept"] == ["kernels:Notes/tiling.md"]
    assert tree_hashes(lab.folder) == clone  # nothing written into the clone
    changed = {p for p, h in tree_hashes(vault).items() if mine.get(p) != h}
    assert changed == {"notes/gemm.md", "notes/warp-basics.md"}
    assert not any(":" in path for path in tree_hashes(vault))  # no NAME:path file made


def test_head_moved_reads_the_new_content(make_vault, run, lab) -> None:  # type: ignore[no-untyped-def]
    vault = _vault(make_vault)
    assert _hits(run, vault, "coalescing") == ["kernels:Notes/intro.md"]
    lab.commit(
        {
            "Notes/intro.md": "# Lab intro\n\nNow about bank conflicts, bankconflictword.\n",
            "Notes/shuffle.md": "# Warp shuffles\n\nshufflexyz moves registers.\n",
            "Notes/tiling.md": None,
        },
        "pull",
        START + DAY,
    )
    assert _hits(run, vault, "coalescing") == []
    assert _hits(run, vault, "bankconflictword") == ["kernels:Notes/intro.md"]
    assert _hits(run, vault, "shufflexyz") == ["kernels:Notes/shuffle.md"]
    _code, listed = run_json(run, "list", vault=vault)
    paths = {d["path"] for d in listed["documents"]}
    assert {p for p in paths if p.startswith("kernels:")} == {
        "kernels:README.md",
        "kernels:Notes/intro.md",
        "kernels:Notes/shuffle.md",
    }
    result = run("show", "kernels:Notes/tiling.md", vault=vault)
    assert result.exit_code == 1 and "not in kernels at HEAD" in result.stderr
    _code, shown = run_json(run, "show", "notes/gemm.md", vault=vault)
    targets = {r["text"]: r["state"] for r in shown["references"]}
    assert targets["[[Shared-memory tiling]]"] == "dangling"


def test_unreadable_files_are_skipped_with_a_message(make_vault, run, lab) -> None:  # type: ignore[no-untyped-def]
    lab.commit(
        {
            "Notes/binary.md": b"# x\n\0\0\0",
            "Notes/latin.md": "# Caf\xe9\n".encode("latin-1"),
            "Notes/huge.md": "# Huge\n\n" + "word " * 220_000,
        },
        "odd files",
        START + DAY,
    )
    lab.symlink("Notes/link.md", "intro.md", START + 2 * DAY)
    vault = _vault(make_vault)
    before = tree_hashes(lab.folder)
    code, checked = run_json(run, "check", vault=vault)
    assert code == 0  # warnings only
    said = {
        p["message"].split(" ")[0]: p for p in checked["problems"] if p["code"] == "skipped-note"
    }
    assert set(said) == {
        "kernels:Notes/binary.md",
        "kernels:Notes/latin.md",
        "kernels:Notes/huge.md",
        "kernels:Notes/link.md",
    }
    assert all((p["path"], p["line"]) == ("studykb.toml", 1) for p in said.values())
    assert "binary" in said["kernels:Notes/binary.md"]["message"]
    assert "not UTF-8" in said["kernels:Notes/latin.md"]["message"]
    assert "1 MB" in said["kernels:Notes/huge.md"]["message"]
    assert "symbolic link" in said["kernels:Notes/link.md"]["message"]
    assert _hits(run, vault, "coalescing") == ["kernels:Notes/intro.md"]  # the rest is read
    _code, listed = run_json(run, "list", vault=vault)
    paths = {d["path"] for d in listed["documents"]}
    assert not {p for p in paths if p.startswith("kernels:") and p not in _READ}
    assert tree_hashes(lab.folder) == before  # nothing written into the clone
    # a note that is binary at a later HEAD goes away rather than staying stale
    lab.commit({"Notes/intro.md": b"\0binary now"}, "oops", START + 3 * DAY)
    assert _hits(run, vault, "coalescing") == []
    assert not (lab.folder / ".studykb").exists()


_READ = {"kernels:README.md", "kernels:Notes/tiling.md", "kernels:Notes/intro.md"}


def test_repos_json_counts_own_notes(make_vault, run, lab, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    other = GitRepo(tmp_path / "clones" / "other")
    other.commit({"README.md": "# Other\n"}, "other", START)
    config = CONFIG + '\n[repos.other]\npath = "../clones/other"\n'
    vault = _vault(make_vault, config)
    _code, data = run_json(run, "repos", vault=vault)
    own = {row["name"]: row["own_notes"] for row in data["repos"]}
    assert own == {"kernels": 3, "other": 0}  # other says no notes: none read
    assert "3 own notes read" in run("repos", vault=vault).stdout


def test_a_course_repo_table_names_notes(make_vault, run, lab) -> None:  # type: ignore[no-untyped-def]
    course = (
        "---\nid: kernels\ntitle: Kernels course\nrepo:\n  url: https://example.com/kernels\n"
        "  path: ../clones/kernels\n  notes: [Notes/intro.md, nothere/]\n---\n# Kernels\n"
    )
    vault = make_vault(
        {"courses/kernels.md": course, "notes/gemm.md": GEMM}, config="", name="vault"
    )
    assert _hits(run, vault, "coalescing") == ["kernels:Notes/intro.md"]
    assert _hits(run, vault, "shared memory") == []  # tiling.md is not named
    _code, checked = run_json(run, "check", vault=vault)
    missing = [p for p in checked["problems"] if p["code"] == "missing-notes"]
    assert [(p["path"], p["line"]) for p in missing] == [("courses/kernels.md", 7)]
    assert "kernels:nothere" in missing[0]["message"]
    # the course stops naming notes: they leave the knowledge base
    (vault / "courses/kernels.md").write_text(course.replace("  notes: [", "  x: ["), "utf-8")
    assert _hits(run, vault, "coalescing") == []


def test_the_web_view_reads_a_note_from_the_clone(make_vault, run, lab) -> None:  # type: ignore[no-untyped-def]
    from studykb.api import Session

    vault = _vault(make_vault)
    with Session.open(vault) as kb:
        kb.refresh()
        assert kb.read_file("kernels:README.md") == README.encode()
        assert kb.read_file("notes/warps.md") is not None
        assert kb.read_file("kernels:docs/other.md") is None  # not a note it reads


def test_bad_notes_in_studykb_toml_is_named_by_line(make_vault, run, lab) -> None:  # type: ignore[no-untyped-def]
    config = '# repos\n[repos.kernels]\npath = "../clones/kernels"\nnotes = 3\n'
    vault = _vault(make_vault, config)
    result = run("check", vault=vault)
    assert result.exit_code == 2
    assert "studykb.toml:2: [repos.kernels] notes = 3 is not a list" in result.stderr


def test_no_notes_reads_nothing_of_the_repository(make_vault, run, lab) -> None:  # type: ignore[no-untyped-def]
    config = '[repos.kernels]\npath = "../clones/kernels"\n'
    vault = _vault(make_vault, config)
    assert _hits(run, vault, "coalescing") == []
    _code, data = run_json(run, "repos", vault=vault)
    assert data["repos"][0]["own_notes"] == 0


def test_a_damaged_blob_is_skipped_not_a_traceback(make_vault, run, lab) -> None:  # type: ignore[no-untyped-def]
    from dulwich.object_store import tree_lookup_path

    head = lab.repo[lab.repo.head()]
    _mode, sha = tree_lookup_path(lab.repo.__getitem__, head.tree, b"Notes/intro.md")
    loose = lab.folder / ".git" / "objects" / sha[:2].decode() / sha[2:].decode()
    loose.chmod(0o644)
    loose.write_bytes(b"not a git object")
    vault = _vault(make_vault)
    code, checked = run_json(run, "check", vault=vault)  # `run` fails on any traceback
    skipped = [p["message"] for p in checked["problems"] if p["code"] == "skipped-note"]
    assert len(skipped) == 1 and "kernels:Notes/intro.md" in skipped[0], skipped
    assert "damaged" in skipped[0]
    assert _hits(run, vault, "coalescing") == []
    assert "kernels:README.md" in {
        d["path"] for d in run_json(run, "list", vault=vault)[1]["documents"]
    }


def test_head_commit_is_read_as_dulwich_reads_it(lab, tmp_path: Path) -> None:
    from studykb.repos.head import head_commit

    assert head_commit(lab.folder) == lab.repo.head().decode()
    lab.repo.refs.pack_refs(all=True)  # the branch now only in packed-refs
    assert not (lab.folder / ".git" / "refs" / "heads" / "master").exists()
    assert head_commit(lab.folder) == lab.repo.head().decode()
    second = lab.commit({"Notes/intro.md": "# Lab intro\n\nagain\n"}, "more", START + DAY)
    assert head_commit(lab.folder) == second
    (lab.folder / ".git" / "HEAD").write_text(second + "\n")  # detached
    assert head_commit(lab.folder) == second
    for head in ("ref: refs/heads/../../../../etc/passwd\n", "ref: refs/tags/v1\n", "junk\n"):
        (lab.folder / ".git" / "HEAD").write_text(head)
        assert head_commit(lab.folder) is None  # left to dulwich (which says what is wrong)
    assert head_commit(tmp_path) is None  # no repository


def test_an_unchanged_head_reads_no_git(make_vault, run, lab) -> None:  # type: ignore[no-untyped-def]
    import subprocess
    import sys

    vault = _vault(make_vault)
    lab.symlink("Notes/link.md", "intro.md", START + DAY)
    run("check", vault=vault)
    probe = (
        "import sys; from studykb.api import Session\n"
        f"kb = Session.open({str(vault)!r}); stats = kb.refresh()\n"
        "codes = sorted(p.code for p in kb.vault.problems())\n"
        "print(stats.changed, 'dulwich' in sys.modules, codes)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    # nothing changed, git not loaded, and what it said of the notes is still said
    assert out.split(" ", 2)[:2] == ["False", "False"], out
    assert "'skipped-note'" in out
    assert _hits(run, vault, "coalescing") == ["kernels:Notes/intro.md"]


def test_a_course_that_begins_to_name_notes_brings_them_in_at_once(make_vault, run, lab) -> None:  # type: ignore[no-untyped-def]
    # the refresh asks whether any course names notes before its write and keeps the
    # answer (vault/saying.py): the course written now saying it must still count
    course = (
        "---\nid: kernels\ntitle: Kernels course\nrepo:\n  url: https://example.com/kernels\n"
        "  path: ../clones/kernels\n  x: [Notes/intro.md]\n---\n# Kernels\n"
    )
    vault = make_vault(
        {"courses/kernels.md": course, "notes/gemm.md": GEMM}, config="", name="vault"
    )
    assert _hits(run, vault, "coalescing") == []
    (vault / "courses/kernels.md").write_text(course.replace("  x: [", "  notes: ["), "utf-8")
    assert _hits(run, vault, "coalescing") == ["kernels:Notes/intro.md"]
    (vault / "courses/kernels.md").write_text(course, "utf-8")
    assert _hits(run, vault, "coalescing") == []
