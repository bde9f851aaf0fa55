"""``mark`` changes only the status line, atomically, keeping every other byte."""

from __future__ import annotations

import datetime as dt
import difflib
from pathlib import Path

import pytest
from click.testing import CliRunner

from studykb.cli.app import cli, prepare
from studykb.parse.fm_edit import EditError
from studykb.study.mark import set_status

prepare()
TODAY = dt.date.today().isoformat()
DAY = dt.date(2026, 11, 30)

YAML_CRLF_BOM = (
    b"\xef\xbb\xbf---\r\n# a comment that must stay\r\nid: t1\r\ntitle: T1  # why\r\n"
    b"status: todo\r\nzeta: 1\r\nalpha: 2\r\n---\r\n# T1\r\n\r\nbody\r\n"
)
COURSE = (
    b"---\nid: c1\ntitle: Course\nunits:\n  - id: u1\n    title: U1  # first\n"
    b"    status: done\n  - id: u2\n    title: U2\n  - {id: u3, title: U3}\n---\nbody\n"
)


def changed_lines(before: bytes, after: bytes) -> list[str]:
    a = before.decode("utf-8").splitlines(keepends=True)
    b = after.decode("utf-8").splitlines(keepends=True)
    return [
        line
        for line in difflib.unified_diff(a, b, n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


def run(root: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--vault", str(root), *args])
    return result.exit_code, result.output


def test_mark_replaces_only_the_status_line(tmp_path: Path) -> None:
    path = tmp_path / "t1.md"
    path.write_bytes(YAML_CRLF_BOM)
    code, out = run(tmp_path, "mark", "t1", "done")
    assert code == 0, out
    after = path.read_bytes()
    assert after.startswith(b"\xef\xbb\xbf")
    assert after == YAML_CRLF_BOM.replace(
        b"status: todo\r\n", b"status: done\r\n" + f"done: {TODAY}\r\n".encode()
    )
    # and back: a round trip restores every byte
    run(tmp_path, "mark", "t1", "todo")
    assert path.read_bytes() == YAML_CRLF_BOM


def test_mark_adds_the_line_where_missing(tmp_path: Path) -> None:
    before = b"---\r\ntitle: Plain  # c\r\n---\r\nbody\r\n"
    after = set_status(before, "reading")
    assert after == b"---\r\ntitle: Plain  # c\r\nstatus: reading\r\n---\r\nbody\r\n"
    assert (
        set_status(b"no front matter\n", "done", today=DAY)
        == b"---\nstatus: done\ndone: 2026-11-30\n---\nno front matter\n"
    )


def test_mark_a_course_unit(tmp_path: Path) -> None:
    (tmp_path / "courses").mkdir()
    path = tmp_path / "courses" / "c1.md"
    path.write_bytes(COURSE)
    assert run(tmp_path, "mark", "c1#u2", "reading")[0] == 0
    assert changed_lines(COURSE, path.read_bytes()) == ["+    status: reading\n"]
    assert run(tmp_path, "mark", "c1#u1", "todo")[0] == 0
    assert run(tmp_path, "mark", "c1#u3", "done")[0] == 0
    final = path.read_bytes().decode()
    assert f"  - {{id: u3, title: U3, status: done, done: {TODAY}}}\n" in final
    assert "    title: U1  # first\n    status: todo\n" in final
    code, out = run(tmp_path, "show", "c1", "--json")
    import json

    units = {u["id"]: u["status"] for u in json.loads(out)["units"]}
    assert units == {"c1#u1": "todo", "c1#u2": "reading", "c1#u3": "done"}


def test_mark_toml_and_json(tmp_path: Path) -> None:
    toml = b"+++\ntitle = 'Z'\n# keep\n[extra]\nx = 1\n+++\nbody\n"
    out = set_status(toml, "done", today=DAY)
    assert out == (
        b"+++\ntitle = 'Z'\n# keep\nstatus = \"done\"\ndone = 2026-11-30\n[extra]\n"
        b"x = 1\n+++\nbody\n"
    )
    assert set_status(out, "todo") == toml.replace(b"# keep\n", b'# keep\nstatus = "todo"\n')
    js = b'{"title": "J", "status": "todo", "tags": ["a"]}\nbody\n'
    done = set_status(js, "done", today=DAY)
    assert done == b'{"done": "2026-11-30", "title": "J", "status": "done", "tags": ["a"]}\nbody\n'
    assert set_status(done, "todo") == js


def test_mark_leaves_no_temp_files_and_keeps_mode(tmp_path: Path) -> None:
    path = tmp_path / "t1.md"
    path.write_bytes(YAML_CRLF_BOM)
    path.chmod(0o640)
    run(tmp_path, "mark", "t1", "done")
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".studykb")) == [
        "t1.md"
    ]
    assert path.stat().st_mode & 0o777 == 0o640


def test_mark_refuses_unclosed_front_matter(tmp_path: Path) -> None:
    path = tmp_path / "bad.md"
    raw = b"---\ntitle: never closed\nstatus: todo\n"
    path.write_bytes(raw)
    code, out = run(tmp_path, "mark", "bad", "done")
    assert code == 1 and "never closed" in out
    assert path.read_bytes() == raw


@pytest.mark.parametrize("status", ["done", "reading", "todo"])
def test_mark_is_idempotent(tmp_path: Path, status: str) -> None:
    once = set_status(YAML_CRLF_BOM, status)
    assert set_status(once, status) == once


# -- front matter the line edit alone would break (issue: "mark breaks valid front matter") --
TRICKY = {
    "flow": (
        b"---\n{title: X, status: todo}\n---\nbody\n",
        b"---\n{title: X, status: done, done: 2026-11-30}\n---\nbody\n",
    ),
    "value-on-next-line": (
        b"---\ntitle: X\nstatus:\n  todo\nlevel: 2\n---\nbody\n",
        b"---\ntitle: X\nstatus: done\nlevel: 2\ndone: 2026-11-30\n---\nbody\n",
    ),
    "quoted-key": (
        b'---\ntitle: X\n"status": todo\n---\nbody\n',
        b'---\ntitle: X\n"status": done\ndone: 2026-11-30\n---\nbody\n',
    ),
    "toml-multiline-string": (
        b'+++\ntitle = "X"\nnotes = """\nstatus = "fake"\n"""\nstatus = "todo"\n+++\nbody\n',
        b'+++\ntitle = "X"\nnotes = """\nstatus = "fake"\n"""\nstatus = "done"\n'
        b"done = 2026-11-30\n+++\nbody\n",
    ),
}


@pytest.mark.parametrize("case", sorted(TRICKY))
def test_mark_keeps_valid_front_matter_valid(case: str) -> None:
    import tomllib

    import yaml

    from studykb.parse.frontmatter import split

    before, expected = TRICKY[case]
    after = set_status(before, "done", today=DAY)
    assert after == expected
    parts = split(after.decode())
    load = tomllib.loads if parts.fm_format == "toml" else yaml.safe_load
    meta = load(parts.fm_text)
    old = load(split(before.decode()).fm_text)
    assert meta == {**old, "status": "done", "done": DAY}


def test_mark_refuses_what_it_cannot_prove(tmp_path: Path) -> None:
    # a duplicated key: which one counts is unclear, so nothing is written
    raw = b"---\ntitle: X\nstatus: todo\nstatus: reading\n---\nbody\n"
    with pytest.raises(EditError, match="twice"):
        set_status(raw, "done", today=DAY)
    path = tmp_path / "dup.md"
    path.write_bytes(raw)
    code, out = run(tmp_path, "mark", "dup", "done")
    assert code == 1 and "twice" in out
    assert path.read_bytes() == raw
