"""``studykb site -o public/``: the served pages as static files, for any web host.

Every link is relative, so the folder works under any address (GitHub Pages' project
sites included); ``--base-url`` adds canonical links and a ``sitemap.xml``. Search runs
in the browser over ``search-index.json``, the graph reads ``graph.json``; neither the
write token nor the mark buttons are in a static site.

A second run rewrites only what changed: ``.studykb-site.json`` in the output folder
lists every file the site wrote with a digest of its content, and for every document's
page the digest of what it was made from (:mod:`studykb.web.site_inputs`; a code page's:
:mod:`studykb.web.site_code`): a page whose
inputs have the recorded digest (and whose file is still there, the same size) is not
made again; a file whose new content has the same digest is left alone, and files of an
earlier build that are no longer part of the site are removed, but only when their
content still has the digest the manifest gives (a file the site did not write, or one
changed since, is left alone). Nothing else in the folder is touched.

After an edit that leaves what every page shares alone, the inputs of only the pages
the edit can change are computed (:mod:`studykb.web.site_changes`, from what the
manifest records); the list pages are kept and the search index is the last one with
the edited documents' parts made again.

Every path the site writes or removes lies inside the real output folder: a symbolic
link anywhere inside it is refused with a message before anything is written (a
committed ``public/link -> ../notes`` must never make the site write or delete there).
"""

from __future__ import annotations

import hashlib
import random
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from xml.sax.saxutils import escape as xml_escape

from studykb.errors import UsageError
from studykb.runtime import pools
from studykb.runtime.memory import paused_gc
from studykb.web import site_changes, site_code, site_inputs
from studykb.web.body import inside
from studykb.web.links import INDEXES, Linker, href, page_file, plan_file, relative_root
from studykb.web.pages import Page, Pages
from studykb.web.site_beside import other_files, recorded
from studykb.web.site_output import MANIFEST_VERSION, Output, refuse_links
from studykb.web.templating import STATIC, TEMPLATES, Frame, render, vault_title

if TYPE_CHECKING:
    from studykb.api import Session
    from studykb.model import Document
    from studykb.runtime.pools import Beside

Progress = Callable[[int, int], None]


@dataclass
class Built:
    """What one build did."""

    pages: int = 0
    files: int = 0
    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    seconds: float = 0.0


def build_site(
    kb: Session, out: Path, *, base_url: str | None = None, progress: Progress | None = None
) -> Built:
    """Write the whole site to ``out``; only changed files are written."""
    started = time.perf_counter()
    out = check_output(kb.root, out)
    refuse_links(out)
    # what the site is made from stays alive to the end: read without the collector,
    # then frozen (no later collection walks it: 0.4 s of CPU after an edit at 10k)
    with paused_gc(freeze=True):
        output = Output(out)
        code = code_digest(kb, base_url)
        links_to_code, clones = site_code.repo_states(kb)
        output.state = made_from(kb, code + links_to_code + clones)
        if _unchanged(output):  # nothing the site is made from changed: nothing to write
            output.keep_all()
            output.finish()
            return Built(
                pages=sum(p.endswith(".html") for p in output.new),
                files=len(output.new),
                seconds=time.perf_counter() - started,
            )
        docs = sorted(d.key for d in kb.documents().values() if d.type != "unit")
        frame = Frame(vault_title(kb.config.title, kb.root.name), "static", canonical_base=base_url)
        work = Work(Pages(kb), frame, output, {}, code=code + links_to_code)
        others = _beside_from_scratch(work)
        work.files = output.sources = kb.file_hashes()
        work.common = output.common = site_inputs.shared(kb, code + links_to_code)
        changed = site_changes.changed_files(output.old_sources, work.files)
        if site_changes.same_shared(output, work.common):
            # the list pages kept, the search index updated for the bodies that changed:
            # made beside this process from now on, while it ranks and makes the pages
            work.keep_index_pages = True
            work.bodies = {d.key for d in kb.documents().values() if d.path in changed}
            others = pools.beside(other_files, work)
        # only the documents whose related lists may have changed are ranked again
        work.rank, work.lists = kb.lists_to_rank(f"{output.old_state}:{work.common}")
        make = site_changes.to_make(kb, output, docs, changed, work.common, work.rank, work.lists)
        lists: dict[str, str] = {}
        if make is not None:  # the others' pages kept as recorded
            lists.update(_keep_pages(work, [k for k in docs if k not in make]))
    built = Built()
    if make is None:  # every page's inputs are read (and the pages of those changed made)
        others = _load(work, docs, others)
        done: Iterable[PageDone] = _site_pages(work, docs, progress)
    else:  # the few pages an edit can change
        if others is None:  # (started above: pages are kept only while what they share is)
            others = pools.beside(other_files, work)
        done = _render_chunk(work, sorted(make))
    paths: dict[str, list[str]] = {}
    for path, digest, written, assets, inputs, key, listed in done:
        _record(work, path, digest, written, assets, inputs)
        if inputs and key:
            lists[key] = listed
            paths.setdefault(key, []).append(path)
    built.pages = sum(p.endswith(".html") for p in output.new)  # made and kept
    made = kb.documents_for(paths)
    for key, pages_of in paths.items():
        output.docs[key] = (sorted(pages_of), site_changes.depends_on(work.pages, made[key]))
    # what needs none of the other process's files is done before waiting for them
    # (that process is the longer after an edit: its search index and list pages)
    for path, digest, written, inputs in site_code.code_pages(
        work.pages, work.frame, output, work.files, work.common
    ):
        output.record(path, digest, written)
        output.inputs[path] = (inputs, [])
        built.pages += 1
    kb.keep_lists(f"{output.state}:{work.common}", lists)
    _static_files(output)
    for path, digest, written, assets, inputs in recorded(others.result(), work.common):
        _record(work, path, digest, written, assets, inputs)
        built.pages += path.endswith(".html")
    _vault_files(kb, work.pages.assets, output)
    if base_url:
        output.put("sitemap.xml", _sitemap(base_url, output.new))
    built.removed = output.finish()
    built.written, built.files = output.written, len(output.new)
    built.seconds = time.perf_counter() - started
    return built


def _record(
    work: Work, path: str, digest: str, written: bool, assets: list[str], inputs: str
) -> None:
    """A file made or kept: recorded in the output, with its inputs when it has any."""
    work.output.record(path, digest, written)
    if inputs:
        work.output.inputs[path] = (inputs, assets)
    work.pages.assets.update(assets)


def _beside_from_scratch(work: Work) -> Beside | None:
    """The process making what needs no ranker (:mod:`studykb.web.site_beside`),
    started at once when no site is recorded in the output folder (none of it can be
    kept) and no other thread runs here (the state's indexes may still be built in one
    after a first build: a lock it held would stay locked in the child); else None."""
    if work.output.old_common or not pools.beside_helps():
        return None
    return _start_beside(work)


def _start_beside(work: Work) -> Beside:
    work.pages.knowledge()
    work.texts = work.pages.kb.texts()  # for the search index, read before it forks
    return pools.beside(other_files, work)


def _load(work: Work, docs: list[str], others: Beside | None) -> Beside:
    """Load what the workers inherit, once, with the collector off and then frozen (a
    worker's collections never walk it, nor copy its pages by touching it); the search
    index, the graph and the list pages need no ranker: they are made in a process of
    their own (returned; ``others`` when it is started already) while this one loads it,
    started first: it needs none of the links read here (a core would wait meanwhile)."""
    pages, kb = work.pages, work.pages.kb
    with paused_gc(freeze=True):
        pages.knowledge()
        if others is None:
            others = _start_beside(work)
        pages.preload_links()
        pages.preload_contexts()
        if docs:  # the ranker and its caches
            kb.sidebar(kb.documents()[docs[0]])
    return others


def _keep_pages(work: Work, keys: list[str]) -> dict[str, str]:
    """Record the pages of ``keys`` as the last build made them (their inputs are
    unchanged: :mod:`studykb.web.site_changes`); the digests of their related lists."""
    output, lists = work.output, {}
    for key in keys:
        pages, deps = output.old_docs[key]
        for path in pages:
            inputs, assets, _size = output.old_inputs[path]
            output.record(path, output.old[path], False)
            output.inputs[path] = (inputs, assets)
            work.pages.assets.update(assets)
        output.docs[key] = (pages, deps)
        lists[key] = work.lists[key]
    return lists


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


@dataclass
class Work:
    """What the workers that write the pages share (inherited, never pickled)."""

    pages: Pages
    frame: Frame
    output: Output
    texts: dict[str, tuple[str, list[str]]]
    """The plain text of every file (the search index's), read before the workers start."""
    code: str = ""
    """The digest of the site's code and options (:func:`code_digest`, with the code
    links' state): what every page is made from besides the vault."""
    files: dict[str, str] = field(default_factory=dict)
    """Path -> content digest of every file."""
    common: str = ""
    """What every page is made from (:func:`studykb.web.site_inputs.shared`)."""
    rank: set[str] | None = None
    """The documents whose related lists are made again (None: every one)."""
    lists: dict[str, str] = field(default_factory=dict)
    """Document -> the digest of its related list in the last site (of those not ranked)."""
    bodies: set[str] = field(default_factory=set)
    """The documents whose files changed since the last site (when it is kept from)."""
    keep_index_pages: bool = False
    """Whether the list pages made from an unchanged :attr:`common` are kept as they are
    (the progress and status pages, :data:`studykb.web.site_beside.MADE_EVERY_TIME`, have
    their contexts made every time, and are kept when those are the same)."""


#: A document's page: (path, digest, written, vault files shown, digest of its inputs,
#: the document, the digest of its sidebar).
PageDone = tuple[str, str, bool, list[str], str, str, str]
#: Sidebars asked of the ranker at once: fewer than make it start workers of its own
#: (a worker cannot), a bounded number held at a time, and few calls (each makes the plan
#: model "Before this" is read from again: about 45 ms at 10k documents).
BATCH = 1000


def _site_pages(work: Work, keys: list[str], progress: Progress | None) -> Iterator[PageDone]:
    """Every document's page (and a topic's plan page), written by forked workers that
    inherit the loaded vault: (path, digest, written, vault files shown) of each."""
    workers = max(1, min(pools.cores(), len(keys)))
    # the pool hands out up to four tasks a worker one at a time (more are grouped)
    chunks = chunked(keys, workers, 4 * workers)
    done = 0
    for part in pools.map_shared(_render_chunk, work, chunks, workers):
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


def _render_chunk(work: Work, keys: list[str]) -> list[PageDone]:
    """The pages of ``keys``; one made from what it was made from last time is kept."""
    pages, frame, output = work.pages, work.frame, work.output
    out: list[PageDone] = []
    docs = pages.kb.documents_for(keys)
    for n in range(0, len(keys), BATCH):
        batch = keys[n : n + BATCH]
        rank = [k for k in batch if work.rank is None or k in work.rank or k not in work.lists]
        pages.sidebars = {s.key: s for s in pages.kb.sidebars(rank)} if rank else {}
        ranked = set(rank)
        todo: list[tuple[Document, str, str, str]] = []
        for key in batch:
            doc = docs[key]
            listed = (
                site_inputs.sidebar_digest(pages.sidebars.get(key))
                if key in ranked
                else work.lists[key]  # the same scores as then: the same list
            )
            inputs = site_inputs.page_inputs(pages, doc, listed, work.files, work.common)
            for path in _paths_of(doc):
                made_of = (
                    inputs if path.startswith("d/") else site_inputs.plan_inputs(doc, work.common)
                )
                kept = output.kept(path, made_of)
                if kept is None:
                    todo.append((doc, path, made_of, listed))
                elif kept:
                    out.append((path, kept[0], False, kept[1], made_of, key, listed))
        # a list not ranked, shown on a page made again: ranked now, at once
        again = [d.key for d, path, _i, _l in todo if d.key not in ranked and path.startswith("d/")]
        if again:
            pages.sidebars.update((s.key, s) for s in pages.kb.sidebars(again))
        for doc, path, made_of, listed in todo:
            pages.assets.clear()
            page = _page_of(pages, doc, path)
            html = render(page, frame, Linker(relative_root(path), True), path=path)
            digest, written = output.write(path, html.encode())
            out.append((path, digest, written, sorted(pages.assets), made_of, doc.key, listed))
    return out


def _paths_of(doc: Document) -> list[str]:
    """The files of ``doc``'s pages (:func:`_page_of` makes each)."""
    return [page_file(doc.key), *([plan_file(doc.key)] if doc.type == "topic" else [])]


def _page_of(pages: Pages, doc: Document, path: str) -> Page:
    """The page of ``doc`` at ``path``: its document page or (a topic's) plan page."""
    link = Linker(relative_root(path), static=True)
    if path != page_file(doc.key):
        return _static_plan(pages.plan(doc, link))
    page = pages.document(doc, link)
    if doc.type != "topic":  # plan pages are made for topics only
        page.context["plan_url"] = None
    return page


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


def code_digest(kb: Session, base_url: str | None) -> str:
    """A digest of what every site of this vault is made from besides the vault's
    content: the templates, static files and code of the site, and the options."""
    digest = hashlib.blake2b(f"{MANIFEST_VERSION}\0{base_url or ''}".encode(), digest_size=16)
    digest.update(f"\0{kb.root.name}".encode())
    for path in sorted(
        (*TEMPLATES.rglob("*"), *STATIC.rglob("*"), *Path(__file__).parent.glob("*.py"))
    ):
        if path.is_file():
            digest.update(path.name.encode() + path.read_bytes())
    return digest.hexdigest()


def made_from(kb: Session, code: str) -> str:
    """A digest of everything a site is made from: the vault's state and
    :func:`code_digest`. Equal digests make equal sites."""
    digest = hashlib.blake2b(kb.fingerprint().encode(), digest_size=16)
    digest.update(code.encode())
    return digest.hexdigest()


def _unchanged(output: Output) -> bool:
    """Whether the last build was made from the same state and all its files are there."""
    return (
        bool(output.state)
        and output.state == output.old_state
        and all((output.folder / path).is_file() for path in output.old)
    )


__all__ = ["INDEXES", "Built", "build_site", "check_output"]
