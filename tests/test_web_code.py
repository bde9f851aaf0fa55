"""The web view's code pages (``/code/NAME/path.html``): a note's code link reaches the
file of a real clone (made with dulwich), highlighted, numbered and escaped, at the lines
it names; a repository not cloned here links to its web host; unknown ones are 404."""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from dulwich.repo import Repo

from repo_builder import DAY, START, GitRepo

pytest.importorskip("starlette")
pytest.importorskip("httpx")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from studykb.session import Session  # noqa: E402
from studykb.web.app import create_app  # noqa: E402

BASE = "http://127.0.0.1:8765"
CODE = "".join(f"x{n} = {n}\n" for n in range(1, 60)) + (
    "def evil():\n    return '<script>alert(1)</script>'\n\n\nclass Tok:\n"
    "    # <img src=x onerror=alert(2)> </pre></td>\n"
    "    def encode(self):\n        return 1\n"
)
COURSE = """---
id: cs336
title: CS336
repo:
  url: https://github.com/x/cs336
  path: ../cs336
---
# CS336
"""
NOTE = """# BPE notes

Lines: [[cs336:a1/bpe.py#L10-12|the tens]]. The method [[cs336:a1/bpe.py#Tok.encode]].
Whole: [[cs336:a1/bpe.py]]. Folder: [[cs336:a1]]. Far away [[remote:src/x.py#L3-4]].
Nowhere [[nourl:src/y.py]].
"""
#: A file name git allows that must never reach a page as markup.
HOSTILE = "a1/<img src=x onerror=alert(3)>.py"
CONFIG = """[repos.remote]
url = "https://github.com/y/remote"

[repos.nourl]
path = "../not-there"
"""


def setup(make_vault: Any, tmp_path: Path) -> tuple[Path, GitRepo]:
    repo = GitRepo(tmp_path / "cs336")
    files: dict[str, str | bytes | None] = {"a1/bpe.py": CODE, "a1/blob.bin": b"\0\1\2" * 10}
    files[HOSTILE] = "x = 1\n"
    repo.commit(files, "a1")
    vault = make_vault(
        {"courses/cs336.md": COURSE, "notes/bpe.md": NOTE}, config=CONFIG, name="vault"
    )
    return vault, repo


@pytest.fixture
def client(make_vault: Any, tmp_path: Path) -> Iterator[TestClient]:
    vault, _repo = setup(make_vault, tmp_path)
    kb = Session.open(vault)
    kb.refresh()
    with TestClient(create_app(kb, refresh=True, token="t" * 20), base_url=BASE) as test_client:
        yield test_client
    kb.close()


def hrefs(html: str) -> list[str]:
    return re.findall(r'\shref="([^"]*)"', html)


def rows(html: str) -> list[int]:
    return [int(n) for n in re.findall(r'<tr id="L(\d+)"', html)]


def marked(html: str) -> list[int]:
    return [int(n) for n in re.findall(r'<tr id="L(\d+)" class="code-mark"', html)]


def test_a_note_links_to_the_code_page_at_its_lines(client: TestClient) -> None:
    note = client.get("/d/notes/bpe.html").text
    links = hrefs(note)
    lines = "/code/cs336/a1/bpe.py.html?lines=10-12#L10"
    assert lines in links
    assert "/code/cs336/a1/bpe.py.html?symbol=Tok.encode#sym-Tok.encode" in links
    assert "/code/cs336/a1/bpe.py.html" in links and "/code/cs336/a1.html" in links
    # not cloned here: its web host's page of the lines
    assert "https://github.com/y/remote/blob/HEAD/src/x.py#L3-L4" in links
    assert "/code/nourl/src/y.py.html" in links  # no address: the page that says so
    assert "cs336:a1/bpe.py › Tok.encode" in note  # an unlabelled link names the file
    page = client.get(lines.split("#")[0])
    assert page.status_code == 200
    shown = rows(page.text)
    assert shown == list(range(5, 18))  # 10-12 with five lines either side
    assert marked(page.text) == [10, 11, 12]
    assert '<a href="#L10">10</a>' in page.text
    assert re.search(r'<span class="n">x10</span>', page.text)
    assert "show the whole file" in page.text
    assert "BPE notes" in page.text and "/d/notes/bpe.html" in hrefs(page.text)


def test_code_is_escaped_and_highlighted(client: TestClient) -> None:
    page = client.get("/code/cs336/a1/bpe.py.html").text
    assert "<script>alert" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<img" not in page
    assert "&lt;img src=x onerror=alert(2)&gt; &lt;/pre&gt;&lt;/td&gt;" in page
    assert '<span class="k">def</span>' in page
    assert rows(page) == list(range(1, CODE.count("\n") + 1))
    # the whole file marks every range notes link to (the lines and the symbol's)
    encode = CODE.split("\n").index("    def encode(self):") + 1
    assert marked(page) == [10, 11, 12, encode, encode + 1]
    assert f'<a href="#L{encode}" id="sym-Tok.encode">' in page
    assert re.search(r"Last changed in</dt><dd><code title=\"[0-9a-f]{40}\">", page)


def test_a_symbol_shows_its_lines(client: TestClient) -> None:
    page = client.get("/code/cs336/a1/bpe.py.html?symbol=Tok.encode").text
    encode = CODE.split("\n").index("    def encode(self):") + 1
    assert marked(page) == [encode, encode + 1]
    missing = client.get("/code/cs336/a1/bpe.py.html?symbol=Nope").text
    assert "Nope is not defined in a1/bpe.py" in missing


def test_folders_binaries_and_repositories_not_cloned(client: TestClient) -> None:
    folder = client.get("/code/cs336/a1.html").text
    assert "/code/cs336/a1/bpe.py.html" in hrefs(folder)
    assert "<img" not in folder and "&lt;img src=x onerror=alert(3)&gt;.py" in folder
    hostile = client.get("/code/cs336/" + quote(HOSTILE) + ".html")
    assert hostile.status_code == 200 and "<img" not in hostile.text
    assert "&lt;img src=x onerror=alert(3)&gt;.py" in hostile.text
    binary = client.get("/code/cs336/a1/blob.bin.html")
    assert binary.status_code == 200 and "binary file; not shown" in binary.text
    remote = client.get("/code/remote/src/x.py.html")
    assert remote.status_code == 200 and "not cloned on this machine" in remote.text
    assert "https://github.com/y/remote/blob/HEAD/src/x.py" in hrefs(remote.text)


@pytest.mark.parametrize(
    "path",
    [
        "/code/nosuch/a1/bpe.py.html",
        "/code/cs336/a1/gone.py.html",
        "/code/cs336/../vault/notes/bpe.md.html",
        "/code/cs336/%2e%2e/x.html",
        "/code/cs336@deadbeef/a1/bpe.py.html",
        "/code/cs336/a1/bpe.py",
    ],
)
def test_unknown_repositories_and_paths_are_not_found(client: TestClient, path: str) -> None:
    page = client.get(path)
    assert page.status_code == 404
    assert "Not found" in page.text and "Traceback" not in page.text


def build(run: Any, vault: Path, out: Path) -> dict[str, Any]:
    result = run("site", "-o", str(out), "--json", vault=vault)
    assert result.exit_code == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def files_of(out: Path) -> dict[str, bytes]:
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in out.rglob("*")
        if p.is_file() and p.name != ".studykb-site.json"
    }


def code_files(out: Path) -> list[str]:
    return sorted(p.relative_to(out).as_posix() for p in (out / "code").rglob("*.html"))


def test_the_site_has_a_page_for_each_linked_file_only(
    run: Any, make_vault: Any, tmp_path: Path
) -> None:
    vault, repo = setup(make_vault, tmp_path)
    repo.commit({"a1/other.py": "y = 1\n"}, "a file no note links to", when=START + DAY)
    out = tmp_path / "site"
    build(run, vault, out)
    # the file, the folder and the link to no file (the clone is not there) have pages;
    # other.py and blob.bin, linked by no note, have none; remote links to its web host
    assert code_files(out) == [
        "code/cs336/a1.html",
        "code/cs336/a1/bpe.py.html",
        "code/nourl/src/y.py.html",
    ]
    note = (out / "d/notes/bpe.html").read_text(encoding="utf-8")
    links = hrefs(note)
    assert "../../code/cs336/a1/bpe.py.html#L10" in links
    assert "../../code/cs336/a1/bpe.py.html#sym-Tok.encode" in links
    assert "https://github.com/y/remote/blob/HEAD/src/x.py#L3-L4" in links
    page = (out / "code/cs336/a1/bpe.py.html").read_text(encoding="utf-8")
    encode = CODE.split("\n").index("    def encode(self):") + 1
    assert rows(page) == list(range(1, CODE.count("\n") + 1))  # the whole file
    assert marked(page) == [10, 11, 12, encode, encode + 1]
    assert 'id="sym-Tok.encode"' in page and "<script>alert" not in page
    assert "../../../d/notes/bpe.html" in hrefs(page)  # notes linking here
    folder = (out / "code/cs336/a1.html").read_text(encoding="utf-8")
    assert "a1/bpe.py.html" in "".join(hrefs(folder))
    assert "other.py" in folder and "a1/other.py.html" not in "".join(hrefs(folder))
    nowhere = (out / "code/nourl/src/y.py.html").read_text(encoding="utf-8")
    assert "not cloned on this machine" in nowhere


def test_the_site_rewrites_a_code_page_when_its_file_changes(
    run: Any, make_vault: Any, tmp_path: Path
) -> None:
    vault, repo = setup(make_vault, tmp_path)
    out = tmp_path / "site"
    page = out / "code/cs336/a1/bpe.py.html"
    first = build(run, vault, out)
    assert first["written"] == first["files"]
    assert build(run, vault, out)["written"] == 0
    stamp = page.stat().st_mtime_ns
    # a commit that leaves the file alone: HEAD moved, the code page is kept
    repo.commit({"README.md": "hello\n"}, "readme", when=START + DAY)
    assert build(run, vault, out)["written"] == 0
    assert page.stat().st_mtime_ns == stamp
    # a commit that changes it: the page is made again, with the new line and blob
    repo.commit({"a1/bpe.py": CODE.replace("x12 = 12", "x12 = 'twelve'")}, "edit", START + 2 * DAY)
    build(run, vault, out)
    html = page.read_text(encoding="utf-8")
    assert "twelve" in html and page.stat().st_mtime_ns != stamp
    git = Repo(str(repo.folder))
    blob = git[git[git.head()].tree].lookup_path(git.__getitem__, b"a1/bpe.py")[1]
    assert f"<dt>Blob</dt><dd><code>{blob.decode()[:12]}</code>" in html
    # what was kept and made again is what a build from scratch makes
    scratch = tmp_path / "scratch"
    build(run, vault, scratch)
    assert files_of(scratch) == files_of(out)


def test_a_link_to_a_missing_file_gets_a_page_saying_so(
    run: Any, make_vault: Any, tmp_path: Path
) -> None:
    vault, _repo = setup(make_vault, tmp_path)
    (vault / "notes/gone.md").write_text("# Gone\n\n[[cs336:a1/gone.py#L1-2]]\n", "utf-8")
    out = tmp_path / "site"
    build(run, vault, out)
    page = (out / "code/cs336/a1/gone.py.html").read_text(encoding="utf-8")
    assert "cs336:a1/gone.py" in page and "not in cs336" in page


def test_long_and_huge_files(run: Any, make_vault: Any, tmp_path: Path) -> None:
    vault, repo = setup(make_vault, tmp_path)
    long = "".join(f"n{n} = {n}\n" for n in range(1, 3101))
    huge = "y = 1\n" * (2 * 1024 * 1024 // 6 + 10)  # over the 2 MB read at most
    repo.commit({"a1/long.py": long, "a1/huge.py": huge}, "big", when=START + DAY)
    (vault / "notes/long.md").write_text(
        "# Long\n\n[[cs336:a1/long.py#L3050-3052]] [[cs336:a1/huge.py#L2]]\n", "utf-8"
    )
    out = tmp_path / "site"
    build(run, vault, out)
    page = (out / "code/cs336/a1/long.py.html").read_text(encoding="utf-8")
    # one page per file in a site: the first lines, and the lines linked to beyond them
    assert rows(page) == [*range(1, 3001), *range(3045, 3058)]
    assert marked(page) == [3050, 3051, 3052]
    assert "44 lines not shown" in page and "43 lines below" in page
    big = (out / "code/cs336/a1/huge.py.html").read_text(encoding="utf-8")
    assert "too large to read" in big and rows(big) == []
    kb = Session.open(vault)
    kb.refresh()
    with TestClient(create_app(kb, refresh=True, token="t" * 20), base_url=BASE) as client:
        served = client.get("/code/cs336/a1/long.py.html").text
        assert rows(served) == list(range(1, 3001)) and "the next lines" in served
        assert "/code/cs336/a1/long.py.html?lines=3001-3100" in hrefs(served)
        tail = client.get("/code/cs336/a1/long.py.html?lines=3001-3100").text
        assert rows(tail) == list(range(2996, 3101))
        assert client.get("/code/cs336/a1/huge.py.html").status_code == 200
    kb.close()


def test_each_line_is_highlighted_on_its_own() -> None:
    from studykb.api import code_lines

    text = 'x = """one\n<b>two</b>\nthree"""\n\n# é & <i>\n'
    lines = code_lines(text, "a/b.py")
    assert len(lines) == 5 and lines[3] == ""
    for line in lines:  # every span opened on a line is closed on it
        assert line.count("<span") == line.count("</span>")
    assert "&lt;b&gt;two&lt;/b&gt;" in lines[1] and "<b>" not in "".join(lines)
    assert "é &amp; &lt;i&gt;" in lines[4]
    plain = code_lines("<script>\nno newline at the end", "notes.unknownext")
    assert plain == ["&lt;script&gt;", "no newline at the end"]


def test_the_commit_shown_is_the_files_last_change(make_vault: Any, tmp_path: Path) -> None:
    vault, repo = setup(make_vault, tmp_path)
    first = repo.repo.head().decode()
    repo.commit({"README.md": "x\n"}, "readme", when=START + DAY)
    edit = repo.commit({"a1/bpe.py": CODE + "z = 1\n"}, "edit", when=START + 2 * DAY)
    repo.commit({"b/other.py": "y = 2\n"}, "other", when=START + 3 * DAY)
    back = repo.commit({"a1/bpe.py": CODE}, "revert", when=START + 4 * DAY)
    head = repo.commit({"README.md": "y\n"}, "readme again", when=START + 5 * DAY)
    kb = Session.open(vault)
    kb.refresh()
    view = kb.repos()
    assert view.file("cs336", "a1/bpe.py").changed == back  # its content came back there
    assert view.file("cs336", "a1/bpe.py", edit[:10]).changed == edit
    assert view.file("cs336", "a1/blob.bin").changed == first  # the root commit
    assert view.file("cs336", "a1").changed == back  # a folder: its tree
    assert view.file("cs336", "b/other.py").commit == head
    kb.close()
