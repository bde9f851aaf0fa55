"""The web view in a real browser (headless Chromium through Playwright): pages open,
search answers as you type in both languages, the graph is clicked through, a mark
button changes the note on disk, saving a note updates the open page, the keyboard
works, and axe-core finds no accessibility violation.

Needs Debian's ``chromium`` (or ``STUDYKB_CHROMIUM``) and the ``playwright`` package
(the ``test`` extra); skipped, saying which is missing, otherwise. Screenshots go to
``$STUDYKB_SCREENSHOTS`` when set (else the test's temporary folder), to be looked at.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.test_web import FILES

pytestmark = pytest.mark.slow

CHROMIUM = (
    os.environ.get("STUDYKB_CHROMIUM")
    or shutil.which("chromium")
    or shutil.which("chromium-browser")
)
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
AXE = Path(__file__).resolve().parent.parent / "src/studykb/web/static/dev/vendor/axe.min.js"

MATH_NOTE = (
    "---\nid: math-note\nstatus: todo\n---\n# Math note\n\nThe loss is "
    "$L = -\\sum_i y_i \\log p_i$.\n\n```python\nloss = -(y * p.log()).sum()\n```\n"
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM:
        pytest.skip("no Chromium: apt-get install chromium (or set STUDYKB_CHROMIUM)")
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="pip install playwright (the test extra)"
    )
    with sync_api.sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=False)
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda exc: errors.append(str(exc)))
    opened.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    opened.errors = errors
    opened.shots = Path(os.environ.get("STUDYKB_SCREENSHOTS") or tmp_path)
    opened.shot_name = request.node.name
    yield opened
    context.close()


def shot(page: Any, name: str) -> Path:
    page.shots.mkdir(parents=True, exist_ok=True)
    path = page.shots / f"{page.shot_name}-{name}.png"
    page.screenshot(path=str(path))
    return path


class Served:
    def __init__(self, root: Path, url: str) -> None:
        self.root = root
        self.url = url


@pytest.fixture
def served(make_vault: Callable[..., Path]) -> Iterator[Served]:
    """``studykb serve`` in a thread: the real app, its watch and uvicorn."""
    from studykb.session import Session
    from studykb.web.app import create_app
    from studykb.web.live import Hub, watch_source
    from studykb.web.server import Server, bind

    root = make_vault({**FILES, "notes/math-note.md": MATH_NOTE})
    kb = Session.open(root)
    kb.refresh()
    kb.sync_search(quiet=True)
    lock, hub = threading.Lock(), Hub()
    app = create_app(kb, source=watch_source(kb, lock), lock=lock, hub=hub)
    sock = bind(0)
    server = Server(app, hub)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    _until(lambda: server.started, 20)
    yield Served(root, f"http://127.0.0.1:{sock.getsockname()[1]}")
    server.should_exit = True
    thread.join(10)
    sock.close()
    kb.close()


def _until(condition: Callable[[], Any], seconds: float) -> None:
    end = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.05)


# -- pages ---------------------------------------------------------------------------------
def test_document_page_math_code_and_keyboard(page: Any, served: Served) -> None:
    page.goto(served.url + "/d/notes/math-note.html")
    page.wait_for_selector(".math.inline .katex", timeout=10_000)
    assert page.locator(".highlight pre").count() == 1
    assert page.title().startswith("Math note")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip-link"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"
    page.locator("h1").click()
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "site-search-q"
    shot(page, "document")
    assert page.errors == []


def test_search_as_you_type_in_both_languages(page: Any, served: Served) -> None:
    page.goto(served.url + "/search/")
    box = page.locator("[data-search-primary]")
    box.type("all-red", delay=30)
    page.wait_for_selector("[data-search-results] li.hit mark", timeout=10_000)
    first = page.locator("[data-search-results] li.hit h2 a").first
    assert first.inner_text() == "Distributed Data Parallel"
    box.fill("")
    box.type("数据并行", delay=30)
    page.wait_for_function(
        "() => document.querySelector('[data-search-status]').textContent.includes('数据并行')",
        timeout=10_000,
    )
    titles = page.locator("[data-search-results] li.hit h2").all_inner_texts()
    assert "Distributed Data Parallel" in titles
    assert "数据" in page.locator("[data-search-results] mark").first.inner_text()
    shot(page, "search-zh")
    assert page.errors == []


def test_graph_is_clicked_through(page: Any, served: Served) -> None:
    page.goto(served.url + "/graph/")
    page.wait_for_function("() => window.studykbGraph && window.studykbGraph.ready", timeout=20_000)
    # the layout worker settles (its budget: 3 s)
    page.wait_for_function("() => window.studykbGraph.timings.layoutDone > 0", timeout=20_000)
    page.fill("[data-graph-search]", "FSDP2 tut")
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => document.querySelector('[data-graph-info]').textContent.includes('FSDP2 tutorial')",
        timeout=10_000,
    )
    page.wait_for_timeout(800)  # the camera moves to the selection
    shot(page, "selected")
    point = page.evaluate("""() => {
        const r = window.studykbGraph.api.renderer();
        const g = r.getGraph();
        const n = g.nodes().find(
            (k) => g.getNodeAttribute(k, 'label') === 'FSDP2 tutorial');
        const p = r.graphToViewport(g.getNodeAttributes(n));
        const box = document.querySelector('[data-graph-canvas]').getBoundingClientRect();
        return {x: box.x + p.x, y: box.y + p.y};
    }""")
    with page.expect_navigation(timeout=10_000):
        page.mouse.click(point["x"], point["y"])
    assert page.url.endswith("/d/notes/entries/fsdp-tutorial.html")
    assert page.errors == []


def test_keyboard_opens_the_selected_node(page: Any, served: Served) -> None:
    page.goto(served.url + "/graph/?focus=notes%2Ftopics%2Ffsdp2.md")
    page.wait_for_function("() => window.studykbGraph && window.studykbGraph.ready", timeout=20_000)
    page.focus("[data-graph-canvas]")
    with page.expect_navigation(timeout=10_000):
        page.keyboard.press("Enter")
    assert page.url.endswith("/d/notes/topics/fsdp2.html")


def test_mark_button_changes_the_note_on_disk(page: Any, served: Served) -> None:
    note = served.root / "notes/topics/ddp.md"
    assert b"status:" not in note.read_bytes()
    page.goto(served.url + "/plan/notes/topics/fsdp2.html")
    button = page.locator('button[data-mark-key="notes/topics/ddp.md"]').first
    assert button.get_attribute("aria-pressed") == "false"
    button.click()
    page.wait_for_function(
        "() => document.querySelector('button[data-mark-key=\"notes/topics/"
        "ddp.md\"]').getAttribute('aria-pressed') === 'true'",
        timeout=10_000,
    )
    _until(lambda: b"status: done" in note.read_bytes(), 30)
    shot(page, "marked")
    assert page.errors == []


def test_saving_a_note_updates_the_open_page(page: Any, served: Served) -> None:
    page.goto(served.url + "/d/notes/topics/ddp.html")
    page.wait_for_timeout(500)  # the event stream is open
    note = served.root / "notes/topics/ddp.md"
    note.write_text(
        note.read_text(encoding="utf-8") + "\nA sentence saved just now.\n", encoding="utf-8"
    )
    page.wait_for_selector("text=A sentence saved just now.", timeout=8_000)
    assert page.errors == []


PAGES = [
    "/",
    "/topics/",
    "/lists/",
    "/courses/",
    "/d/notes/topics/fsdp2.html",
    "/d/notes/my-fsdp.html",
    "/d/courses/cs336.html",
    "/d/notes/lists/start.html",
    "/plan/notes/topics/fsdp2.html",
    "/search/?q=fsdp2",
    "/graph/",
]


#: Resolves after two more animation frames: the page has drawn what was pending.
RENDERED = "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_pages_pass_axe(browser: Any, served: Served, scheme: str) -> None:
    context = browser.new_context(bypass_csp=True, color_scheme=scheme)
    tab = context.new_page()
    found = {}
    for path in PAGES:
        tab.goto(served.url + path)
        if path == "/graph/":
            tab.wait_for_function("() => window.studykbGraph.ready", timeout=20_000)
        # what the page's scripts draw in the next frames (the graph's first frame)
        tab.evaluate(RENDERED)
        tab.add_script_tag(path=str(AXE))
        result = tab.evaluate(
            "async () => (await axe.run(document)).violations"
            ".map(v => v.id + ': ' + v.nodes.map(n => n.target).join(' '))"
        )
        if result:
            found[path] = result
    context.close()
    assert found == {}


# -- the static site -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def site_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``studykb site`` of the FILES vault, built once for the module (its tests only
    open its pages)."""
    from click.testing import CliRunner

    from conftest import _cli, write_files

    root = tmp_path_factory.mktemp("static")
    vault = write_files(root / "vault", {**FILES, "studykb.toml": ""})
    out = root / "public"
    env = {"STUDYKB_VAULT": None, "STUDYKB_DEBUG": "1", "NO_COLOR": "1"}
    result = CliRunner().invoke(_cli(), ["--vault", str(vault), "site", "-o", str(out)], env=env)
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def static_site(site_folder: Path) -> Iterator[str]:
    """The static site over HTTP (a plain file server)."""
    handler = functools.partial(_Quiet, directory=str(site_folder))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


def test_static_site_search_and_graph(page: Any, static_site: str) -> None:
    page.goto(static_site + "/search/index.html")
    page.locator("[data-search-primary]").type("数据并行", delay=30)
    page.wait_for_selector("[data-search-results] li.hit", timeout=10_000)
    link = page.locator("[data-search-results] li.hit h2 a").first
    assert link.inner_text() == "Distributed Data Parallel"
    with page.expect_navigation():
        link.click()
    assert page.url.endswith("/d/notes/topics/ddp.html")
    page.goto(static_site + "/graph/index.html")
    page.wait_for_function("() => window.studykbGraph && window.studykbGraph.ready", timeout=20_000)
    assert "documents" in page.locator("[data-graph-status]").inner_text()
    page.goto(static_site + "/d/notes/topics/fsdp2.html")
    with page.expect_navigation():
        page.locator(".doc-actions a", has_text="What should I read").click()
    assert "What to read before" in page.locator("h1").inner_text()
    assert page.errors == []


def test_static_header_search_box_keeps_the_query(page: Any, static_site: str) -> None:
    """The header's box on any page sends ?q= to the search page, which has no server to
    fill its form: the page reads the address and shows the hits."""
    page.goto(static_site + "/d/notes/topics/fsdp2.html")
    page.fill("#site-search-q", "数据并行")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert "/search/" in page.url
    page.wait_for_selector("[data-search-results] li.hit", timeout=10_000)
    assert page.locator("[data-search-primary]").input_value() == "数据并行"
    titles = page.locator("[data-search-results] li.hit h2").all_inner_texts()
    assert "Distributed Data Parallel" in titles
    assert page.errors == []


def test_search_waits_for_the_input_methods_composition(page: Any, static_site: str) -> None:
    """Pinyin typed into an IME ("shu ju") is not searched; the committed 数据并行 is."""
    page.goto(static_site + "/search/index.html")
    page.wait_for_timeout(200)
    page.evaluate("""() => {
        const box = document.querySelector('[data-search-primary]');
        box.focus();
        box.dispatchEvent(new CompositionEvent('compositionstart', {bubbles: true, data: ''}));
        for (const data of ['s', 'sh', 'shu', 'shu j', 'shu ju']) {
            box.value = data;
            box.dispatchEvent(new CompositionEvent('compositionupdate', {bubbles: true, data}));
            box.dispatchEvent(new InputEvent('input', {bubbles: true, isComposing: true, data}));
        }
    }""")
    page.wait_for_timeout(600)  # longer than the as-you-type delay
    status = page.locator("[data-search-status]").inner_text()
    assert "shu" not in status
    page.evaluate("""() => {
        const box = document.querySelector('[data-search-primary]');
        const data = box.value = '数据并行';
        box.dispatchEvent(new InputEvent('input', {bubbles: true, isComposing: true, data}));
        box.dispatchEvent(new CompositionEvent('compositionend', {bubbles: true, data}));
    }""")
    page.wait_for_selector("[data-search-results] li.hit", timeout=10_000)
    assert "数据并行" in page.locator("[data-search-status]").inner_text()
    assert page.errors == []


def test_static_site_from_disk_searches_and_draws_the_graph(page: Any, site_folder: Path) -> None:
    """Opened as files (file://), where a page may not fetch the JSON beside it: search
    and the graph load the same data from search-index.js and graph-data.js."""
    out = site_folder
    page.goto((out / "index.html").as_uri())
    page.fill("#site-search-q", "数据并行")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    page.wait_for_selector("[data-search-results] li.hit", timeout=10_000)
    titles = page.locator("[data-search-results] li.hit h2").all_inner_texts()
    assert "Distributed Data Parallel" in titles
    page.goto((out / "graph/index.html").as_uri())
    page.wait_for_function("() => window.studykbGraph && window.studykbGraph.ready", timeout=20_000)
    assert "documents" in page.locator("[data-graph-status]").inner_text()
    assert [e for e in page.errors if "Worker" not in e] == []


#: (labels shown, pairs of shown labels whose boxes overlap) in the graph's viewport.
LABELS = """() => {
  const r = window.studykbGraph.api.renderer();
  const g = r.getGraph();
  const shown = Array.from(r.getNodeDisplayedLabels());
  const ctx = document.createElement('canvas').getContext('2d');
  ctx.font = '500 13px sans-serif';
  const boxes = shown.map((n) => {
    const a = g.getNodeAttributes(n);
    const p = r.graphToViewport(a);
    const x = p.x + r.scaleSize(r.getNodeDisplayData(n).size) + 3;
    return [x, p.y - 9, x + ctx.measureText(a.label || '').width, p.y + 4];
  });
  let overlaps = 0;
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const [a, b] = [boxes[i], boxes[j]];
      if (a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3]) overlaps++;
    }
  }
  return [shown.length, overlaps];
}"""


def test_graph_labels_show_unzoomed_and_do_not_pile_up(
    page: Any, run: Callable[..., Any], bundled: Path, tmp_path: Path
) -> None:
    """The bundled vault's whole graph names its hubs before any zoom (it showed no
    label), and FSDP2's 2-step neighbourhood is not a ring of overlapping labels (52
    overlapping pairs before)."""
    out = tmp_path / "public"
    assert run("site", "-o", str(out), vault=bundled).exit_code == 0
    graph = (out / "graph/index.html").as_uri()
    page.goto(graph)
    page.wait_for_function("() => window.studykbGraph && window.studykbGraph.ready", timeout=20_000)
    page.wait_for_timeout(300)
    shown, _overlaps = page.evaluate(LABELS)
    assert shown >= 10
    page.goto(graph + "?focus=notes%2Ftopics%2Ffsdp2.md&mode=around&steps=2")
    page.wait_for_function("() => window.studykbGraph && window.studykbGraph.ready", timeout=20_000)
    page.wait_for_timeout(800)  # the camera settles
    shown, overlaps = page.evaluate(LABELS)
    shot(page, "around")
    assert shown >= 10 and overlaps <= 2
