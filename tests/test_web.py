"""The web app (``studykb serve``) through Starlette's test client: every route answers
from the vault, hostile text is escaped, writes need the token, foreign hosts and paths
out of the vault are refused, and a mark writes the note as ``studykb mark`` does."""

from __future__ import annotations

import json
import re
import threading
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

with warnings.catch_warnings():  # Starlette 1.x prefers httpx2; httpx works with every version
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from studykb.session import Session  # noqa: E402
from studykb.web.app import create_app  # noqa: E402
from studykb.web.guard import local_host  # noqa: E402

BASE = "http://127.0.0.1:8765"
TOKEN = "test-token-0123456789"

FILES = {
    "notes/topics/ddp.md": "---\nid: ddp\naliases: [数据并行, data parallel]\nlevel: 2\n---\n"
    "# Distributed Data Parallel\n\nEach rank holds a replica; gradients are all-reduced.\n"
    "数据并行把批次切分到每个 rank 上。\n",
    "notes/topics/fsdp2.md": "---\nid: fsdp2\nrequires: [ddp]\nlevel: 4\n---\n# FSDP2\n\n"
    "Shards parameters. See [[ddp|the DDP page]] and [[ddp#Distributed Data Parallel]].\n",
    "notes/entries/fsdp-tutorial.md": "---\nid: fsdp-tutorial\ncovers: [fsdp2]\n"
    "url: https://pytorch.org/tutorials/fsdp2\nkind: tutorial\nminutes: 30\n---\n"
    "# FSDP2 tutorial\n\nHow to call `fully_shard`.\n",
    "notes/my-fsdp.md": "---\ntags: [fsdp2]\nstatus: reading\ncourse: cs336\n---\n"
    "# My FSDP notes\n\n"
    "Memory math: $M = 16 \\Phi$ bytes.\n\n$$\nx^2\n$$\n\n```python\nprint('hi')\n```\n\n"
    "Read [[fsdp2]] after [the tutorial](entries/fsdp-tutorial.md). ![diagram](img/d.png)\n",
    "notes/img/d.png": b"\x89PNG\r\n\x1a\n" + b"\0" * 32,
    "notes/lists/start.md": "---\nitems: [ddp, fsdp2, fsdp-tutorial]\n---\n# Start here\n",
    "courses/cs336.md": "---\nid: cs336\nunits:\n  - id: a2\n    title: 'A2: sharded training'\n"
    "    requires: [fsdp2]\n---\n# CS336\n\nThe course.\n",
}


@pytest.fixture
def vault(make_vault: Callable[..., Path]) -> Path:
    return make_vault(FILES)


@pytest.fixture
def client(vault: Path) -> Iterator[TestClient]:
    kb = Session.open(vault)
    kb.refresh()
    app = create_app(kb, refresh=True, token=TOKEN)
    with TestClient(app, base_url=BASE) as test_client:
        yield test_client
    kb.close()


def hrefs(html: str) -> list[str]:
    return re.findall(r'\shref="([^"]*)"', html)


# -- every route -------------------------------------------------------------------------------
def test_list_pages_show_the_vault(client: TestClient) -> None:
    home = client.get("/")
    assert home.status_code == 200
    assert "My FSDP notes" in home.text  # reading now
    assert "CS336" in home.text and "Start here" in home.text
    topics = client.get("/topics/").text
    assert "Distributed Data Parallel" in topics and "数据并行" in topics
    assert 'href="/d/notes/topics/fsdp2.html"' in topics
    assert "Start here" in client.get("/lists/").text
    courses = client.get("/courses/").text
    assert "0 of 1 units done" in courses


def test_document_page_renders_the_body_with_vault_links(client: TestClient) -> None:
    page = client.get("/d/notes/my-fsdp.html")
    assert page.status_code == 200
    html = page.text
    assert '<span class="math inline">M = 16 \\Phi</span>' in html
    assert '<div class="math display">' in html
    assert '<div class="highlight"><pre>' in html and '<span class="nb">print</span>' in html
    assert 'href="/d/notes/topics/fsdp2.html"' in html  # [[fsdp2]]
    assert 'href="/d/notes/entries/fsdp-tutorial.html"' in html  # relative Markdown link
    assert 'src="/files/notes/img/d.png"' in html
    assert 'data-page-key="notes/my-fsdp.md"' in html
    assert f'<meta name="studykb-token" content="{TOKEN}">' in html
    assert 'href="/d/courses/cs336.html"' in html  # the course in the header
    assert 'href="/d/notes/topics/fsdp2.html">FSDP2</a>' in html  # the tag: its topic


def test_wikilink_anchor_and_label(client: TestClient) -> None:
    html = client.get("/d/notes/topics/fsdp2.html").text
    assert '<a class="wikilink" href="/d/notes/topics/ddp.html">the DDP page</a>' in html
    assert 'href="/d/notes/topics/ddp.html#distributed-data-parallel"' in html


def test_sidebar_backlinks_and_prerequisites(client: TestClient) -> None:
    html = client.get("/d/notes/topics/ddp.html").text
    backlinks = html[html.index('id="sb-backlinks"') :]
    assert "FSDP2" in backlinks
    assert "See [[ddp|the DDP page]]" in backlinks  # the linking line as context
    leads = html[html.index('id="sb-leads_to"') :]
    assert 'href="/d/notes/topics/fsdp2.html"' in leads
    before = client.get("/d/notes/topics/fsdp2.html").text
    assert 'id="sb-before"' in before
    assert "Related" in before


def test_topic_list_and_course_pages(client: TestClient) -> None:
    topic = client.get("/d/notes/topics/fsdp2.html").text
    readings = topic[topic.index('id="readings-h"') :]
    assert "FSDP2 tutorial" in readings
    tagged = topic[topic.index('id="tagged-h"') :]
    assert "My FSDP notes" in tagged
    listed = client.get("/d/notes/lists/start.html").text
    order = [listed.index(t) for t in ("Distributed Data Parallel", "FSDP2</a>", "FSDP2 tutorial")]
    assert order == sorted(order)
    assert "0 of 3 read" in listed
    course = client.get("/d/courses/cs336.html").text
    assert 'id="a2"' in course and "A2: sharded training" in course
    assert 'data-mark-key="courses/cs336.md#a2"' in course
    assert "0 of 1 units done" in course and "My FSDP notes" in course


def test_plan_page(client: TestClient) -> None:
    page = client.get("/plan/notes/topics/fsdp2.html")
    assert page.status_code == 200
    html = page.text
    assert "What to read before" in html
    step = html[html.index('class="plan-steps"') :]
    assert 'href="/d/notes/topics/ddp.html"' in step
    assert 'data-mark-key="notes/topics/ddp.md"' in step
    unit = client.get("/plan/courses/cs336@a2.html")
    assert unit.status_code == 200 and "FSDP2" in unit.text


def test_search_page_and_api_in_both_languages(client: TestClient) -> None:
    found = client.get("/api/search", params={"q": "all-reduced"}).json()
    assert [h["key"] for h in found["hits"]][:1] == ["notes/topics/ddp.md"]
    hit = found["hits"][0]
    assert hit["url"] == "/d/notes/topics/ddp.html"
    start, end = hit["highlights"][0]
    assert hit["snippet"][start:end].lower().startswith("all")
    chinese = client.get("/api/search", params={"q": "数据并行"}).json()
    assert "notes/topics/ddp.md" in [h["key"] for h in chinese["hits"]]
    filtered = client.get("/api/search", params={"q": "fsdp2", "type": "entry"}).json()
    assert {h["type"] for h in filtered["hits"]} == {"entry"}
    page = client.get("/search/", params={"q": "all-reduced"}).text
    assert "<mark>" in page and 'href="/d/notes/topics/ddp.html"' in page
    bad = client.get("/api/search", params={"q": '"unclosed'})
    assert bad.status_code == 400 and "quote" in bad.json()["error"]


def test_graph_api_whole_neighbourhood_and_plan(client: TestClient) -> None:
    whole = client.get("/api/graph").json()
    ids = {n["id"] for n in whole["nodes"]}
    assert "notes/topics/fsdp2.md" in ids and "courses/cs336.md#a2" in ids
    node = next(n for n in whole["nodes"] if n["id"] == "notes/topics/ddp.md")
    assert node["url"] == "/d/notes/topics/ddp.html" and node["backlinks"] >= 2
    assert all(e["source"] in ids and e["target"] in ids for e in whole["edges"])
    assert {
        "source": "notes/topics/fsdp2.md",
        "target": "notes/topics/ddp.md",
        "kind": "requires",
    } in whole["edges"]
    near = client.get("/api/graph", params={"around": "notes/lists/start.md", "steps": 1}).json()
    assert {n["id"] for n in near["nodes"]} == {
        "notes/lists/start.md",
        "notes/topics/ddp.md",
        "notes/topics/fsdp2.md",
        "notes/entries/fsdp-tutorial.md",
    }
    plan = client.get("/api/graph", params={"plan": "fsdp2"}).json()
    assert {n["id"] for n in plan["nodes"]} >= {"notes/topics/fsdp2.md", "notes/topics/ddp.md"}
    assert {e["kind"] for e in plan["edges"]} <= {"requires", "covers"}
    only = client.get("/api/graph", params={"type": "topic"}).json()
    assert {n["type"] for n in only["nodes"]} == {"topic"}


def test_missing_pages_are_404_with_suggestions(client: TestClient) -> None:
    page = client.get("/d/notes/topics/fsdp.html")
    assert page.status_code == 404
    assert "Did you mean" in page.text and "FSDP2" in page.text
    assert client.get("/nowhere").status_code == 404
    assert client.get("/plan/notes/nothing.html").status_code == 404


def test_static_files_and_headers(client: TestClient) -> None:
    css = client.get("/static/studykb.css")
    assert css.status_code == 200 and "text/css" in css.headers["content-type"]
    page = client.get("/")
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "default-src 'self'" in csp
    assert page.headers["x-content-type-options"] == "nosniff"
    assert page.headers["referrer-policy"] == "same-origin"
    assert client.get("/static/dev/vendor/axe.min.js").status_code == 404


def test_live_page_answers_with_the_page(client: TestClient) -> None:
    page = client.get("/d/notes/topics/ddp.html", headers={"X-Studykb-Live": "1"})
    assert page.status_code == 200 and '<main id="main"' in page.text


# -- escaping ----------------------------------------------------------------------------------
HOSTILE = {
    "notes/evil.md": "---\ntitle: \"<script>alert('title')</script>\"\n"
    "aliases: ['<img src=x onerror=alert(1)>']\ntags: ['\"><svg onload=alert(2)>']\n"
    "url: \"javascript:alert('url')\"\nsource: '<b>bold</b>'\n---\n"
    "Body <script>alert('body')</script> and <iframe src=x></iframe>.\n\n"
    "[click](javascript:alert('link')) [data](data:text/html,<script>alert(3)</script>) "
    "[vb](vbscript:msgbox) <javascript:alert(4)> ![x](javascript:alert(5))\n\n"
    "Links to [[target]] with <b>html</b> in the line.\n",
    "notes/target.md": "---\naliases: ['\"><script>alert(6)</script>']\n---\n# Target\n\n"
    "Plain. Searchable word zebrafish <script>alert('snippet')</script> and 1 < 2 > 0 & \"q\".\n",
}


@pytest.fixture
def hostile(make_vault: Callable[..., Path]) -> Iterator[TestClient]:
    kb = Session.open(make_vault(HOSTILE))
    kb.refresh()
    with TestClient(create_app(kb, refresh=True, token=TOKEN), base_url=BASE) as test_client:
        yield test_client
    kb.close()


def _no_live_markup(html: str) -> None:
    assert "<script>alert" not in html
    assert "<img src=x" not in html and "<svg onload" not in html and "<iframe" not in html
    assert "<b>bold</b>" not in html and "<b>html</b>" not in html
    for href in hrefs(html):
        assert not re.match(r"\s*(javascript|data|vbscript):", href, re.I), href
    assert not re.search(r'\ssrc="\s*javascript:', html, re.I)


def test_hostile_titles_aliases_urls_and_bodies_are_text(hostile: TestClient) -> None:
    for url in (
        "/d/notes/evil.html",
        "/d/notes/target.html",
        "/",
        "/topics/",
        "/search/?q=zebrafish",
        "/search/?q=alert",
        "/plan/notes/evil.html",
    ):
        page = hostile.get(url)
        assert page.status_code == 200, url
        _no_live_markup(page.text)
    evil = hostile.get("/d/notes/evil.html").text
    assert "&lt;script&gt;alert(&#39;title&#39;)&lt;/script&gt;" in evil
    assert "&lt;script&gt;alert('body')&lt;/script&gt;" in evil
    assert "<span>javascript:alert(&#39;url&#39;)</span>" in evil  # shown, never a link
    target = hostile.get("/d/notes/target.html").text
    assert "with &lt;b&gt;html&lt;/b&gt; in the line" in target  # backlink context


def test_hostile_snippets_stay_text_in_json(hostile: TestClient) -> None:
    from markupsafe import escape

    found = hostile.get("/api/search", params={"q": "zebrafish"}).json()
    snippet = found["hits"][0]["snippet"]
    assert "1 < 2 > 0" in snippet  # text as written, for the page's textContent
    page = hostile.get("/search/", params={"q": "zebrafish"}).text
    assert "1 &lt; 2 &gt; 0 &amp; &#34;q&#34;" in page
    assert str(escape(snippet)).split("<mark>")[0][:20] in page


def test_graph_json_carries_titles_as_data(hostile: TestClient) -> None:
    graph = hostile.get("/api/graph")
    assert graph.headers["content-type"].startswith("application/json")
    titles = {n["title"] for n in graph.json()["nodes"]}
    assert "<script>alert('title')</script>" in titles


# -- refusals ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "host", ["evil.example", "localhost.evil.example", "127.0.0.1.nip.io", "attacker:8765", ""]
)
def test_foreign_hosts_are_refused(client: TestClient, host: str) -> None:
    page = client.get("/", headers={"Host": host})
    assert page.status_code == 403
    assert client.get("/api/search?q=ddp", headers={"Host": host}).status_code == 403


@pytest.mark.parametrize("host", ["localhost", "localhost:8765", "127.0.0.1:1", "[::1]:8765"])
def test_local_hosts_are_answered(client: TestClient, host: str) -> None:
    assert client.get("/", headers={"Host": host}).status_code == 200
    assert local_host(host)


def _mark(client: TestClient, key: str, status: str, **headers: str) -> Any:
    sent = {"Content-Type": "application/json", "X-Studykb-Token": TOKEN, **headers}
    return client.post(
        "/api/mark", content=json.dumps({"key": key, "status": status}), headers=sent
    )


@pytest.mark.parametrize(
    "headers",
    [
        {"X-Studykb-Token": ""},
        {"X-Studykb-Token": "guess"},
        {"Content-Type": "text/plain"},
        {"Content-Type": "application/x-www-form-urlencoded"},
        {"Origin": "https://evil.example"},
    ],
)
def test_writes_without_the_token_are_refused(
    client: TestClient, vault: Path, headers: dict[str, str]
) -> None:
    before = (vault / "notes/topics/ddp.md").read_bytes()
    answer = _mark(client, "notes/topics/ddp.md", "done", **headers)
    assert answer.status_code in (403, 415)
    assert "error" in answer.json()
    assert (vault / "notes/topics/ddp.md").read_bytes() == before


def test_mark_refuses_unknown_keys_and_statuses(client: TestClient, vault: Path) -> None:
    assert _mark(client, "../outside.md", "done").status_code == 404
    assert _mark(client, "notes/topics/ddp.md", "finished").status_code == 400
    assert client.get("/api/mark").status_code == 404  # GET is no write


@pytest.mark.parametrize(
    "path",
    [
        "/d/..%2F..%2Fetc%2Fpasswd.html",
        "/d/../../etc/passwd.html",
        "/files/..%2Fsecret.png",
        "/files/notes/../../secret.png",
        "/files/.studykb/state.png",
        "/files/notes/my-fsdp.md",
        "/files/notes/link.png",
        "/static/..%2F..%2Fpyproject.toml",
        "/plan/..%2Fx.html",
    ],
)
def test_paths_never_leave_the_vault(client: TestClient, vault: Path, path: str) -> None:
    (vault.parent / "secret.png").write_bytes(b"\x89PNG secret")
    (vault / "notes/link.png").symlink_to(vault.parent / "secret.png")
    answer = client.get(path)
    assert answer.status_code == 404, path
    assert b"PNG secret" not in answer.content


def test_vault_images_are_served(client: TestClient) -> None:
    image = client.get("/files/notes/img/d.png")
    assert image.status_code == 200 and image.content.startswith(b"\x89PNG")
    assert "sandbox" in image.headers["content-security-policy"]


# -- writing -----------------------------------------------------------------------------------
def test_mark_writes_the_note_as_studykb_mark_does(
    make_vault: Callable[..., Path], run: Callable[..., Any]
) -> None:
    by_web = make_vault(FILES, name="web")
    by_cli = make_vault(FILES, name="cli")
    kb = Session.open(by_web)
    kb.refresh()
    with TestClient(create_app(kb, refresh=True, token=TOKEN), base_url=BASE) as client:
        for key, status in (
            ("notes/topics/ddp.md", "done"),
            ("notes/my-fsdp.md", "todo"),
            ("courses/cs336.md#a2", "reading"),
        ):
            answer = _mark(client, key, status)
            assert answer.status_code == 200, answer.text
            assert answer.json() == {"key": key, "status": status}
        page = client.get("/d/notes/topics/ddp.html").text
        assert "status-done" in page
    kb.close()
    for query, status in (("ddp", "done"), ("notes/my-fsdp.md", "todo"), ("cs336#a2", "reading")):
        assert run("mark", query, status, vault=by_cli).exit_code == 0
    for path in ("notes/topics/ddp.md", "notes/my-fsdp.md", "courses/cs336.md"):
        assert (by_web / path).read_bytes() == (by_cli / path).read_bytes(), path
    assert b"status: done" in (by_web / "notes/topics/ddp.md").read_bytes()


def test_a_mark_is_published_to_open_pages(vault: Path) -> None:
    from studykb.web.live import Hub

    kb = Session.open(vault)
    kb.refresh()
    hub = Hub()
    got: list[list[str]] = []
    done = threading.Event()

    async def listen() -> None:
        async for keys in hub.batches(heartbeat=5):
            if keys:
                got.append(keys)
                done.set()
                return

    with TestClient(create_app(kb, refresh=True, token=TOKEN, hub=hub), base_url=BASE) as client:
        client.portal.start_task_soon(listen)  # type: ignore[union-attr]
        _wait(lambda: hub.listeners == 1)
        assert _mark(client, "notes/topics/ddp.md", "done").status_code == 200
        assert done.wait(5)
    assert got == [["notes/topics/ddp.md"]]
    kb.close()


def test_events_stream_sends_what_the_source_publishes(vault: Path) -> None:
    from studykb.web.live import Hub

    kb = Session.open(vault)
    kb.refresh()
    hub = Hub()

    def source(publish: Callable[[list[str]], None], stop: threading.Event) -> None:
        # publish once the stream listens (published before, the change would be lost
        # and the read below would wait for ever)
        while hub.listeners < 1:
            if stop.wait(0.01):
                return
        publish(["notes/topics/ddp.md", "notes/中文.md"])
        stop.wait(30)

    app = create_app(kb, source=source, token=TOKEN, hub=hub)
    with TestClient(app, base_url=BASE) as client, client.stream("GET", "/api/events") as events:
        assert events.headers["content-type"].startswith("text/event-stream")
        lines = events.iter_lines()
        assert next(lines).startswith("retry:")
        data = next(line for line in lines if line.startswith("data:"))
    assert json.loads(data[5:]) == {"changed": ["notes/topics/ddp.md", "notes/中文.md"]}
    kb.close()


def _wait(condition: Callable[[], bool], seconds: float = 30) -> None:
    import time

    end = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.01)


def test_list_pages_follow_the_vault(client: TestClient, vault: Path) -> None:
    home = client.get("/").text
    reading = home[home.index('id="reading-h"') : home.index('id="ready-h"')]
    assert "My FSDP notes" in reading
    assert _mark(client, "notes/my-fsdp.md", "done").status_code == 200
    home = client.get("/").text
    reading = home[home.index('id="reading-h"') : home.index('id="ready-h"')]
    assert "My FSDP notes" not in reading
    (vault / "notes/topics/new-topic.md").write_text("# Brand new topic\n", encoding="utf-8")
    assert "Brand new topic" in client.get("/topics/").text
