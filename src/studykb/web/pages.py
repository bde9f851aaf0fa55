"""Every page's template and context, made from the library API (no web framework here).

``studykb serve`` and ``studykb site`` both ask a :class:`Pages` for a :class:`Page`
(which template, with what) and render it with :mod:`studykb.web.templating`. The
contexts follow the contract in ``docs/design/web-frontend.md``: plain dicts of text,
numbers and hrefs; the only HTML is the body, which :mod:`studykb.parse.render` made safe.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

from studykb.api import Link
from studykb.errors import StudyError
from studykb.model import Document
from studykb.web.contexts import hit_context, lists_context, plan_context, sidebar_context, unlocks
from studykb.web.links import Linker
from studykb.web.progress import progress_context

if TYPE_CHECKING:
    from studykb.api import Session
    from studykb.related.sidebar import Sidebar
    from studykb.search.query import Hit
    from studykb.study.plans import Knowledge
    from studykb.study.tracker import Tracker

T = TypeVar("T")
#: Which template shows a document of each type.
TEMPLATES = MappingProxyType({"topic": "topic.html", "list": "list.html", "course": "course.html"})
#: Characters of a backlink's context line shown.
CONTEXT_CHARS = 240
#: Hits per search: the command line's default (each hit's snippet costs a few ms).
SEARCH_LIMIT = 10
READY_LIMIT = 10
_WORD_END = re.compile(r"[A-Za-z0-9_]{2,}$")
_WORD_PARTS = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Page:
    """A template and its context (besides what every page gets)."""

    template: str
    context: dict[str, Any]
    key: str | None = None
    """The vault key of the document shown (live reload)."""
    status: int = 200


@dataclass(frozen=True)
class Shown:
    """A document's references both ways."""

    outgoing: list[Link]
    backlinks: list[Link]


@dataclass
class Pages:
    """Builds pages from ``kb``; ``assets`` collects the vault files pages show."""

    kb: Session
    assets: set[str] = field(default_factory=set)
    lines: dict[str, list[str]] = field(default_factory=dict)
    """Lines of the files backlinks come from (kept while one build runs)."""
    sidebars: dict[str, Sidebar] = field(default_factory=dict)
    """Sidebars computed beforehand (a whole site at once), by key."""
    links_from: dict[str, list[Link]] | None = None
    """Every reference by source key, read at once (a whole site); None: ask per page."""
    links_to: dict[str, list[Link]] = field(default_factory=dict)
    contexts: dict[tuple[str, int], str] = field(default_factory=dict)
    """The context line of every backlink, by (path, line), read at once (a whole site)."""
    _memo: dict[str, Any] = field(default_factory=dict)

    def preload_links(self) -> None:
        """Read every reference once (a whole site), instead of two queries a page."""
        self.knowledge()  # the state what is read here belongs to
        self.links_from, self.links_to = {}, {}
        for found in self.kb.all_links():
            self.links_from.setdefault(found.ref.source, []).append(found)
            if found.target:
                self.links_to.setdefault(found.target, []).append(found)
        for links in self.links_to.values():
            links.sort(key=lambda f: (f.ref.path, f.ref.line))

    def preload_contexts(self) -> None:
        """Read the context line of every backlink (a whole site): each file backlinks
        come from is read once here, not once a page it links to."""
        if self.links_from is None:
            self.preload_links()
        wanted: dict[str, set[int]] = {}
        for links in self.links_to.values():
            for found in links:
                wanted.setdefault(found.ref.path, set()).add(found.ref.line)
        self.contexts = {}
        for path, numbers in wanted.items():
            lines = _file_lines(self.kb, path)
            for line in numbers:
                self.contexts[path, line] = _context(lines, line)

    def outgoing(self, doc: Document) -> list[Link]:
        if self.links_from is None:
            return self.kb.outgoing(doc)
        return self.links_from.get(doc.key, [])

    def backlinks_of(self, doc: Document) -> list[Link]:
        if self.links_from is None:
            return self.kb.backlinks(doc)
        return self.links_to.get(doc.key, [])

    # -- shared state of one vault state ------------------------------------------------------
    def knowledge(self) -> Knowledge:
        fp = self.kb.fingerprint()
        if self._memo.get("fp") != fp:
            self._memo = {"fp": fp, "knowledge": self.kb.knowledge()}
            self.lines.clear()
            self.contexts.clear()
        knowledge: Knowledge = self._memo["knowledge"]
        return knowledge

    def memo(self, name: str, make: Callable[[], T]) -> T:
        """``make()``, kept while the vault's state stays the same."""
        self.knowledge()  # starts a new memo when the state changed
        if name not in self._memo:
            self._memo[name] = make()
        value: T = self._memo[name]
        return value

    def tracker(self) -> Tracker:
        return self.memo("tracker", self.kb.status)

    def item(self, doc: Document, link: Linker, note: str = "") -> dict[str, Any]:
        """A document in a list (the templates' "item")."""
        return {
            "key": doc.key,
            "id": doc.id,
            "title": doc.title,
            "url": link.doc(doc),
            "type": doc.type,
            "level": doc.level,
            "status": doc.status,
            "known": doc.key in self.knowledge().known,
            "kind": doc.kind,
            "minutes": doc.minutes,
            "note": note,
        }

    def items(self, keys: Iterable[str], link: Linker) -> list[dict[str, Any]]:
        keys = list(keys)
        docs = self.kb.documents_for(keys)
        return [self.item(docs[k], link) for k in keys if k in docs]

    # -- documents ----------------------------------------------------------------------------
    def document(self, doc: Document, link: Linker) -> Page:
        # deferred: loads markdown_it, mdit_py_plugins
        from studykb.web.body import render_body

        outgoing, backlinks = self.outgoing(doc), self.backlinks_of(doc)
        body = render_body(self.kb, doc, outgoing, link, self.assets)
        context: dict[str, Any] = {
            "doc": self._doc_info(doc, outgoing, link),
            "body_html": body,
            "sidebar": self._sidebar(doc, link),
            "backlinks": self._backlinks(backlinks, link),
            "plan_url": link.plan(doc.key),
            "graph_url": link.graph(doc.key),
        }
        extra = {"topic": self._topic, "list": self._list, "course": self._course}.get(doc.type)
        if extra is not None:
            context.update(extra(doc, Shown(outgoing, backlinks), link))
        return Page(TEMPLATES.get(doc.type, "document.html"), context, doc.key)

    def _doc_info(self, doc: Document, outgoing: list[Link], link: Linker) -> dict[str, Any]:
        meta = doc.meta
        return {
            "key": doc.key,
            "id": doc.id,
            "path": doc.path,
            "title": doc.title,
            "type": doc.type,
            "level": doc.level,
            "status": doc.status,
            "tags": self._tags(doc, link),
            "aliases": list(doc.aliases),
            "course": self._course_of(outgoing, link),
            "url": doc.url,
            "kind": doc.kind,
            "source": _text(meta.get("source")),
            "authors": _authors(meta.get("authors")),
            "date": doc.date,
            "minutes": doc.minutes,
        }

    def _tags(self, doc: Document, link: Linker) -> list[dict[str, str]]:
        return self.tag_links((*doc.covers, *doc.tags), link)

    def tag_links(self, tags: Iterable[str], link: Linker) -> list[dict[str, str]]:
        """Tags as {name, url}: a tag naming a topic goes to the topic's page and shows
        its title (a tag written as the topic's id, ``zhang-liang-bing-xing``, reads as
        张量并行), any other tag searches for it and shows as written."""
        topics = self.kb.topic_table()
        out = []
        for tag in dict.fromkeys(tags):
            key = topics.key(tag)
            topic = self.kb.document(key) if key else None
            if key and topic is not None:
                out.append({"name": topic.title or tag, "url": link.key(key)})
            else:
                out.append({"name": tag, "url": link.tag(tag)})
        return out

    def _course_of(self, outgoing: list[Link], link: Linker) -> dict[str, str] | None:
        for found in outgoing:
            if found.ref.kind == "course" and found.target:
                course = self.kb.document(found.target)
                if course is not None:
                    return {"title": course.title, "url": link.doc(course)}
        return None

    def _sidebar(self, doc: Document, link: Linker) -> dict[str, Any] | None:
        try:
            found = self.sidebars.get(doc.key) or self.kb.sidebar(doc)
        except (KeyError, IndexError):
            return None
        return sidebar_context(found, link)

    def _backlinks(self, backlinks: list[Link], link: Linker) -> list[dict[str, Any]]:
        docs = self.kb.documents_for(b.ref.source for b in backlinks)
        out = []
        for b in backlinks:
            source = docs.get(b.ref.source)
            if source is None:
                continue
            out.append(
                {
                    "title": source.title,
                    "url": link.doc(source),
                    "type": source.type,
                    "kind": b.ref.kind,
                    "line": b.ref.line,
                    "context": self.context_line(b.ref.path, b.ref.line),
                }
            )
        return out

    def context_line(self, path: str, line: int) -> str:
        """The text of line ``line`` of the file at ``path``, trimmed (a backlink's context)."""
        known = self.contexts.get((path, line))
        if known is not None:
            return known
        lines = self.lines.get(path)
        if lines is None:
            lines = self.lines[path] = _file_lines(self.kb, path)
        return _context(lines, line)

    # -- topics, lists, courses -----------------------------------------------------------------
    def _topic(self, doc: Document, shown: Shown, link: Linker) -> dict[str, Any]:
        kn = self.knowledge()
        teach = sorted((k for k in kn.covers.get(doc.key, ()) if k != doc.key), key=kn.reading_key)
        about = sorted((k for k in kn.tagged.get(doc.key, ()) if k != doc.key), key=kn.reading_key)
        return {"readings": self.items(teach, link), "tagged": self.items(about, link)}

    def _list(self, doc: Document, shown: Shown, link: Linker) -> dict[str, Any]:
        picked = [
            (f.target, f.ref.reason) for f in shown.outgoing if f.ref.kind == "item" and f.target
        ]
        docs = self.kb.documents_for(k for k, _r in picked)
        items = [
            self.item(docs[k], link, reason) for k, reason in dict(picked).items() if k in docs
        ]
        read = sum(bool(i["known"]) for i in items)
        return {"items": items, "progress": {"read": read, "total": len(items)}}

    def _course(self, doc: Document, shown: Shown, link: Linker) -> dict[str, Any]:
        keys = self._units_of(doc.key)
        found = sorted(self.kb.documents_for(keys).values(), key=lambda u: u.line)
        units = [self._unit(u, link) for u in found]
        notes = [
            self.kb.document(b.ref.source)
            for b in shown.backlinks
            if b.ref.kind == "course" and "#" not in b.ref.source
        ]
        progress = {
            "done": sum(u["status"] == "done" for u in units),
            "total": len(units),
            "reading": sum(u["status"] == "reading" for u in units),
        }
        return {
            "units": units,
            "progress": progress,
            "notes": [self.item(n, link) for n in dict.fromkeys(notes) if n is not None],
        }

    def _units_of(self, course: str) -> list[str]:
        """The keys of ``course``'s units (``course#...``), in the plan model's order."""
        if "#" in course:
            prefix = course + "#"
            return [k for k in self.knowledge().info if k.startswith(prefix)]
        return self.memo("units", self._units).get(course, [])

    def _units(self) -> dict[str, list[str]]:
        """Course -> the keys of its units, in the plan model's order (made once a state)."""
        out: dict[str, list[str]] = {}
        for key in self.knowledge().info:
            course, hash_, _unit = key.partition("#")
            if hash_:
                out.setdefault(course, []).append(key)
        return out

    def _unit(self, unit: Document, link: Linker) -> dict[str, Any]:
        needs = [f.target for f in self.outgoing(unit) if f.ref.kind == "requires" and f.target]
        return {
            "key": unit.key,
            "id": unit.id,
            "title": unit.title,
            "url": link.doc(unit),
            "status": unit.status,
            "level": unit.level,
            "tags": self.tag_links(unit.tags, link),
            "anchor": unit.key.split("#", 1)[1],
            "requires": self.items(needs, link),
        }

    def topics(self, link: Linker) -> Page:
        found = self.memo("topics", self.kb.topics)
        docs = self.kb.documents_for(t.key for t in found)
        known = self.knowledge().known
        rows = [
            {
                "key": t.key,
                "title": t.title,
                "url": link.key(t.key),
                "readings": t.count,
                "level": docs[t.key].level if t.key in docs else None,
                "status": docs[t.key].status if t.key in docs else None,
                "aliases": list(docs[t.key].aliases) if t.key in docs else [],
                "known": t.key in known,
            }
            for t in found
        ]
        return Page("topics.html", {"topics": rows})

    def lists(self, link: Linker) -> Page:
        return Page("lists.html", {"lists": lists_context(self.tracker(), link)})

    def courses(self, link: Linker) -> Page:
        return Page("courses.html", {"courses": self._courses(self.tracker(), link)})

    def _courses(self, tracker: Any, link: Linker) -> list[dict[str, Any]]:
        return [
            {
                "key": c.course.key,
                "title": c.course.title,
                "url": link.doc(c.course),
                "done": c.done,
                "total": c.total,
                "current": [self.item(u, link) for u in c.current],
            }
            for c in tracker.courses
        ]

    def progress(self, link: Linker) -> Page:
        """Progress over time, from the vault's git history (``status --history``)."""
        return Page("progress.html", progress_context(self.kb, link))

    def status(self, link: Linker, problems: int | None = None) -> Page:
        tracker = self.tracker()
        counts: dict[str, int] = {}
        for row in self.knowledge().info.values():
            counts[row[0]] = counts.get(row[0], 0) + 1
        steps = self.memo("ready", lambda: self.kb.ready(limit=READY_LIMIT))
        ready = [self.item(s.doc, link, unlocks(s)) for s in steps]
        return Page(
            "status.html",
            {
                "counts": counts,
                "reading": [self.item(d, link) for d in tracker.reading],
                "ready": ready,
                "courses": self._courses(tracker, link),
                "lists": lists_context(tracker, link),
                "finished": [self.item(d, link) for d in tracker.finished],
                "problems": problems,
            },
        )

    # -- plans --------------------------------------------------------------------------------
    def plan(self, target: Document, link: Linker, include_known: bool = False) -> Page:
        kn = self.knowledge()
        plan = self.kb.plan(target, include_known=include_known, kb=kn)
        skipped = 0 if include_known else plan.skipped
        context = {
            "plan": plan_context(plan, link),
            "skipped_known": skipped,
            "show_all_url": link.plan(target.key, True),
            "hide_known_url": link.plan(target.key),
        }
        return Page("plan.html", context, target.key)

    # -- search and the graph ------------------------------------------------------------------
    def search(
        self, link: Linker, query: str, filters: dict[str, str], limit: int = SEARCH_LIMIT
    ) -> Page:
        context: dict[str, Any] = {
            "query": query,
            "filters": filters,
            "limit": limit,
            "tags": self.tag_names(),
        }
        if query or any(filters.values()):
            hits, also = self.find(query, filters, limit)
            context.update(hits=[hit_context(h, link) for h in hits], also_searched=also)
        return Page("search.html", context)

    def find(self, query: str, filters: dict[str, str], limit: int) -> tuple[list[Hit], list[str]]:
        """Hits and the other names searched (UsageError for a query that cannot be read)."""
        # deferred: the API loads the vault for it
        from studykb.api import SearchOptions

        options = SearchOptions(
            query=query,
            types=(filters["type"],) if filters.get("type") else (),
            tags=tuple(t.strip() for t in filters.get("tag", "").split(",") if t.strip()),
            status=filters.get("status") or None,
            level=filters.get("level") or None,
            limit=limit,
        )
        found = self.kb.search(options)
        if not found.hits and _typing(query):  # a word still being typed: as a prefix
            found = self.kb.search(replace(options, query=_as_prefix(query)))
        return found.hits, list(found.also)

    def tag_names(self) -> list[str]:
        if "tags" not in self._memo:
            self.knowledge()
            self._memo["tags"] = sorted(self.kb.topic_table().ids.values(), key=str.casefold)
        tags: list[str] = self._memo["tags"]
        return tags

    def error(self, status: int, message: str, query: str = "", link: Linker | None = None) -> Page:
        suggestions = []
        if query and link is not None:
            for name in self.kb.suggest(query):
                try:
                    suggestions.append(self.item(self.kb.find(name.split(" (", 1)[0]), link))
                except StudyError:
                    continue
        return Page(
            "error.html",
            {"status_code": status, "message": message, "suggestions": suggestions},
            status=status,
        )


def _typing(query: str) -> bool:
    """Whether the query ends in a plain word that may be the start of a longer one."""
    last = query.rsplit(maxsplit=1)[-1] if query.strip() else ""
    return bool(_WORD_END.search(last)) and '"' not in query and ":" not in last


def _as_prefix(query: str) -> str:
    """``all-red`` -> ``all red*``: the last word's parts, the last one as a prefix."""
    head, _, last = query.rstrip().rpartition(" ")
    parts = " ".join(_WORD_PARTS.findall(last))
    return f"{head} {parts}*".strip()


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _authors(value: Any) -> str | list[str] | None:
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)] or None
    return _text(value)


def _context(lines: list[str], line: int) -> str:
    text = " ".join(lines[line - 1].split()) if 0 < line <= len(lines) else ""
    return text if len(text) <= CONTEXT_CHARS else text[: CONTEXT_CHARS - 1] + "…"


def _file_lines(kb: Session, path: str) -> list[str]:
    raw = kb.read_file(path)
    if raw is None:
        return []
    return raw.decode("utf-8-sig", errors="replace").replace("\r\n", "\n").split("\n")
