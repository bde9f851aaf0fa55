"""Where every page is: one scheme for ``studykb serve`` and ``studykb site``.

Paths are written from the site's root without a leading ``/``, the same in both modes,
so a page of the static site sits where the server answers it:

* ``index.html`` (the status page; ``/`` when served), ``topics/``, ``lists/``,
  ``courses/``, ``graph/``, ``search/``, ``progress/`` (``.../index.html`` in a static
  site);
* a document: ``d/<its path without .md>.html``; a course unit: its course's page with
  ``#<unit id>``;
* the reading plan of a document: ``plan/<its path without .md>.html``; of a unit:
  ``plan/<course path without .md>@<unit id>.html``;
* files of the vault a note shows (images): ``files/<vault path>``;
* a file (or folder) of a tracked repository a note links into:
  ``code/<NAME>/<its path>.html``, at a named commit ``code/<NAME>@<rev>/<its path>.html``
  (a repository's name never holds ``@``); served, ``?lines=10-40`` or ``?symbol=S``
  shows those lines with a few around them, and every line has the anchor ``#L12``.

A :class:`Linker` turns these into the hrefs of one page: ``/`` + path when served,
the relative way up (``../../``) + path in a static site.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING
from urllib.parse import quote

from studykb.model import Document
from studykb.runtime import process

if TYPE_CHECKING:
    from studykb.api import CodeTarget

DOC_DIR = "d/"
PLAN_DIR = "plan/"
FILES_DIR = "files/"
CODE_DIR = "code/"
UNIT_MARK = "@"
#: List pages by name, as the templates' ``urls`` name them.
INDEXES = MappingProxyType(
    {
        "home": "",
        "topics": "topics/",
        "lists": "lists/",
        "courses": "courses/",
        "graph": "graph/",
        "search": "search/",
        "progress": "progress/",
    }
)


def stem(path: str) -> str:
    """A vault path without its ``.md``."""
    return path[:-3] if path.lower().endswith(".md") else path


def page_file(key: str) -> str:
    """The page path of the document with ``key`` (a unit: its course's page)."""
    path = key.split("#", 1)[0]
    return f"{DOC_DIR}{stem(path)}.html"


def plan_file(key: str) -> str:
    path, _, unit = key.partition("#")
    return f"{PLAN_DIR}{stem(path)}{UNIT_MARK + unit if unit else ''}.html"


def code_page(repo: str, path: str, rev: str | None = None) -> str:
    """The page path of the file ``path`` of repository ``repo`` at ``rev`` (None: HEAD)."""
    return f"{CODE_DIR}{repo}{UNIT_MARK + rev if rev else ''}/{path}.html"


def code_place(page: str) -> tuple[str, str | None, str] | None:
    """(repository, rev or None, path) of a code page path (after ``code/``); None when
    it is none."""
    spec, _, rest = page.partition("/")
    if not rest.endswith(".html") or not spec:
        return None
    name, _, rev = spec.partition(UNIT_MARK)
    path = rest[: -len(".html")]
    return (name, rev or None, path) if name and path else None


#: Page paths kept quoted (a site links to each document from many pages: about 35
#: hrefs a page, each ``quote`` costing more than the rest of the href).
HREFS_KEPT = 1 << 16


@process.memo(maxsize=HREFS_KEPT)
def href(path: str) -> str:
    """A page path made safe for an ``href`` (spaces, ``#``, ``?``, non-ASCII quoted)."""
    return quote(path, safe="/@-._~!$&'()*+,;=:")


@dataclass(frozen=True)
class Linker:
    """The hrefs of one page: ``root`` is ``/`` when served, ``../`` ... in a static site."""

    root: str = "/"
    static: bool = False

    def index(self, name: str) -> str:
        path = INDEXES[name]
        if self.static:
            path += "index.html"
        return self.root + path if path else self.root

    def doc(self, doc: Document) -> str:
        url = self.root + href(page_file(doc.key))
        if "#" in doc.key:
            url += "#" + quote(doc.key.split("#", 1)[1], safe="")
        return url

    def key(self, key: str) -> str:
        url = self.root + href(page_file(key))
        return url + ("#" + quote(key.split("#", 1)[1], safe="") if "#" in key else "")

    def plan(self, key: str, include_known: bool = False) -> str:
        return self.root + href(plan_file(key)) + ("?all=1" if include_known else "")

    def graph(self, focus: str | None = None, mode: str = "around") -> str:
        base = self.index("graph")
        if not focus:
            return base
        return f"{base}?focus={quote(focus, safe='')}&mode={mode}"

    def file(self, path: str) -> str:
        return self.root + href(FILES_DIR + path)

    def code(self, target: CodeTarget) -> str:
        """Where a code link goes: its repository's code page, the lines or symbol as
        the query (served) and the first line as the anchor; a repository not cloned
        here: its web host's page of the file, else the code page (which says so)."""
        if not target.cloned and target.public:
            return target.public
        url = self.root + href(code_page(target.repo, target.path, target.rev))
        if target.lines:
            a, b = target.lines
            return url + ("" if self.static else f"?lines={a}-{b}") + f"#L{a}"
        if target.symbol:
            name = quote(target.symbol, safe="")
            return url + ("" if self.static else f"?symbol={name}") + f"#sym-{name}"
        return url

    def tag(self, tag: str) -> str:
        return f"{self.index('search')}?tag={quote(tag, safe='')}"

    def urls(self) -> dict[str, str]:
        """The templates' ``urls``: list pages, and in a static site the data files."""
        out = {name: self.index(name) for name in INDEXES}
        out["status"] = out["home"]
        if self.static:
            out["graph_json"] = self.root + "graph.json"
            out["search_index"] = self.root + "search-index.json"
        return out


def relative_root(path: str) -> str:
    """From the page at ``path`` (from the root) back to the root: ``../../`` or ``./``."""
    depth = path.count("/")
    return "../" * depth if depth else "./"
