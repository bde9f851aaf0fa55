"""``studykb site -o public/``: the served pages as static files, for any web host.

Every link is relative, so the folder works under any address (GitHub Pages' project
sites included); ``--base-url`` adds canonical links and a ``sitemap.xml``. Search runs
in the browser over ``search-index.json``, the graph reads ``graph.json``; neither the
write token nor the mark buttons are in a static site.

A second run rewrites only what changed: ``.studykb-site.json`` in the output folder
lists every file the site wrote with a digest of its content; a file whose new content
has the same digest (and is still there, the same size) is left alone, and files of an
earlier build that are no longer part of the site are removed, but only when their
content still has the digest the manifest gives (a file the site did not write, or one
changed since, is left alone). Nothing else in the folder is touched.

Every path the site writes or removes lies inside the real output folder: a symbolic
link anywhere inside it is refused with a message before anything is written (a
committed ``public/link -> ../notes`` must never make the site write or delete there).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from xml.sax.saxutils import escape as xml_escape

from studykb.errors import UsageError
from studykb.web import graph_data, search_index
from studykb.web.links import INDEXES, Linker, href, page_file, plan_file, relative_root
from studykb.web.pages import Page, Pages
from studykb.web.templating import STATIC, TEMPLATES, Frame, render, vault_title

if TYPE_CHECKING:
    from studykb.api import Session
    from studykb.model import Document
    from studykb.runtime.pools import Beside

MANIFEST = ".studykb-site.json"
MANIFEST_VERSION = 1
Progress = Callable[[int, int], None]


@dataclass
class Built:
    """What one build did."""

    pages: int = 0
    files: int = 0
    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    seconds: float = 0.0


class Output:
    """The output folder: writes a file only when its content changed."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.old, self.old_state = _read_manifest(folder)
        self.state = ""
        """What the site is made from (vault state, code, options); see :func:`made_from`."""
        self.new: dict[str, str] = {}
        self.written: list[str] = []
        self.folders: set[Path] = set()
        """Folders known to exist (made or seen by this process)."""

    def put(self, path: str, data: bytes) -> None:
        digest, written = self.write(path, data)
        self.record(path, digest, written)

    def write(self, path: str, data: bytes) -> tuple[str, bool]:
        """Write ``data`` unless the file already holds it: (digest, whether written).
        Safe in a worker process (nothing is recorded here)."""
        digest = _digest(data)
        target = self.folder / path
        if self.old.get(path) == digest and _size(target) == len(data):
            return digest, False
        self._real_folder(target.parent)
        if os.path.islink(target):
            raise UsageError(_link_message(self.folder, target))
        temporary = target.with_name(f".{target.name}.studykb-tmp")
        temporary.write_bytes(data)
        os.replace(temporary, target)
        return digest, True

    def record(self, path: str, digest: str, written: bool) -> None:
        self.new[path] = digest
        if written:
            self.written.append(path)

    def _real_folder(self, folder: Path) -> None:
        """Make ``folder`` (inside the output) as needed; every part of it below the
        output folder must be a real folder, never a link."""
        if folder in self.folders:
            return
        if folder != self.folder:
            self._real_folder(folder.parent)
            try:
                st = os.lstat(folder)
            except FileNotFoundError:
                folder.mkdir(exist_ok=True)
                st = os.lstat(folder)
            if stat.S_ISLNK(st.st_mode):
                raise UsageError(_link_message(self.folder, folder))
            if not stat.S_ISDIR(st.st_mode):
                raise UsageError(f"{folder} is in the way of the site: it is not a folder.")
        self.folders.add(folder)

    def finish(self) -> list[str]:
        """Remove what an earlier build wrote that is no longer part of the site: only
        real files below real folders whose content is still what the site wrote."""
        removed = []
        for path in sorted(set(self.old) - set(self.new)):
            if self._remove(path):
                removed.append(path)
        manifest = {
            "version": MANIFEST_VERSION,
            "state": self.state,
            "files": dict(sorted(self.new.items())),
        }
        data = json.dumps(manifest, ensure_ascii=False, indent=0).encode()
        temporary = self.folder / (MANIFEST + ".tmp")
        temporary.write_bytes(data)
        os.replace(temporary, self.folder / MANIFEST)
        return removed

    def _remove(self, path: str) -> bool:
        target = self.folder / path
        parent = self.folder
        for part in Path(path).parts[:-1]:  # never through a link (refused before, but raced)
            parent = parent / part
            if not parent.is_dir() or parent.is_symlink():
                return False
        try:
            st = os.lstat(target)
            if not stat.S_ISREG(st.st_mode) or _digest(target.read_bytes()) != self.old[path]:
                return False  # not the file this site wrote: leave it
            target.unlink()
        except OSError:
            return False
        return True


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _link_message(out: Path, link: Path) -> str:
    try:
        points = os.readlink(link)
    except OSError:
        points = "?"
    return (
        f"{link} is a symbolic link (to {points}) inside the output folder {out}; "
        "studykb site writes and removes only real files there. Remove the link, or "
        "write the site to another folder."
    )


def refuse_links(out: Path) -> None:
    """Refuse an output folder holding a symbolic link anywhere below it."""
    for folder, dirs, files in os.walk(out):  # never follows a folder link
        for name in sorted((*dirs, *files)):
            path = Path(folder) / name
            if path.is_symlink():
                raise UsageError(_link_message(out, path))


def build_site(
    kb: Session, out: Path, *, base_url: str | None = None, progress: Progress | None = None
) -> Built:
    """Write the whole site to ``out``; only changed files are written."""
    started = time.perf_counter()
    out = check_output(kb.root, out)
    refuse_links(out)
    output = Output(out)
    output.state = made_from(kb, base_url)
    if _unchanged(output):  # nothing the site is made from changed: nothing to write
        output.new = dict(output.old)
        output.finish()
        return Built(
            pages=sum(p.endswith(".html") for p in output.new),
            files=len(output.new),
            seconds=time.perf_counter() - started,
        )
    docs = sorted(d.key for d in kb.documents().values() if d.type != "unit")
    work = Work(
        Pages(kb),
        Frame(vault_title(kb.config.title, kb.root.name), "static", canonical_base=base_url),
        output,
        {},
    )
    others = _load(work, docs)
    built = Built()
    for path, digest, written, assets in [*_site_pages(work, docs, progress), *others.result()]:
        output.record(path, digest, written)
        work.pages.assets.update(assets)
        built.pages += path.endswith(".html")
    _static_files(output)
    _vault_files(kb, work.pages.assets, output)
    if base_url:
        output.put("sitemap.xml", _sitemap(base_url, output.new))
    built.removed = output.finish()
    built.written, built.files = output.written, len(output.new)
    built.seconds = time.perf_counter() - started
    return built


def _load(work: Work, docs: list[str]) -> Beside:
    """Load what the workers inherit, once, with the collector off and then frozen (a
    worker's collections never walk it, nor copy its pages by touching it); the search
    index, the graph and the list pages need no ranker: they are made in a process of
    their own (returned) while this one loads it."""
    from studykb.runtime.memory import paused_gc
    from studykb.runtime.pools import beside

    pages, kb = work.pages, work.pages.kb
    with paused_gc(freeze=True):
        pages.preload_links()
        pages.knowledge()
        work.texts = kb.texts()  # for the search index, read before the workers fork
        others = beside(_other_files, work)
        pages.preload_contexts()
        if docs:  # the ranker and its caches
            kb.sidebar(kb.documents()[docs[0]])
    return others


def check_output(root: Path, out: Path) -> Path:
    """The output folder, refusing the vault itself or any folder that holds it."""
    out = out.expanduser().resolve()
    vault = root.resolve()
    if out == vault or vault.is_relative_to(out):
        raise UsageError(
            f"{out} holds the vault; write the site to a folder of its own (e.g. -o public/)."
        )
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out} is not a folder.")
    out.mkdir(parents=True, exist_ok=True)
    return out


def _index_pages(pages: Pages) -> Iterator[tuple[str, Page]]:
    """(path, page) of the list pages."""
    index = Linker("../", static=True)  # the list pages sit one folder down
    yield "index.html", pages.status(Linker("./", static=True))
    yield "topics/index.html", pages.topics(index)
    yield "lists/index.html", pages.lists(index)
    yield "courses/index.html", pages.courses(index)
    yield "progress/index.html", pages.progress(index)
    yield "search/index.html", pages.search(index, "", {})
    yield "graph/index.html", Page("graph.html", {})


@dataclass
class Work:
    """What the workers that write the pages share (inherited, never pickled)."""

    pages: Pages
    frame: Frame
    output: Output
    texts: dict[str, tuple[str, list[str]]]
    """The plain text of every file (the search index's), read before the workers start."""


Done = tuple[str, str, bool, list[str]]
#: Sidebars asked of the ranker at once: far fewer than make it start workers of its own
#: (a worker cannot), and a bounded number held at a time.
BATCH = 200


def _site_pages(work: Work, keys: list[str], progress: Progress | None) -> Iterator[Done]:
    """Every document's page (and a topic's plan page), written by forked workers that
    inherit the loaded vault: (path, digest, written, vault files shown) of each."""
    from studykb.runtime.pools import cores, map_shared

    workers = max(1, min(cores(), len(keys)))
    # the pool hands out up to four tasks a worker one at a time (more are grouped)
    chunks = chunked(keys, workers, 4 * workers)
    done = 0
    for part in map_shared(_render_chunk, work, chunks, workers):
        yield from part
        done += sum(path.startswith("d/") for path, *_rest in part)
        if progress is not None:
            progress(done, len(keys))


def chunked(keys: list[str], workers: int, most: int) -> list[list[str]]:
    """``keys`` in at most ``most`` chunks for ``workers`` that take them in turn, each
    chunk one worker's share of what is left (guided self-scheduling): the chunks get
    shorter, so the workers finish nearly together. The keys are shuffled first (with a
    fixed seed), so every chunk holds the same mix of documents (a topic, with its plan
    page, costs twice a note) and chunks of a size take about as long."""
    mixed = list(keys)
    random.Random(len(keys)).shuffle(mixed)
    chunks: list[list[str]] = []
    while mixed:
        size = len(mixed) if len(chunks) == most - 1 else -(-len(mixed) // workers)
        chunks.append(sorted(mixed[:size]))
        del mixed[:size]
    return chunks


def _render_chunk(work: Work, keys: list[str]) -> list[Done]:
    pages, frame, output = work.pages, work.frame, work.output
    out: list[Done] = []
    docs = pages.kb.documents_for(keys)
    for n in range(0, len(keys), BATCH):
        batch = keys[n : n + BATCH]
        pages.sidebars = {s.key: s for s in pages.kb.sidebars(batch)}
        for key in batch:
            pages.assets.clear()
            for path, page in _pages_of(pages, docs[key]):
                html = render(page, frame, Linker(relative_root(path), True), path=path)
                digest, written = output.write(path, html.encode())
                out.append((path, digest, written, sorted(pages.assets)))
    return out


def _other_files(work: Work) -> list[Done]:
    """search-index.json, graph.json (node hrefs relative to graph/index.html), each also
    as a script for pages opened from disk, and the list pages."""
    from studykb.runtime.memory import paused_gc

    kb, output = work.pages.kb, work.output
    out: list[Done] = []
    with paused_gc():  # hundreds of thousands of small lists that all stay alive
        index = _json(search_index.build(kb, Linker("", static=True), work.texts))
        out.append(("search-index.json", *output.write("search-index.json", index), []))
        out.append(_as_script(output, "search-index.js", "StudykbSearchIndex", index))
        del index
        graph = _json(graph_data.whole(kb, Linker("../", static=True)))
        out.append(("graph.json", *output.write("graph.json", graph), []))
        out.append(_as_script(output, "graph-data.js", "StudykbGraphData", graph))
    for path, page in _index_pages(work.pages):
        html = render(page, work.frame, Linker(relative_root(path), True), path=path)
        out.append((path, *output.write(path, html.encode()), []))
    return out


def _pages_of(pages: Pages, doc: Document) -> Iterator[tuple[str, Page]]:
    path = page_file(doc.key)
    page = pages.document(doc, Linker(relative_root(path), static=True))
    if doc.type != "topic":  # plan pages are made for topics only
        page.context["plan_url"] = None
    yield path, page
    if doc.type == "topic":
        plan_path = plan_file(doc.key)
        yield plan_path, _static_plan(pages.plan(doc, Linker(relative_root(plan_path), True)))


def _static_plan(page: Page) -> Page:
    """A plan page without the links to the other variant (a static site has one)."""
    page.context.update(show_all_url=None, hide_known_url=None)
    return page


def _static_files(output: Output) -> None:
    for path in sorted(STATIC.rglob("*")):
        rel = path.relative_to(STATIC).as_posix()
        if path.is_file() and not rel.startswith("dev/"):
            output.put("static/" + rel, path.read_bytes())


def _vault_files(kb: Session, assets: set[str], output: Output) -> None:
    from studykb.web.body import inside

    for path in sorted(assets):
        if inside(kb.root, path):
            output.put("files/" + path, (kb.root / path).read_bytes())


def _sitemap(base_url: str, files: dict[str, str]) -> bytes:
    base = base_url.rstrip("/") + "/"
    pages = [p for p in files if p.endswith(".html")]
    entries = "".join(
        f"<url><loc>{xml_escape(base + href(_pretty(p)))}</loc></url>\n" for p in sorted(pages)
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        f"{entries}</urlset>\n"
    ).encode()


def _pretty(path: str) -> str:
    return path[: -len("index.html")] if path.endswith("index.html") else path


def _as_script(output: Any, path: str, name: str, data: bytes) -> Done:
    """The JSON again as a script setting a global: a page opened from disk (file://)
    may not fetch a file beside it, but may load it with <script> (search and the graph
    use it there)."""
    return (path, *output.write(path, b"self." + name.encode() + b" = " + data + b";\n"), [])


def _json(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return -1


def _read_manifest(folder: Path) -> tuple[dict[str, str], str]:
    """(path -> digest, state) of the last build in ``folder``."""
    try:
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}, ""
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict) or data.get("version") != MANIFEST_VERSION:
        return {}, ""
    state = data.get("state")
    return {
        p: d
        for p, d in files.items()
        if isinstance(p, str) and isinstance(d, str) and _safe_path(p)
    }, state if isinstance(state, str) else ""


def made_from(kb: Session, base_url: str | None) -> str:
    """A digest of everything a site is made from: the vault's state, the templates and
    static files, and the options. Equal digests make equal sites."""
    digest = hashlib.blake2b(kb.fingerprint().encode(), digest_size=16)
    digest.update(f"{MANIFEST_VERSION}\0{base_url or ''}\0{kb.root.name}".encode())
    for path in sorted(
        (*TEMPLATES.rglob("*"), *STATIC.rglob("*"), *Path(__file__).parent.glob("*.py"))
    ):
        if path.is_file():
            digest.update(path.name.encode() + path.read_bytes())
    return digest.hexdigest()


def _unchanged(output: Output) -> bool:
    """Whether the last build was made from the same state and all its files are there."""
    return (
        bool(output.state)
        and output.state == output.old_state
        and all((output.folder / path).is_file() for path in output.old)
    )


def _safe_path(path: str) -> bool:
    """A manifest entry that names a file inside the output folder (never ``..``)."""
    parts = path.split("/")
    return bool(path) and not path.startswith("/") and all(p not in ("", ".", "..") for p in parts)


__all__ = ["INDEXES", "Built", "build_site", "check_output"]
