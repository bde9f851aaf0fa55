"""What ``studykb site`` makes beside the pages, in a process of its own
(:func:`studykb.runtime.pools.beside`): ``search-index.json`` and ``graph.json`` (each
also as a script, for pages opened from disk) and the list pages. None of it needs the
ranker, nor any page's links.

From scratch (no site recorded in the output folder) the process starts as soon as the
vault's state is read, before this process works out what every page shares
(:func:`studykb.web.site_inputs.shared`) and loads the ranker: a core would wait
meanwhile. The list pages it makes are then recorded as made from :data:`SHARED`, which
:func:`recorded` turns into the digest this process found (the same digest the list
pages are recorded with when it is known before the fork).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from studykb.runtime.memory import paused_gc
from studykb.web import graph_data, search_index
from studykb.web.links import Linker, relative_root
from studykb.web.pages import Page, Pages
from studykb.web.templating import render

if TYPE_CHECKING:
    from studykb.web.site import Work

#: The progress page: made from the vault's git history, not only what pages share.
PROGRESS = "progress/index.html"
#: The list pages whose contexts are made every time: the progress page, and the status
#: page, whose "Recently finished" orders the documents done without a date by their
#: files' modification times (an edit moves them; what pages share does not name them).
#: Each is rendered again only when its context differs (:func:`context_digest`).
MADE_EVERY_TIME = frozenset({PROGRESS, "index.html"})
#: What a list page is recorded as made from when the process started before what every
#: page shares was known (:func:`recorded` puts the digest in its place).
SHARED = "shared:later"

#: A file beside the pages: (path, digest, written, vault files shown, digest of its
#: inputs, "" when it has none recorded).
Done = tuple[str, str, bool, list[str], str]


def index_pages(pages: Pages) -> Iterator[tuple[str, Callable[[], Page]]]:
    """(path, what makes the page) of the list pages."""
    index = Linker("../", static=True)  # the list pages sit one folder down
    yield "index.html", lambda: pages.status(Linker("./", static=True))
    yield "topics/index.html", lambda: pages.topics(index)
    yield "lists/index.html", lambda: pages.lists(index)
    yield "courses/index.html", lambda: pages.courses(index)
    yield PROGRESS, lambda: pages.progress(index)
    yield "search/index.html", lambda: pages.search(index, "", {})
    yield "graph/index.html", lambda: Page("graph.html", {})


def recorded(done: list[Done], common: str) -> list[Done]:
    """``done`` with :data:`SHARED` replaced by ``common``, the digest of what every
    page shares."""
    return [(*d[:4], common) if d[4] == SHARED else d for d in done]


def other_files(work: Work) -> list[Done]:
    """search-index.json, graph.json (node hrefs relative to graph/index.html), each also
    as a script for pages opened from disk, and the list pages."""
    work.pages.kb.reconnect()  # forked while this process goes on with the state
    output = work.output
    out: list[Done] = []
    with paused_gc():  # hundreds of thousands of small lists that all stay alive
        index = _search_index(work)
        out.append(("search-index.json", *output.write("search-index.json", index), [], ""))
        out.append(_as_script(output, "search-index.js", "StudykbSearchIndex", index))
        del index
        graph = _graph(work)
        out.append(("graph.json", *output.write("graph.json", graph), [], ""))
        out.append(_as_script(output, "graph-data.js", "StudykbGraphData", graph))
    for path, make in index_pages(work.pages):
        page = None
        if path in MADE_EVERY_TIME:  # kept when made from the same context as last time
            page = make()
            common = context_digest(work, path, page)
        else:  # SHARED: what every page shares, not known yet here
            common = work.common or SHARED
        kept = (
            output.kept(path, common)
            if common and (work.keep_index_pages or page is not None)
            else None
        )
        if kept is not None:  # made from the same as it was
            out.append((path, kept[0], False, kept[1], common))
            continue
        html = render(page or make(), work.frame, Linker(relative_root(path), True), path=path)
        out.append((path, *output.write(path, html.encode()), [], common))
    return out


def context_digest(work: Work, path: str, page: Page) -> str:
    """What a page of :data:`MADE_EVERY_TIME` is made from: the site's code and options
    (:attr:`Work.code`), its place and its context as plain data. Its context is made
    every time (it reads what no recorded digest names), but rendering it (the status
    page's template writes some 600 KB at 10k documents: about 0.15 s) only when the
    context differs from the last site's. "" (made every time) when the code is not
    known or the context is not plain data."""
    if not work.code:
        return ""
    try:
        data = json.dumps(
            [page.template, page.key, page.status, page.context],
            ensure_ascii=False,
            separators=(",", ":"),
        )
    except (TypeError, ValueError):
        return ""
    h = hashlib.blake2b(f"{work.code}\0{path}\0{work.frame!r}\0".encode(), digest_size=16)
    h.update(data.encode())
    return "page:" + h.hexdigest()


def _search_index(work: Work) -> bytes:
    """The search index: the last site's with the edited documents' parts made again
    when only their bodies changed (:func:`studykb.web.search_index.update`), else
    made whole."""
    kb, link = work.pages.kb, Linker("", static=True)
    if work.keep_index_pages:
        old = work.output.old_bytes("search-index.json")
        if old is not None:
            han = kb.remembered_terms()
            index = search_index.update(kb, link, old, work.bodies, kb.texts, han)
            if index is not None:
                han.save()  # the runs cut now, for the next edit (the search index's too)
                return index
    return search_index.dumps(search_index.build(kb, link, work.texts or None))


def _graph(work: Work) -> bytes:
    """graph.json (node hrefs relative to graph/index.html): the last site's with the
    edited documents' edges made again when only their bodies changed
    (:func:`studykb.web.graph_data.update`), else made whole."""
    kb = work.pages.kb
    if work.keep_index_pages:
        old = work.output.old_bytes("graph.json")
        if old is not None:
            docs = kb.documents()
            graph = graph_data.update(kb, old, {docs[k].path for k in work.bodies if k in docs})
            if graph is not None:
                return graph
    return graph_data.dumps(graph_data.whole(kb, Linker("../", static=True)))


def _as_script(output: Any, path: str, name: str, data: bytes) -> Done:
    """The JSON again as a script setting a global: a page opened from disk (file://)
    may not fetch a file beside it, but may load it with <script> (search and the graph
    use it there)."""
    data = b"self." + name.encode() + b" = " + data + b";\n"
    return (path, *output.write(path, data), [], "")
