"""Bad input: each case is a problem with a path (and a line where one exists); the build
carries on; no traceback reaches the user; no file of the user is changed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import run_json, tree_hashes

GOOD = {
    "good/hub.md": "---\ntitle: Hub\n---\n# Hub\n\nSee [[leaf]].\n",
    "good/leaf.md": "# Leaf\n\nBack to [[hub]].\n",
}


def check(run, root: Path) -> tuple[int, list[dict]]:
    """Build and check; prove the good part of the vault was still read, files untouched."""
    before = tree_hashes(root)
    code, data = run_json(run, "check", vault=root)
    _, built = run_json(run, "build", vault=root)
    assert tree_hashes(root) == before, "a user file was changed"
    _, back = run_json(run, "backlinks", "leaf", vault=root)
    assert "good/hub.md" in [b["path"] for b in back["backlinks"]], "the build stopped"
    assert built["problems"] == len(data["problems"])
    return code, data["problems"]


def find(problems: list[dict], code: str) -> list[tuple[str, int]]:
    return sorted((p["path"], p["line"]) for p in problems if p["code"] == code)


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("---\ntitle: ok\ntags: [a, b\nstatus: done\n---\nbody [[leaf]]\n", 3),
        ("---\ntitle: ok\nsummary: this: breaks\n---\n[[leaf]]\n", 3),
        ("---\ntitle: ok\noops no colon\nstatus: done\n---\n", 3),
        ("\n\n---\ntitle: 'unclosed\n---\n", 4),
        ("---\ntitle: x\n\ttabbed: 1\n---\n", 3),
        ("---\n- a list\n- not a mapping\n---\n", 2),
        ("---\ntitle: never closed\n\nbody [[leaf]]\n", 1),
        ('+++\ntitle = "ok"\nbad toml line\n+++\n', 3),
        ("\n+++\ntitle = 'unclosed\n+++\n", 3),
        ("+++\n[a]\nx = 1\n[a]\nx = 2\n+++\n", 4),
        ('{\n  "title": "x",\n  "tags": ["a",]\n}\nbody\n', 3),
        ('{\n  "title": "x"\n  "oops": 1\n}\n', 3),
        ("---\na: &a [*a]\n---\n", 2),
    ],
)
def test_malformed_front_matter(make_vault, run, text: str, line: int) -> None:
    root = make_vault({**GOOD, "bad.md": text})
    code, problems = check(run, root)
    assert find(problems, "bad-front-matter") == [("bad.md", line)]
    assert code == 1


def test_bad_front_matter_keeps_the_body(make_vault, open_vault) -> None:
    root = make_vault({**GOOD, "bad.md": "---\ntitle: [x\n---\n# Body title\n[[leaf]]\n"})
    vault = open_vault(root)
    doc = vault.document("bad.md")
    assert doc.title == "Body title"
    assert [lk.target for lk in vault.outgoing("bad.md")] == ["good/leaf.md"]


def test_yaml_alias_bomb_is_refused_quickly(make_vault, run) -> None:
    lines = ["---", 'l0: &l0 ["x","x","x","x","x","x","x","x","x","x"]']
    lines += [f"l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 10) + "]" for i in range(1, 9)]
    root = make_vault({**GOOD, "bomb.md": "\n".join(lines) + "\n---\n"})
    code, problems = check(run, root)
    assert find(problems, "bad-front-matter") == [("bomb.md", 2)]


def test_non_utf8_bytes(make_vault, run, open_vault) -> None:
    latin1 = "---\ntitle: caf\xe9\n---\n[[leaf]]\n".encode("latin-1")
    root = make_vault(
        {**GOOD, "latin1.md": latin1, "binary.md": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe"}
    )
    code, problems = check(run, root)
    assert find(problems, "unreadable") == [("binary.md", 1), ("latin1.md", 2)]
    vault = open_vault(root)
    assert vault.document("latin1.md").title == "caf\ufffd"  # read with replacement
    assert [lk.target for lk in vault.outgoing("latin1.md")] == ["good/leaf.md"]


def test_empty_and_blank_files(make_vault, run) -> None:
    root = make_vault({**GOOD, "empty.md": "", "blank.md": "\n\n   \n", "only-fm.md": "---\n---\n"})
    code, problems = check(run, root)
    assert find(problems, "empty-file") == [("blank.md", 1), ("empty.md", 1)]
    assert code == 0  # warnings only


def test_huge_file_is_skipped_with_a_warning(make_vault, run) -> None:
    huge = "# Huge\n\n" + ("lorem ipsum [[leaf]] " * 20 + "\n") * 14_000  # about 5.6 MB
    assert len(huge.encode()) > 5 * 1024 * 1024
    root = make_vault({**GOOD, "huge.md": huge})
    code, problems = check(run, root)
    assert find(problems, "too-large") == [("huge.md", 0)]
    assert [p["severity"] for p in problems if p["code"] == "too-large"] == ["warning"]
    assert code == 0
    _, built = run_json(run, "build", vault=root)
    assert built["documents"] == 2


def test_size_limit_is_a_setting(make_vault, run) -> None:
    root = make_vault(
        {**GOOD, "big.md": "# Big\n" + "x" * 20_000 + "\n"}, config="max_file_mb = 0.01\n"
    )
    code, problems = check(run, root)
    assert find(problems, "too-large") == [("big.md", 0)]
    (root / "studykb.toml").write_text("max_file_mb = 1\n", encoding="utf-8")
    _, built = run_json(run, "build", vault=root)
    assert built["documents"] == 3


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")
def test_symlink_loops(make_vault, run) -> None:
    root = make_vault(GOOD)
    (root / "sub").mkdir()
    os.symlink(".", root / "sub" / "self")
    os.symlink("..", root / "sub" / "parent")
    os.symlink("b.md", root / "a.md")
    os.symlink("a.md", root / "b.md")
    os.symlink("nowhere.md", root / "dead.md")
    code, problems = check(run, root)
    loops = find(problems, "symlink-loop")
    assert ("a.md", 0) in loops and ("b.md", 0) in loops
    assert {"sub/self", "sub/parent"} & {p for p, _ in loops}
    assert find(problems, "unreadable") == [("dead.md", 0)]
    _, built = run_json(run, "build", vault=root)
    assert built["documents"] == 2  # nothing read twice through the loops


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")
def test_symlinked_note_is_read_once(make_vault, run) -> None:
    root = make_vault(GOOD)
    os.symlink("good/leaf.md", root / "alias-of-leaf.md")
    code, problems = check(run, root)
    assert code in (0, 1)
    assert all(p["path"] for p in problems)


def test_link_climbing_out_of_the_vault(make_vault, run, open_vault) -> None:
    root = make_vault(
        {
            **GOOD,
            "notes/escape.md": (
                "# Escape\n\nSee [passwd](../../etc/passwd) and [up](../../../../outside.md).\n"
                "Fine: [hub](../good/hub.md).\n"
            ),
        }
    )
    code, problems = check(run, root)
    assert find(problems, "outside-vault") == [("notes/escape.md", 3), ("notes/escape.md", 3)]
    assert code == 1
    vault = open_vault(root)
    states = sorted((lk.ref.text, lk.state) for lk in vault.outgoing("notes/escape.md"))
    assert states == [
        ("../../../../outside.md", "outside"),
        ("../../etc/passwd", "outside"),
        ("../good/hub.md", "ok"),
    ]
    assert "passwd" not in vault.text("notes/escape.md")[0].split("See")[0]


def test_duplicate_ids(make_vault, run) -> None:
    root = make_vault(
        {
            **GOOD,
            "a/one.md": "---\ntitle: One\nid: same\n---\n",
            "b/two.md": "---\n# comment\ntitle: Two\nid: Same\n---\n",
            "c/same.md": "# implicit id, not a duplicate\n",
            "linker.md": "[[same]]\n",
        }
    )
    code, problems = check(run, root)
    dups = [p for p in problems if p["code"] == "duplicate-id"]
    assert sorted((p["path"], p["line"]) for p in dups) == [("a/one.md", 3), ("b/two.md", 4)]
    by_path = {p["path"]: p["message"] for p in dups}
    assert "b/two.md" in by_path["a/one.md"] and "a/one.md" in by_path["b/two.md"]
    assert all(p["severity"] == "error" for p in dups)
    assert code == 1


def test_duplicate_unit_ids_in_a_course(make_vault, run) -> None:
    root = make_vault(
        {
            **GOOD,
            "courses/c.md": (
                "---\nid: c\nunits:\n  - id: u1\n    title: A\n  - id: u1\n    title: B\n---\n"
            ),
        }
    )
    code, problems = check(run, root)
    assert find(problems, "duplicate-id") == [("courses/c.md", 6)]


def test_directory_named_like_a_note(make_vault, run) -> None:
    root = make_vault({**GOOD, "x.md/inner.md": "# Inner\n[[leaf]]\n"})
    code, problems = check(run, root)
    assert find(problems, "not-a-file") == [("x.md", 0)]
    _, back = run_json(run, "backlinks", "leaf", vault=root)  # inside it is still read
    _, built = run_json(run, "build", vault=root)
    assert built["documents"] == 3


def test_file_name_that_is_not_utf8(make_vault, run) -> None:
    root = make_vault(GOOD)
    try:
        (root / os.fsdecode(b"caf\xe9.md")).write_text("# Bad name\n", encoding="utf-8")
    except (OSError, UnicodeEncodeError):  # pragma: no cover - file systems that refuse it
        pytest.skip("the file system refuses non-UTF-8 names")
    code, problems = check(run, root)
    assert find(problems, "unreadable") == [("caf\\xe9.md", 0)]


@pytest.mark.skipif(
    os.geteuid() == 0 if hasattr(os, "geteuid") else True, reason="root reads anything"
)
def test_unreadable_file(make_vault, run) -> None:  # pragma: no cover - not run as root
    root = make_vault({**GOOD, "secret.md": "# Secret\n"})
    (root / "secret.md").chmod(0)
    try:
        code, problems = check(run, root)
    finally:
        (root / "secret.md").chmod(0o644)
    assert [p["path"] for p in problems] == ["secret.md"]


def test_nul_bytes_and_odd_controls(make_vault, run) -> None:
    root = make_vault({**GOOD, "nul.md": b"# T\x00itle\n\n[[le\x00af]] [[leaf]]\x1b[31m\n"})
    code, problems = check(run, root)
    assert all(p["path"] == "nul.md" for p in problems)


def test_pathological_markdown_checks_without_errors(make_vault, run) -> None:
    root = make_vault(
        {
            **GOOD,
            "brackets.md": "[" * 20_000
            + "\n"
            + "[[" * 10_000
            + "\n"
            + "`" * 5_000
            + "\n"
            + "> " * 5_000
            + "x\n"
            + "*" * 10_000
            + "\n",
        }
    )
    code, problems = check(run, root)
    assert code == 0


def test_bad_state_folder_does_not_stop_the_command(make_vault, run) -> None:
    """``.studykb`` that is a file (not a folder) is a usable-vault error, not a traceback."""
    root = make_vault(GOOD)
    (root / ".studykb").write_text("not a folder", encoding="utf-8")
    result = run("check", vault=root)
    assert result.exit_code in (1, 2)
    assert "studykb" in result.stderr
    assert (root / ".studykb").read_text(encoding="utf-8") == "not a folder"


def test_state_file_that_cannot_be_opened(make_vault, run) -> None:
    root = make_vault(GOOD)
    assert run("check", vault=root).exit_code == 0  # studykb makes its state folder
    (root / ".studykb" / "state.sqlite").unlink()
    (root / ".studykb" / "state.sqlite").mkdir()  # a folder in its place
    result = run("check", vault=root)
    assert result.exit_code == 2
    assert "state" in result.stderr and "Delete" in result.stderr
