"""The web view's progress page (``/progress/``) and the static site's: an SVG chart drawn
on the server from the vault's git history, every text escaped."""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from repo_builder import DAY, START, GitRepo  # noqa: E402
from studykb.session import Session  # noqa: E402
from studykb.web.app import create_app  # noqa: E402

HOSTILE = '<script>alert(1)</script> & "q" </svg><img src=x onerror=alert(2)>'


def _note(title: str, status: str) -> str:
    return f"---\nid: a\ntitle: '{title}'\nstatus: {status}\n---\n# body\n"


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "vault")
    repo.commit({"studykb.toml": "", "notes/a.md": _note(HOSTILE, "reading")}, "a", START)
    repo.commit({"notes/b.md": _note("Plain", "todo").replace("id: a", "id: b")}, "b", START + DAY)
    repo.commit({"notes/a.md": _note(HOSTILE, "done")}, "done", START + 3 * DAY)
    return repo


def _client(folder: Path) -> Iterator[TestClient]:
    kb = Session.open(folder)
    kb.refresh()
    with TestClient(create_app(kb, refresh=True), base_url="http://127.0.0.1:8765") as client:
        yield client
    kb.close()


@pytest.fixture
def client(repo: GitRepo) -> Iterator[TestClient]:
    yield from _client(repo.folder)


def test_the_progress_page_draws_the_chart(client: TestClient) -> None:
    page = client.get("/progress/")
    assert page.status_code == 200
    html = page.text
    assert "<svg" in html and "<script>alert" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &#34;q&#34;" in html
    # one column a day, 2026-11-01 to 2026-11-04; the last: 1 done and 1 todo, as tall as the
    # tallest (2 items): each segment half the chart's height
    columns = re.findall(r"<g>\s*<title>([^<]*)</title>", html)
    assert columns == [
        "2026-11-01: 0 done, 1 reading, 0 todo",
        "2026-11-02: 0 done, 1 reading, 1 todo",
        "2026-11-03: 0 done, 1 reading, 1 todo",
        "2026-11-04: 1 done, 0 reading, 1 todo",
    ]
    last = html.rsplit("<g>", 1)[1]
    heights = re.findall(r'<rect class="chart-(\w+)"[^>]* height="([\d.]+)"', last)
    assert heights == [("done", "102.0"), ("todo", "102.0")]
    assert "reading → done" in html and 'href="/d/notes/a.html"' in html
    assert "http" not in html.split("<svg", 1)[1].split("</svg>")[0].replace(
        "http://www.w3.org/2000/svg", ""
    )  # nothing fetched


def test_the_home_page_links_to_it(client: TestClient) -> None:
    assert 'href="/progress/"' in client.get("/").text


def test_no_repository_is_a_note(make_vault) -> None:  # type: ignore[no-untyped-def]
    vault = make_vault({"notes/a.md": "# A\n"})
    for client in _client(vault):
        page = client.get("/progress/")
        assert page.status_code == 200
        assert "not in a git repository" in page.text and "<svg" not in page.text
        assert str(vault) not in page.text  # a folder of this machine: not published


def test_the_static_site_has_the_page(run, repo: GitRepo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "site"
    result = run("site", "-o", str(out), vault=repo.folder)
    assert result.exit_code == 0, result.stderr
    html = (out / "progress" / "index.html").read_text(encoding="utf-8")
    assert "<svg" in html and "<script>alert" not in html
    assert 'href="../d/notes/a.html"' in html
    assert 'href="./progress/index.html"' in (out / "index.html").read_text(encoding="utf-8")
