"""``studykb serve``: the pages and their JSON, answered from one open knowledge base.

Only this machine may ask, and nothing but the pages themselves may write:

* requests whose ``Host`` is not ``localhost``/``127.0.0.1``/``[::1]`` are refused (a
  web page elsewhere cannot reach the server through DNS rebinding);
* ``POST /api/mark`` needs the token made at start (``X-Studykb-Token``, which only
  the server's own pages carry), a JSON body, and no foreign ``Origin``;
* every response carries a strict Content-Security-Policy (no inline script, nothing
  from elsewhere), ``nosniff`` and ``same-origin`` referrers;
* a page or file is only ever one the vault lists: URLs name documents by their page
  path, and vault files must resolve inside the vault.

The knowledge base is used by one request at a time, under the lock the live source
(the watch's refresh, :mod:`studykb.web.live`) holds while it refreshes.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import re
import secrets
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from studykb.api import IMAGE_EXTS
from studykb.errors import StudyError
from studykb.web import code, graph_data
from studykb.web.body import inside
from studykb.web.contexts import hit_context
from studykb.web.guard import guard, local_host
from studykb.web.links import FILES_DIR, Linker, page_file, plan_file
from studykb.web.live import Hub, Source
from studykb.web.pages import SEARCH_LIMIT, Page, Pages
from studykb.web.templating import STATIC, Frame, render, vault_title

if TYPE_CHECKING:
    from studykb.api import Session

STATUSES = ("todo", "reading", "done")
MAX_MARK_BODY = 4096


@dataclass
class State:
    """The one knowledge base the app answers from, and what goes with it."""

    kb: Session
    token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    lock: threading.Lock = field(default_factory=threading.Lock)
    hub: Hub = field(default_factory=Hub)
    refresh: bool = False
    """Refresh the vault before each page (no live source keeps it fresh)."""
    problems: int | None = None

    def __post_init__(self) -> None:
        self.pages = Pages(self.kb)
        self.frame = Frame(
            vault_title(self.kb.config.title, self.kb.root.name), "serve", self.token
        )
        self.link = Linker("/")
        self._paths: tuple[str, dict[str, str], dict[str, str]] | None = None
        self._graph: tuple[str, dict[str, Any]] | None = None
        self._graph_gzip: bytes | None = None
        self.kept: dict[tuple[str, str, str], tuple[int, str]] = {}
        """Rendered list pages of the current vault state."""

    def warm(self) -> None:
        """Load what every document page needs (the related ranker, the plans' graph), so
        the first page opened is as quick as the next."""
        with self.lock:
            docs = self.kb.documents()
            first = next((d for d in docs.values() if d.type != "unit"), None)
            if first is not None:
                self.pages.document(first, self.link)
            self.pages.status(self.link)
            self.pages.topics(self.link)

    def fresh(self) -> None:
        if self.refresh:
            self.problems = self.kb.refresh().problems

    def paths(self) -> tuple[dict[str, str], dict[str, str]]:
        """(document page path -> key, plan page path -> key) of the vault's state."""
        fp = self.kb.fingerprint()
        if self._paths is None or self._paths[0] != fp:
            keys = list(self.kb.documents())
            docs = {page_file(k): k for k in keys if "#" not in k}
            self._paths = (fp, docs, {plan_file(k): k for k in keys})
        return self._paths[1], self._paths[2]

    def graph(self) -> dict[str, Any]:
        fp = self.kb.fingerprint()
        if self._graph is None or self._graph[0] != fp:
            self._graph = (fp, graph_data.whole(self.kb, self.link))
            self._graph_gzip = None
        return self._graph[1]

    def graph_gzip(self) -> bytes:
        """The whole graph as gzipped JSON, made once per vault state (10 MB of JSON at
        10k documents take a quarter of a second to compress)."""
        data = self.graph()
        if self._graph_gzip is None:
            self._graph_gzip = gzip.compress(_json(data), compresslevel=5)
        return self._graph_gzip


def create_app(
    kb: Session,
    *,
    source: Source | None = None,
    refresh: bool = False,
    token: str | None = None,
    lock: threading.Lock | None = None,
    hub: Hub | None = None,
) -> Starlette:
    """The web app over ``kb``. ``source`` feeds live reload (run in a thread while the
    app runs; ``hub`` hands its batches to the open pages); ``refresh``: bring the vault
    up to date before each page instead."""
    state = State(
        kb,
        token=token or secrets.token_urlsafe(32),
        lock=lock or threading.Lock(),
        hub=hub or Hub(),
        refresh=refresh,
    )
    app = Starlette(
        routes=_routes(state),
        lifespan=_lifespan(state, source),
        middleware=[Middleware(GZipMiddleware, minimum_size=2048)],
    )
    app.state.studykb = state
    app.add_exception_handler(404, _not_found(state))
    app.add_exception_handler(405, _not_found(state))
    return guard(app)  # type: ignore[return-value]


def _lifespan(
    state: State, source: Source | None
) -> Callable[[Starlette], contextlib.AbstractAsyncContextManager[None]]:
    """Warm the state when the server starts; feed live reload from ``source`` (in a
    thread) while it runs."""

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        stop = threading.Event()
        state.warm()
        if source is not None:
            threading.Thread(
                target=source, args=(state.hub.publish, stop), name="studykb-live", daemon=True
            ).start()
        try:
            yield
        finally:
            stop.set()
            state.hub.close()

    return lifespan


def _routes(state: State) -> list[BaseRoute]:
    return [
        Route("/", _page(state, lambda s, r: s.pages.status(s.link, s.problems), keep=True)),
        Route("/topics/", _page(state, lambda s, r: s.pages.topics(s.link), keep=True)),
        Route("/lists/", _page(state, lambda s, r: s.pages.lists(s.link), keep=True)),
        Route("/courses/", _page(state, lambda s, r: s.pages.courses(s.link), keep=True)),
        Route("/progress/", _page(state, lambda s, r: s.pages.progress(s.link))),
        Route("/graph/", _page(state, _graph_page)),
        Route("/search/", _page(state, _search_page)),
        _any_path(Route("/d/{path:path}", _page(state, _document_page))),
        _any_path(Route("/plan/{path:path}", _page(state, _plan_page))),
        _any_path(Route("/code/{path:path}", _page(state, _code_page))),
        Route("/files/{path:path}", _endpoint(state, _vault_file)),
        Route("/api/search", _endpoint(state, _api_search)),
        Route("/api/graph", _endpoint(state, _api_graph)),
        Route("/api/mark", _mark(state), methods=["POST"]),
        Route("/api/events", _events(state)),
        Mount("/static", app=StaticFiles(directory=str(STATIC)), name="static"),
    ]


def _any_path(route: Route) -> Route:
    """``route`` matching any file name: Starlette's ``path`` pattern (``.*``) stops at a
    newline, which a file name may hold (its page would be "not found")."""
    route.path_regex = re.compile(route.path_regex.pattern, re.DOTALL)
    return route


# -- pages -----------------------------------------------------------------------------------
PageMaker = Callable[[State, Request], Page]


def _page(state: State, make: PageMaker, keep: bool = False) -> Callable[[Request], Response]:
    """A page's endpoint; ``keep``: the HTML is kept while the vault state stays the same
    (list pages, whose every row costs template time: 1,500 topics take ~80 ms)."""

    def endpoint(request: Request) -> Response:
        with state.lock:
            state.fresh()
            entry = (state.kb.fingerprint(), str(request.url.path), str(request.url.query))
            kept = state.kept.get(entry) if keep else None
            if kept is None:
                kept = _rendered(state, make, request)
                if keep:
                    state.kept = {
                        entry: kept,
                        **{k: v for k, v in state.kept.items() if k[0] == entry[0]},
                    }
        return HTMLResponse(kept[1], status_code=kept[0], headers={"cache-control": "no-store"})

    return endpoint


def _rendered(state: State, make: PageMaker, request: Request) -> tuple[int, str]:
    try:
        page = make(state, request)
    except StudyError as exc:
        page = state.pages.error(404 if exc.exit_code == 1 else 400, exc.message)
    return page.status, render(page, state.frame, state.link, q=request.query_params.get("q", ""))


def _document_page(state: State, request: Request) -> Page:
    path = request.path_params["path"]
    key = state.paths()[0].get("d/" + path)
    doc = state.kb.document(key) if key else None
    if doc is None:
        return _missing(state, path)
    return state.pages.document(doc, state.link)


def _plan_page(state: State, request: Request) -> Page:
    path = request.path_params["path"]
    key = state.paths()[1].get("plan/" + path)
    doc = state.kb.document(key) if key else None
    if doc is None:
        return _missing(state, path)
    return state.pages.plan(doc, state.link, request.query_params.get("all") == "1")


def _code_page(state: State, request: Request) -> Page:
    params = request.query_params
    page = request.path_params["path"]
    return code.served(state.pages, state.link, page, params.get("lines"), params.get("symbol"))


def _missing(state: State, path: str) -> Page:
    name = path.rsplit("/", 1)[-1].removesuffix(".html").split("@", 1)[0]
    return state.pages.error(404, f"No document has the page {path!r}.", name, state.link)


def _search_page(state: State, request: Request) -> Page:
    query, filters, _limit = _search_params(request)
    try:
        return state.pages.search(state.link, query, filters)
    except StudyError as exc:
        page = state.pages.search(state.link, "", filters)
        page.context.update(query=query, hits=[], also_searched=[], error=exc.message)
        return page


def _graph_page(state: State, request: Request) -> Page:
    params = request.query_params
    mode = params.get("mode", "all")
    return Page(
        "graph.html",
        {
            "focus": params.get("focus") or None,
            "graph_mode": mode if mode in ("all", "around", "plan") else "all",
            "steps": _int(params.get("steps"), 2, 1, graph_data.MAX_STEPS),
        },
    )


def _not_found(state: State) -> Callable[[Request, Exception], Response]:
    def handler(request: Request, exc: Exception) -> Response:
        with state.lock:
            page = state.pages.error(404, f"Nothing here: {request.url.path}")
            html = render(page, state.frame, state.link)
        return HTMLResponse(html, status_code=404)

    return handler


# -- JSON and files ----------------------------------------------------------------------------
Endpoint = Callable[[State, Request], Response]


def _endpoint(state: State, answer: Endpoint) -> Callable[[Request], Response]:
    def endpoint(request: Request) -> Response:
        with state.lock:
            try:
                return answer(state, request)
            except StudyError as exc:
                status = 400 if exc.exit_code == 2 else 404 if exc.exit_code == 1 else 500
                return _error(status, exc.message)
            except OSError as exc:
                return _error(500, f"cannot use {exc.filename or 'a file'}: {exc.strerror or exc}")

    return endpoint


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _search_params(request: Request) -> tuple[str, dict[str, str], int]:
    params = request.query_params
    filters = {name: params.get(name, "").strip() for name in ("type", "tag", "status", "level")}
    return params.get("q", "").strip(), filters, _int(params.get("limit"), SEARCH_LIMIT, 1, 100)


def _api_search(state: State, request: Request) -> Response:
    query, filters, limit = _search_params(request)
    if not query and not any(filters.values()):
        return JSONResponse({"query": "", "hits": [], "also_searched": []})
    hits, also = state.pages.find(query, filters, limit)
    return JSONResponse(
        {"query": query, "hits": [hit_context(h, state.link) for h in hits], "also_searched": also}
    )


def _api_graph(state: State, request: Request) -> Response:
    params = request.query_params
    data = state.graph()
    if not params and "gzip" in request.headers.get("accept-encoding", ""):
        return Response(
            state.graph_gzip(),
            media_type="application/json",
            headers={
                "cache-control": "no-store",
                "content-encoding": "gzip",
                "vary": "Accept-Encoding",
            },
        )
    focus = params.get("around") or params.get("plan")
    if focus:
        doc = state.kb.document(focus) or state.kb.find(focus)
        if params.get("plan"):
            data = graph_data.prerequisites(data, state.kb, doc)
        else:
            data = graph_data.around(data, doc.key, _int(params.get("steps"), 2, 1, 6))
    data = _filtered(data, params.get("type", ""), params.get("kind", ""))
    return Response(
        _json(data), media_type="application/json", headers={"cache-control": "no-store"}
    )


def _json(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()


def _filtered(data: dict[str, Any], types: str, kinds: str) -> dict[str, Any]:
    wanted = {t for t in types.split(",") if t}
    kinds_wanted = {k for k in kinds.split(",") if k}
    if not wanted and not kinds_wanted:
        return data
    nodes = [n for n in data["nodes"] if not wanted or n["type"] in wanted]
    keep = {n["id"] for n in nodes}
    edges = [
        e
        for e in data["edges"]
        if e["source"] in keep
        and e["target"] in keep
        and (not kinds_wanted or e["kind"] in kinds_wanted)
    ]
    return {"nodes": nodes, "edges": edges}


def _mark(state: State) -> Callable[[Request], Awaitable[Response]]:
    """``POST /api/mark``: the body is read here, the write runs in a worker thread."""
    answer = _endpoint(state, _api_mark)

    async def endpoint(request: Request) -> Response:
        refused = _write_refused(state, request)
        if refused is not None:
            return refused
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_MARK_BODY:
                return _error(413, "the request is too large")
        request.scope["studykb.body"] = body
        return await run_in_threadpool(answer, request)

    return endpoint


def _api_mark(state: State, request: Request) -> Response:
    data = _json_body(request)
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("key"), str)
        or data.get("status") not in STATUSES
    ):
        return _error(400, 'send {"key": "<document key>", "status": "todo|reading|done"}')
    doc = state.kb.document(data["key"])
    if doc is None:
        return _error(404, f"no document has the key {data['key']!r}")
    try:
        marked = state.kb.mark(doc, data["status"])
    except StudyError as exc:  # the note refused the write (read-only, changed, unsafe)
        return _error(400 if exc.exit_code == 2 else 409, exc.message)
    if marked:
        state.kb.sync_search(quiet=True)  # the watch sees no change left to index
    now = state.kb.document(doc.key)
    state.hub.publish([doc.key])
    return JSONResponse({"key": doc.key, "status": now.status if now else data["status"]})


def _write_refused(state: State, request: Request) -> Response | None:
    given = request.headers.get("x-studykb-token", "")
    if not secrets.compare_digest(given.encode(), state.token.encode()):
        return _error(403, "this write needs the token of the page the server gave out")
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        return _error(415, "send JSON (Content-Type: application/json)")
    origin = request.headers.get("origin")
    if origin and origin != "null" and not local_host(origin.split("://", 1)[-1]):
        return _error(403, f"writes from {origin!r} are refused")
    return None


def _json_body(request: Request) -> Any:
    body = request.scope.get("studykb.body", b"")
    try:
        return json.loads(body)
    except ValueError:
        return None


def _vault_file(state: State, request: Request) -> Response:
    path = request.path_params["path"]
    parts = path.split("/")
    if (
        any(p in ("", ".", "..") or p.startswith(".") for p in parts)
        or ("." + path.rsplit(".", 1)[-1].lower()) not in IMAGE_EXTS
        or not inside(state.kb.root, path)
    ):
        return PlainTextResponse("Not found.", status_code=404)
    headers = {"content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; sandbox"}
    return FileResponse(state.kb.root / path, headers=headers)


def _events(state: State) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        async def stream() -> AsyncIterator[str]:
            yield "retry: 1000\n: connected\n\n"
            async for keys in state.hub.batches():
                if await request.is_disconnected():
                    return
                if keys:
                    yield "data: " + json.dumps({"changed": keys}, ensure_ascii=False) + "\n\n"
                else:
                    yield ": ping\n\n"

        return StreamingResponse(
            stream(), media_type="text/event-stream", headers={"cache-control": "no-store"}
        )

    return endpoint


def _int(value: str | None, default: int, low: int, high: int) -> int:
    try:
        number = int(value) if value else default
    except ValueError:
        number = default
    return max(low, min(high, number))


__all__ = ["FILES_DIR", "State", "create_app"]
