"""The Low attacks of issue 30, each planted or provoked; every test fails on the code
before its fix (see docs/guide/reliability.md for the promise each one holds)."""

from __future__ import annotations

import datetime as dt
import json
import os
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

NOTE = "---\ntitle: Race\nstatus: todo\n---\n# Race\n\nsave 0\n"


# -- leftovers of a killed writer ------------------------------------------------------------


def test_a_fresh_temporary_file_of_a_dead_process_is_removed(make_vault, run) -> None:
    """A writer killed a moment ago: its temporary file is not kept for being young."""
    root = make_vault({"a.md": NOTE})
    dead = root / ".a.md.studykb-999999999-0badf00d.tmp"  # no such process
    dead.write_text("leftover", encoding="utf-8")  # written now: well under a second old
    ours = root / f".a.md.studykb-{os.getpid()}-0badf00d.tmp"  # a live process's: kept
    ours.write_text("being written", encoding="utf-8")
    assert run("check", vault=root).exit_code == 0
    assert not dead.exists()
    assert ours.exists()


# -- the web view -------------------------------------------------------------------------------


@pytest.fixture
def web(make_vault) -> Iterator[tuple[Any, Path]]:
    pytest.importorskip("httpx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

    from studykb.session import Session
    from studykb.web.app import create_app

    root = make_vault(
        {
            "a.md": NOTE,
            "ro.md": NOTE.replace("Race", "Read only"),
            "new\nline.md": "# Odd <b>name</b>\n\nalpha words here\n",
        }
    )
    kb = Session.open(root)
    kb.refresh()
    app = create_app(kb, refresh=True, token="t0ken")
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        yield client, root
    kb.close()


@pytest.mark.parametrize(
    "path",
    [
        "/static//dev/vendor/axe.min.js",
        "/static/./dev/vendor/axe.min.js",
        "/static///dev/graph-demo.html",
        "/static/dev/graph-demo.html",
    ],
)
def test_development_files_are_never_served(web, path: str) -> None:
    client, _root = web
    assert (Path(__file__).parent.parent / "src/studykb/web/static/dev/graph-demo.html").exists()
    assert client.get(path).status_code == 404
    assert client.get("/static/studykb.css").status_code == 200


def test_a_refused_web_mark_is_a_conflict(web) -> None:
    client, root = web
    (root / "ro.md").chmod(0o444)
    before = (root / "ro.md").read_bytes()
    answer = client.post(
        "/api/mark",
        content=json.dumps({"key": "ro.md", "status": "done"}),
        headers={"Content-Type": "application/json", "X-Studykb-Token": "t0ken"},
    )
    assert answer.status_code == 409, answer.text
    assert "read-only" in answer.json()["error"]
    assert (root / "ro.md").read_bytes() == before
    gone = client.post(
        "/api/mark",
        content=json.dumps({"key": "nothing.md", "status": "done"}),
        headers={"Content-Type": "application/json", "X-Studykb-Token": "t0ken"},
    )
    assert gone.status_code == 404  # no such document stays "not found"


# -- a running watch -----------------------------------------------------------------------------


def test_arguments_that_are_not_utf8_are_never_sent_to_a_watch(
    make_vault, open_vault, monkeypatch
) -> None:
    from studykb import launch as client
    from studykb.cli.served import command_server
    from studykb.cli.served import servable as served

    monkeypatch.delenv("STUDYKB_LOCAL", raising=False)
    root = make_vault({"a.md": "# A\n"})
    vault = open_vault(root)
    server = command_server(vault.config.state_dir, lambda: vault, threading.Lock())
    assert server.start()
    try:
        for argv in (["show", "\udcb3"], ["search", "\udcb3|vS*"]):
            code = client.forward(["--vault", str(root), *argv])
            assert code is None, argv  # run here, where it is bad usage (exit 2)
            assert not served(["--vault", str(root), *argv])  # and a server would refuse it
    finally:
        server.stop()


# -- templates -----------------------------------------------------------------------------------


def test_a_template_linked_out_of_the_vault_is_not_read(make_vault, run, tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("---\ntitle: {{title}}\n---\nSECRET KEY 1234\n", encoding="utf-8")
    root = make_vault({})
    (root / ".studykb-templates").mkdir()
    (root / ".studykb-templates" / "note.md").symlink_to(secret)
    result = run("new", "note", "Leak", vault=root)
    assert result.exit_code == 1, result.output
    assert ".studykb-templates/note.md" in result.stderr and "outside the vault" in result.stderr
    written = [p for p in root.rglob("*.md") if not p.is_symlink()]
    assert not any("SECRET" in p.read_text(encoding="utf-8") for p in written)


def test_a_template_folder_linked_out_of_the_vault_is_not_read(
    make_vault, run, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "note.md").write_text("SECRET {{title}}\n", encoding="utf-8")
    root = make_vault({}, config='templates = "tpl"\n')
    (root / "tpl").symlink_to(elsewhere)
    result = run("new", "note", "Leak", vault=root)
    assert result.exit_code == 1 and "outside the vault" in result.stderr


@pytest.mark.parametrize("folder", ["/etc", "~/templates", "../elsewhere", "tpl/../../x"])
def test_a_template_folder_outside_the_vault_is_a_config_error(
    make_vault, run, folder: str
) -> None:
    root = make_vault({"a.md": "# A\n"}, config=f'workers = 1\ntemplates = "{folder}"\n')
    for args in (("new", "note", "X"), ("check",)):
        result = run(*args, vault=root)
        assert result.exit_code == 2, (args, result.output)
        assert "studykb.toml:2: templates" in result.stderr and "inside the vault" in result.stderr
    assert not (root / "notes").exists()


# -- dates -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "date"),
    [("date: 20240101", "2024-01-01"), ("date: 1234", None), ("created: 20231231", "2023-12-31")],
)
def test_a_date_written_as_a_number_is_reported(make_vault, run, line: str, date) -> None:
    root = make_vault({"d.md": f"---\ntitle: D\n{line}\n---\n# D\n"})
    shown = json.loads(run("show", "d", "--json", vault=root).stdout)
    assert shown["date"] == date  # never 1970
    problems = json.loads(run("check", "--json", vault=root).stdout)["problems"]
    found = [(p["path"], p["line"], p["code"]) for p in problems]
    assert ("d.md", 3, "bad-field") in found
    assert any("ISO date" in p["message"] for p in problems)


def test_dates_that_are_dates_are_not_reported(make_vault, run) -> None:
    root = make_vault(
        {
            "iso.md": "---\ndate: 2024-01-01\ndone: '2024-02-03'\n---\n# ISO\n",
            "dendron.md": "---\ncreated: 1636492198456\n---\n# Dendron\n",  # epoch ms
        }
    )
    result = run("check", "--json", vault=root)
    assert json.loads(result.stdout)["problems"] == []
    assert json.loads(run("show", "dendron", "--json", vault=root).stdout)["date"] == "2021-11-09"


# -- a long query -----------------------------------------------------------------------------


def cut_after(dangling: str) -> str:
    """A query over 500 characters whose first 500 end with ``dangling``."""
    head = "zeta " * 90
    head += "w" * (500 - len(head) - len(dangling) - 1) + " "
    return head + dangling + "tailword " * 5


@pytest.mark.parametrize(
    "dangling", ["alpha OR ", "alpha AND ", "alpha NOT ", "(alpha OR (", "alpha AND ("]
)
def test_a_long_query_is_cut_into_a_valid_one(make_vault, run, dangling: str) -> None:
    root = make_vault({"a.md": "# A\n\nalpha beta zeta x\n"})
    query = cut_after(dangling)
    result = run("search", query, "--json", vault=root)
    assert result.exit_code in (0, 1), result.stderr  # never "cannot read the query"
    assert "Cannot read the query" not in result.stderr
    assert "the query is long" in result.stderr


# -- mv: only to places studykb reads, only names it can show -----------------------------------


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and ".studykb" not in p.relative_to(root).parts
    }


@pytest.mark.parametrize(
    ("new", "says"),
    [
        (".hidden/a", "hidden"),
        (".a", "hidden"),
        ("notes/.drafts/a.md", "hidden"),
        ("drafts/a.md", "excluded"),
        ("notes/x.excalidraw.md", "excluded"),
        ("out/a.md", "outside the vault"),
        ("out/deeper/a.md", "outside the vault"),
        ("a\x1b[2Jb", "control character"),
        ("new\nname", "control character"),
        ("b\n", "control character"),
        ("evil\u202etxt", "control character"),
    ],
)
def test_mv_refuses_a_place_studykb_does_not_read(
    make_vault, run, tmp_path: Path, new: str, says: str
) -> None:
    root = make_vault(
        {"notes/a.md": "# A\n", **{f"notes/r{i}.md": f"# R{i}\n\n[[a]]\n" for i in range(3)}},
        config='exclude = ["drafts", "*.excalidraw.md"]\n',
    )
    (tmp_path / "elsewhere").mkdir()
    (root / "out").symlink_to(tmp_path / "elsewhere")
    problems = json.loads(run("check", "--json", vault=root).stdout)["problems"]
    assert [p["code"] for p in problems] == ["outside-vault"]  # the link "out" only
    before = _tree(root)
    for dry in ([], ["--dry-run"]):
        result = run("mv", "a", new, *dry, vault=root)
        assert result.exit_code == 2, result.output
        assert says in result.stderr
        assert "\x1b" not in result.stderr
    assert _tree(root) == before
    assert not list((tmp_path / "elsewhere").iterdir())
    assert json.loads(run("check", "--json", vault=root).stdout)["problems"] == problems


def test_mv_still_moves_into_a_new_folder(make_vault, run) -> None:
    root = make_vault({"notes/a.md": "# A\n", "notes/b.md": "# B\n\n[[a]]\n"})
    result = run("mv", "a", "notes/deep/er/a2.md", vault=root)
    assert result.exit_code == 0, result.output
    assert (root / "notes/deep/er/a2.md").exists()
    assert run("check", vault=root).exit_code == 0


# -- mark keeps every byte it was not asked to change -------------------------------------------

TODAY = dt.date.today().isoformat()


@pytest.mark.parametrize(
    ("before", "status", "after"),
    [
        # a tab after the colon: YAML 1.2 (and the parser, libyaml) read it as a space
        (
            "---\ntitle: A\nstatus:\ttodo\n---\n# A\n",
            "reading",
            "---\ntitle: A\nstatus:\treading\n---\n# A\n",
        ),
        (
            "---\ntitle: A\nstatus:\t todo # mine\n---\n# A\n",
            "reading",
            "---\ntitle: A\nstatus:\t reading # mine\n---\n# A\n",
        ),
        # CR line ends (classic Mac): a line added ends with CR too
        (
            "---\rtitle: A\r---\r# A\rbody\r",
            "done",
            f"---\rtitle: A\rstatus: done\rdone: {TODAY}\r---\r# A\rbody\r",
        ),
        (
            "---\rtitle: A\rstatus: todo\r---\r# A\r",
            "done",
            f"---\rtitle: A\rstatus: done\rdone: {TODAY}\r---\r# A\r",
        ),
        ("# A\rbody\r", "reading", "---\rstatus: reading\r---\r# A\rbody\r"),
        # an indented mapping stays indented
        (
            "---\n  title: A\n  status: todo\n---\n# A\n",
            "reading",
            "---\n  title: A\n  status: reading\n---\n# A\n",
        ),
        (
            "---\n  title: A\n  tags:\n    - x\n---\n# A\n",
            "done",
            f"---\n  title: A\n  tags:\n    - x\n  status: done\n  done: {TODAY}\n---\n# A\n",
        ),
    ],
)
def test_mark_keeps_tabs_line_ends_and_indentation(
    make_vault, run, before: str, status: str, after: str
) -> None:
    root = make_vault({"a.md": before.encode()})
    result = run("mark", "a", status, vault=root)
    assert result.exit_code == 0, result.output
    assert (root / "a.md").read_bytes() == after.encode()
    shown = json.loads(run("show", "a", "--json", vault=root).stdout)
    assert shown["status"] == status and shown["title"] == "A"


# -- a newline in a file name ---------------------------------------------------------------------


def test_a_newline_in_a_file_name_stays_on_its_line_in_search(make_vault, run) -> None:
    root = make_vault(
        {
            "a.md": "# A\n\nalpha words\n",
            "new\nline.md": "alpha other\n",  # no heading: the title is the file name too
            "tab\there.md": "# T\n\nalpha third\n",
        }
    )
    result = run("search", "alpha", vault=root)
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert len(lines) == 3 * 3  # three lines a hit: title, path, snippet
    assert "    new\u240aline.md" in lines and "    tab\u2409here.md" in lines
    assert not any(line.strip() in ("new", "line.md") for line in lines)


def test_a_newline_in_a_file_name_is_shown_escaped_on_pages(web) -> None:
    client, _root = web
    page = client.get("/search/?q=alpha").text
    assert '<span class="path">new\u240aline.md</span>' in page
    assert "<b>name</b>" not in page
    assert 'href="/d/new%0Aline.html"' in page
    doc = client.get("/d/new%0Aline.html")  # its own page opens
    assert doc.status_code == 200
    assert "<code>new\u240aline.md</code>" in doc.text


# -- a note that cannot be read --------------------------------------------------------------------


@pytest.fixture
def deny(monkeypatch) -> set[str]:
    """File names whose read fails with "permission denied", as for a ``chmod 0`` note
    read by its non-owner (root reads anything, so the read itself is made to fail)."""
    import errno

    from studykb.vault import files

    denied: set[str] = set()
    real = files.read_note

    def read_note(path):  # type: ignore[no-untyped-def]
        if Path(path).name in denied:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(files, "read_note", read_note)
    return denied


def _problems(run, root: Path) -> set[tuple[str, str]]:
    result = run("check", "--json", vault=root)
    return {(p["path"], p["code"]) for p in json.loads(result.stdout)["problems"]}


def test_a_note_unreadable_at_the_first_build_is_reported(make_vault, run, deny) -> None:
    root = make_vault({"a.md": "# A\n\n[[b]]\n", "b.md": "# B\n\nsecret words\n"})
    deny.add("b.md")
    assert _problems(run, root) == {("b.md", "unreadable")}  # [[b]] still resolves
    deny.clear()  # readable again (a chmod changes neither its mtime nor its size)
    assert _problems(run, root) == set()
    assert run("search", "secret", vault=root).exit_code == 0


def test_a_note_unreadable_after_a_build_is_reported(make_vault, run, deny) -> None:
    root = make_vault({"a.md": "# A\n\n[[b]]\n", "b.md": "# B\n\nold words\n"})
    assert _problems(run, root) == set()
    (root / "b.md").write_text("# B\n\nnew words\n", encoding="utf-8")
    os.utime(root / "b.md", (time.time() + 5, time.time() + 5))
    deny.add("b.md")
    first = run("check", "--json", vault=root)
    problems = json.loads(first.stdout)["problems"]
    assert [(p["path"], p["code"], p["severity"]) for p in problems] == [
        ("b.md", "unreadable", "error")
    ]
    assert "Permission denied" in problems[0]["message"]
    assert first.exit_code == 1
    assert _problems(run, root) == {("b.md", "unreadable")}  # said again, not forgotten
    assert run("search", "old", vault=root).exit_code == 1  # what it held is not kept
    deny.clear()
    assert _problems(run, root) == set()
    assert run("search", "new", vault=root).exit_code == 0


def test_a_folder_unreadable_after_a_build_is_reported(make_vault, run, monkeypatch) -> None:
    import errno

    root = make_vault({"a.md": "# A\n\n[[b]]\n", "sub/b.md": "# B\n"})
    assert _problems(run, root) == set()
    real = os.scandir

    def scandir(path):  # type: ignore[no-untyped-def]
        if Path(path).name == "sub":
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    assert _problems(run, root) == {("sub", "unreadable"), ("a.md", "dangling-ref")}


# -- search after edits scores as a clean build ---------------------------------------------------


def _hits(root: Path, queries: list[str]) -> list[list[tuple[str, float]]]:
    from studykb.search.query import SearchOptions
    from studykb.session import Session

    with Session.open(root) as kb:
        kb.refresh()
        out = []
        for q in queries:
            found = kb.search(SearchOptions(query=q, limit=50))
            out.append([(h.key, round(h.score, 9)) for h in found.hits])
        kb.close_search()
        return out


def test_search_after_edits_scores_as_a_clean_build(make_vault, tmp_path: Path) -> None:
    """Deleted documents stay in their segment until it is merged; they must not count
    in the statistics (document count, term frequencies, average lengths)."""
    import random
    import shutil

    rng = random.Random(30)
    words = [
        "alpha",
        "beta",
        "gamma",
        "delta",
        "epsilon",
        "zeta",
        "eta",
        "theta",
        "iota",
        "kappa",
        "数据",
        "并行",
    ]

    def note(n: int) -> str:
        body = " ".join(rng.choice(words) for _ in range(rng.randint(5, 80)))
        return f"---\ntags: [{rng.choice(words)}]\n---\n# N{n} {rng.choice(words)}\n\n{body}\n"

    root = make_vault({f"n{i}.md": note(i) for i in range(40)}, config="workers = 1\n")
    queries = ["alpha beta", "gamma", "数据 并行", "title:delta OR kappa", '"eta theta"']
    _hits(root, queries)
    for step in range(4):
        for i in rng.sample(range(40), 4):
            path = root / f"n{i}.md"
            path.write_text(note(i), encoding="utf-8")
            os.utime(path, (time.time() + step + 1, time.time() + step + 1))
        (root / f"n{rng.randrange(40)}.md").unlink(missing_ok=True)
        edited = _hits(root, queries)
        clean = tmp_path / f"clean{step}"
        shutil.copytree(root, clean, ignore=shutil.ignore_patterns(".studykb"))
        assert edited == _hits(clean, queries), f"after edit {step}"
        assert all(edited)
