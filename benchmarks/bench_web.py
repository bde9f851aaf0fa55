"""Benchmarks of the web view: ``studykb serve`` and ``studykb site``.

    python benchmarks/bench_web.py                         # a 10k vault in a temp folder
    python benchmarks/bench_web.py --vault /tmp/v10k       # a generated vault (copied)
    python benchmarks/bench_web.py --docs 1000 --runs 1 --markdown --json out.json
    python benchmarks/bench_web.py --vault /tmp/v10k --skip-serve   # site and build only

Targets (10k documents, the generator's vault): a page renders in <= 50 ms server side
(the ``Server-Timing`` the server puts on every response, median and p95 over pages
never asked before); search answers in <= 50 ms; the whole vault's graph is interactive
in <= 2 s in the browser (headless Chromium: ``graph.js`` records when the data is
loaded, the graph built, the first frame drawn and every handler in place); ``studykb
site`` from scratch takes <= 1.0x ``studykb build`` from scratch, both in fresh
processes, in turns, in the same run.

Baselines in the same run: the same server answering a static file (what any page
costs before studykb does anything), and the home page's load in the same browser.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from common import LOCAL, Table, interleave, preamble, run  # noqa: E402

PAGE_MS = 50
SEARCH_MS = 50
GRAPH_MS = 2000
SITE_RATIO = 1.0
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def studykb(vault: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "studykb", "--vault", str(vault), *args]


def generate(out: Path, docs: int) -> None:
    subprocess.run(
        [sys.executable, str(HERE / "gen_vault.py"), str(out), "--docs", str(docs)],
        check=True,
        capture_output=True,
    )


def ms(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return statistics.median(ordered), p95


# -- site and build -----------------------------------------------------------------------------
def bench_site(vault: Path, work: Path, runs: int, table: Table, figures: dict[str, Any]) -> None:
    out = work / "public"

    def fresh_state() -> None:
        shutil.rmtree(vault / ".studykb", ignore_errors=True)

    def scratch() -> None:
        fresh_state()
        shutil.rmtree(out, ignore_errors=True)

    timings = interleave(
        {
            "build": studykb(vault, "build"),
            "site": studykb(vault, "site", "-o", str(out)),
            "sidebars": studykb(vault, "sidebar", "--format", "json", "-o", str(work / "sb.json")),
            "markdown": [sys.executable, "-c", MARKDOWN_FLOOR, str(vault)],
        },
        runs,
        before={"build": scratch, "site": scratch, "sidebars": fresh_state},
        env=LOCAL,
        check=True,
    )
    build, site = timings["build"].median, timings["site"].median
    ratio = site / build
    table.add(
        "studykb build, from scratch (baseline)",
        f"{build:.1f} s",
        f"cpu {timings['build'].cpu:.1f} s",
        "1.00x",
        "",
        "",
    )
    table.add(
        "studykb site, from scratch",
        f"{site:.1f} s",
        f"cpu {timings['site'].cpu:.1f} s",
        f"{ratio:.2f}x",
        f"<= {SITE_RATIO:.1f}x",
        "ok" if ratio <= SITE_RATIO else "MISSED",
    )
    # What a site cannot do without, each measured alone: the related sidebar of every
    # document (from scratch: the vault read, the ranker loaded, every document ranked)
    # and markdown-it's own rendering of every note, on every core, with nothing of
    # studykb's (no links resolved, no highlighting, no page around it).
    floor = {name: timings[name].median for name in ("sidebars", "markdown")}
    table.add(
        "  floor: studykb sidebar, every document, from scratch",
        f"{floor['sidebars']:.1f} s",
        f"cpu {timings['sidebars'].cpu:.1f} s",
        f"{floor['sidebars'] / build:.2f}x",
        "",
        "",
    )
    table.add(
        "  floor: markdown-it-py render of every note (all cores)",
        f"{floor['markdown']:.1f} s",
        f"cpu {timings['markdown'].cpu:.1f} s",
        f"{floor['markdown'] / build:.2f}x",
        "",
        "",
    )
    table.add(
        "  floor: the two together",
        f"{sum(floor.values()):.1f} s",
        "what the site's pages need before any template",
        f"{sum(floor.values()) / build:.2f}x",
        "",
        "",
    )
    started = time.perf_counter()
    again = subprocess.run(
        studykb(vault, "site", "-o", str(out), "--json"),
        capture_output=True,
        text=True,
        env={**os.environ, **LOCAL},
        check=True,
    )
    second = time.perf_counter() - started
    written = json.loads(again.stdout)
    table.add(
        "studykb site, again (nothing changed)",
        f"{second:.1f} s",
        f"{written['written']} of {written['files']} files written",
        f"{second / build:.2f}x",
        "0 written",
        "ok" if written["written"] == 0 else "MISSED",
    )
    edited = _after_edit(vault, out, build, table)
    figures.update(
        **edited,
        build_s=build,
        site_s=site,
        site_ratio=ratio,
        site_again_s=second,
        site_again_written=written["written"],
        site_files=written["files"],
        floor_sidebars_s=floor["sidebars"],
        floor_markdown_s=floor["markdown"],
    )


def _after_edit(vault: Path, out: Path, build: float, table: Table) -> dict[str, Any]:
    """``studykb site`` after a line (with a link) is appended to one note: wall and CPU,
    the pages made again and the files written (target <= 2 s)."""
    note = sorted((vault / "notes").rglob("*.md"))[0]
    original = note.read_bytes()
    try:
        with note.open("a", encoding="utf-8") as fh:
            fh.write("\nEdited line with [[entry-00001]].\n")
        done = run(studykb(vault, "site", "-o", str(out), "--json"), env=LOCAL, check=True)
    finally:
        note.write_bytes(original)
    written = json.loads(done.stdout)
    table.add(
        "studykb site, after a one-line edit",
        f"{done.seconds:.1f} s",
        f"cpu {done.cpu:.1f} s; {written['written']} of {written['files']} files written",
        f"{done.seconds / build:.2f}x",
        "<= 2 s",
        "ok" if done.seconds <= 2.0 else "MISSED",
    )
    return {
        "site_edit_s": done.seconds,
        "site_edit_cpu_s": done.cpu,
        "site_edit_written": written["written"],
        "site_edit_rss_mb": done.rss_mb,
    }


#: markdown-it-py alone rendering every note of a vault, in a process per core.
MARKDOWN_FLOOR = r"""
import os, sys
from multiprocessing import get_context
from pathlib import Path
from markdown_it import MarkdownIt

MD = MarkdownIt("commonmark").enable(["table", "strikethrough"])

def render(path):
    return len(MD.render(path.read_text(encoding="utf-8", errors="replace")))

paths = [p for p in Path(sys.argv[1]).rglob("*.md") if ".studykb" not in p.parts]
with get_context("fork").Pool(os.cpu_count() or 1) as pool:
    sum(pool.imap_unordered(render, paths, chunksize=64))
"""


# -- the server -----------------------------------------------------------------------------------
class Server:
    def __init__(self, vault: Path) -> None:
        self.log = tempfile.TemporaryFile("w+")  # noqa: SIM115 (closed in stop)
        self.proc = subprocess.Popen(
            studykb(vault, "serve"),
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            env={**os.environ, **LOCAL},
        )
        line = self.proc.stdout.readline() if self.proc.stdout else ""
        threading.Thread(target=self._drain, daemon=True).start()
        found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        if not found:
            self.stop()
            raise RuntimeError(f"serve did not start: {line}")
        self.port = int(found.group(1))
        self.url = f"http://127.0.0.1:{self.port}"

    def _drain(self) -> None:
        for _line in self.proc.stdout or ():
            pass

    def errors(self) -> str:
        self.log.seek(0)
        return self.log.read()[-3000:]

    def get(self, path: str) -> tuple[float, float, int, bytes]:
        """(server ms, client ms, status, body) of one GET."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        started = time.perf_counter()
        conn.request("GET", path, headers={"Accept-Encoding": "gzip"})
        answer = conn.getresponse()
        body = answer.read()
        client = (time.perf_counter() - started) * 1000
        timing = answer.getheader("server-timing") or ""
        found = re.search(r"dur=([\d.]+)", timing)
        conn.close()
        return float(found.group(1)) if found else client, client, answer.status, body

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def page_paths(vault: Path, info: dict[str, Any], n: int) -> dict[str, list[str]]:
    """Pages to ask for, by kind, each asked once (cold: never rendered before)."""
    rng = random.Random(1)
    files = sorted(
        p.relative_to(vault).as_posix()
        for p in vault.rglob("*.md")
        if ".studykb" not in p.parts and "drafts" not in p.parts and ".obsidian" not in p.parts
    )

    def doc(path: str) -> str:
        return "/d/" + path[:-3] + ".html"

    kinds = {
        "note": [
            f
            for f in files
            if f.startswith("notes/")
            and "/entries/" not in f
            and "/topics/" not in f
            and "/lists/" not in f
        ],
        "entry": [f for f in files if "/entries/" in f],
        "topic": [f for f in files if "/topics/" in f],
        "course": [f for f in files if f.startswith("courses/")],
        "list": [f for f in files if "/lists/" in f],
    }
    out = {
        kind: [doc(p) for p in rng.sample(paths, min(n, len(paths)))]
        for kind, paths in kinds.items()
        if paths
    }
    out["topic plan"] = ["/plan/" + p[:-3] + ".html" for p in rng.sample(kinds["topic"], n)]
    deep = info.get("deep_target_path")
    if deep:
        out["plan, deepest topic"] = ["/plan/" + deep[:-3] + ".html?all=1"]
    out["list pages, first view"] = ["/", "/topics/", "/lists/", "/courses/", "/graph/"]
    out["list pages, again"] = out["list pages, first view"]
    return out


SEARCHES = [
    "tensor",
    "allreduce",
    "gradient checkpoint",
    "kv cache",
    "pipeline parallel",
    "张量",
    "并行",
    "显存",
    "梯度",
    "通信",
    "tens",
    "all-red",
    "lay",
]


def bench_serve(
    vault: Path,
    info: dict[str, Any],
    n: int,
    table: Table,
    figures: dict[str, Any],
    browser: bool = True,
) -> None:
    shutil.rmtree(vault / ".studykb", ignore_errors=True)
    subprocess.run(
        studykb(vault, "build"), check=True, capture_output=True, env={**os.environ, **LOCAL}
    )
    server = Server(vault)
    try:
        _until_up(server)
        floor = [server.get("/static/studykb.css")[0] for _ in range(30)]
        base, _ = ms(floor)
        table.add("serve: a static file (baseline)", f"{base:.2f} ms", "", "1x", "", "")
        server.get("/")  # the first page loads the caches every later page shares
        everything: list[float] = []
        for kind, paths in page_paths(vault, info, n).items():
            spent = [_ok(server.get(p), p)[0] for p in paths]
            everything += spent if kind != "plan, deepest topic" else []
            med, p95 = ms(spent)
            limit = PAGE_MS if kind != "plan, deepest topic" else None
            table.add(
                f"serve: {kind} page ({len(spent)})",
                f"{med:.1f} ms",
                f"p95 {p95:.1f} ms",
                f"{med / base:.0f}x",
                f"<= {limit} ms" if limit else "(info)",
                ("ok" if p95 <= limit else "MISSED") if limit else "",
            )
            figures[f"page_{kind}_ms"] = [med, p95]
        med, p95 = ms(everything)
        figures["pages_ms"] = [med, p95]
        spent = []
        for q in SEARCHES:
            spent += [
                _ok(server.get(f"/api/search?q={_quote(q)}&limit=10"), q)[0] for _ in range(3)
            ]
        med, p95 = ms(spent)
        table.add(
            f"serve: /api/search ({len(SEARCHES)} queries x3)",
            f"{med:.1f} ms",
            f"p95 {p95:.1f} ms",
            f"{med / base:.0f}x",
            f"<= {SEARCH_MS} ms",
            "ok" if p95 <= SEARCH_MS else "MISSED",
        )
        figures["search_ms"] = [med, p95]
        cold = server.get("/api/graph")
        warm = server.get("/api/graph")
        table.add(
            "serve: /api/graph, first / later",
            f"{cold[0]:.0f} ms",
            f"{warm[0]:.0f} ms, {len(cold[3]) / 1e6:.1f} MB gzip",
            "",
            "(info)",
            "",
        )
        figures["graph_api_ms"] = [cold[0], warm[0]]
        if browser:
            bench_browser(server, table, figures)
    finally:
        server.stop()


def bench_browser(server: Server, table: Table, figures: dict[str, Any]) -> None:
    chromium = os.environ.get("STUDYKB_CHROMIUM") or shutil.which("chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        chromium = None
    if not chromium:
        table.add("graph interactive in the browser", "-", "no chromium/playwright", "", "", "")
        return
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        homes, graphs = [], []
        for _ in range(3):
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(server.url + "/")
            homes.append(
                page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd")
            )
            page.goto(server.url + "/graph/")
            page.wait_for_function(
                "() => window.studykbGraph && window.studykbGraph.ready", timeout=60_000
            )
            graphs.append(page.evaluate("window.studykbGraph.timings.interactiveSinceNavigation"))
            page.close()
        browser.close()
    home, graph = statistics.median(homes), statistics.median(graphs)
    table.add("browser: home page loaded (baseline)", f"{home:.0f} ms", "", "1x", "", "")
    table.add(
        "browser: whole graph interactive",
        f"{graph:.0f} ms",
        f"runs {', '.join(f'{g:.0f}' for g in graphs)}",
        f"{graph / home:.0f}x",
        f"<= {GRAPH_MS} ms",
        "ok" if graph <= GRAPH_MS else "MISSED",
    )
    figures.update(home_load_ms=home, graph_interactive_ms=graph)


def _until_up(server: Server) -> None:
    for _ in range(600):
        try:
            if server.get("/static/favicon.svg")[2] == 200:
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("the server did not answer")


def _ok(answer: tuple[float, float, int, bytes], what: str) -> tuple[float, float, int, bytes]:
    if answer[2] != 200:
        raise RuntimeError(f"{what}: HTTP {answer[2]}: {answer[3][:300]!r}")
    return answer


def _quote(text: str) -> str:
    from urllib.parse import quote

    return quote(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vault", type=Path, help="a generated vault to copy")
    parser.add_argument("--docs", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=2, help="build/site runs each")
    parser.add_argument("--pages", type=int, default=20, help="pages asked per kind")
    parser.add_argument("--skip-site", action="store_true")
    parser.add_argument("--skip-serve", action="store_true", help="no server (nor browser)")
    parser.add_argument("--skip-browser", action="store_true")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    preamble()
    work = Path(tempfile.mkdtemp(prefix="studykb-bench-web-"))
    vault = work / "vault"
    try:
        if args.vault:
            shutil.copytree(args.vault, vault, ignore=shutil.ignore_patterns(".studykb"))
        else:
            generate(vault, args.docs)
        info = (
            json.loads((vault / ".bench.json").read_text())
            if (vault / ".bench.json").exists()
            else {}
        )
        table = Table("what", "figure", "detail", "vs baseline", "target", "")
        figures: dict[str, Any] = {"docs": info.get("docs", args.docs)}
        if not args.skip_site:
            bench_site(vault, work, args.runs, table, figures)
        if not args.skip_serve:
            bench_serve(vault, info, args.pages, table, figures, browser=not args.skip_browser)
        print(f"\n{figures['docs']} documents; machine: {os.cpu_count()} cores\n")
        print(table.render(markdown=args.markdown))
        if args.json:
            args.json.write_text(json.dumps(figures, indent=2))
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
