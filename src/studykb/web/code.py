"""The code page: a file (or folder) of a tracked repository that notes link into.

The file is read from the clone's object store through the library API
(``kb.repos().file``), highlighted line by line (``code_lines``), numbered, every line
with the anchor ``#L12``; it names the commit it is shown at and lists the notes that
link into it. Asked for lines (``?lines=10-40``) or a symbol (``?symbol=LLM.generate``),
the served page shows those lines marked with :data:`CONTEXT` lines around them, and a
link to the whole file; the whole file marks every range notes link to. A repository
that is not cloned here is named with its web address, and the page says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from markupsafe import Markup

from studykb.api import code_lines
from studykb.errors import StudyError
from studykb.web.links import Linker, code_page, code_place, href
from studykb.web.pages import Page

if TYPE_CHECKING:
    from studykb.api import CodeFile, CodeTarget, Link, Session
    from studykb.web.pages import Pages

#: Lines shown around the lines asked for.
CONTEXT = 5
#: Lines shown at most at once (a longer file: the first ones, the rest by ``?lines=``).
MOST = 3000
_LINES = re.compile(r"^L?(\d{1,9})(?:-L?(\d{1,9}))?$")


@dataclass(frozen=True)
class Asked:
    """What a code page is asked to show: a file at a commit, its lines or a symbol."""

    repo: str
    path: str
    rev: str | None = None
    lines: tuple[int, int] | None = None
    symbol: str | None = None


def asked_lines(value: str | None) -> tuple[int, int] | None:
    """``10-40`` (``L10-L40``, ``12``) as (10, 40); None for anything else."""
    found = _LINES.match((value or "").strip())
    if found is None:
        return None
    a = int(found[1])
    b = int(found[2] or a)
    return (min(a, b), max(a, b)) if a > 0 else None


def served(pages: Pages, link: Linker, page: str, lines: str | None, symbol: str | None) -> Page:
    """The served code page at ``code/<page>`` (``?lines=``, ``?symbol=``); a StudyError
    (exit 1: not found) for a path that names none."""
    place = code_place(page)
    if place is None:
        raise StudyError(f"No code page is at code/{page}.")
    name, rev, path = place
    return code_page_of(pages, link, Asked(name, path, rev, asked_lines(lines), symbol or None))


def backlinks(kb: Session, repo: str, path: str) -> list[tuple[Link, CodeTarget | None]]:
    """The code links into ``repo``'s ``path`` (a folder: and below), with where each goes."""
    view = kb.repos()
    _name, _path, links = view.backlinks(f"{repo}:{path}")
    return [(link, view.target(link.ref.text, link)) for link in links]


def code_page_of(
    pages: Pages,
    link: Linker,
    asked: Asked,
    into: list[tuple[Link, CodeTarget | None]] | None = None,
    pages_for: set[str] | None = None,
    shown: CodeFile | None = None,
) -> Page:
    """The code page of ``asked``; ``into``: the code links into its file (read when
    None); ``pages_for``: in a static site, the code pages written (a folder's files
    link only to those); ``shown``: the file, read by :func:`read` (read when None). A
    StudyError (exit 1) when there is no such repository, commit or path."""
    kb = pages.kb
    if into is None:
        into = backlinks(kb, asked.repo, asked.path)
    mine = _mine(asked, into)
    if shown is None:
        shown = read(kb, asked, into)
    context: dict[str, Any] = {
        "code": _info(shown),
        "asked": {"lines": list(asked.lines) if asked.lines else None, "symbol": asked.symbol},
        "backlinks": _backlinks(pages, link, into),
        "blocks": [],
        "files": [],
        "whole_url": None,
        "notice": "",
    }
    if shown.folder:
        context["files"] = _files(link, shown, pages_for)
    elif shown.text is not None:
        _lines_of(context, link, shown, asked, mine)
    return Page("code.html", context)


def _mine(asked: Asked, into: list[tuple[Link, CodeTarget | None]]) -> list[CodeTarget]:
    """The targets of the links into exactly the file (and commit) of ``asked``."""
    return [t for _l, t in into if t is not None and t.rev == asked.rev and t.path == asked.path]


def read(kb: Session, asked: Asked, into: list[tuple[Link, CodeTarget | None]]) -> CodeFile:
    """The file ``asked`` names, with the lines of the symbols asked for and linked to;
    a StudyError (exit 1) when there is no such repository, commit or path."""
    wanted = {t.symbol for t in _mine(asked, into) if t.symbol}
    if asked.symbol:
        wanted.add(asked.symbol)
    return kb.repos().file(asked.repo, asked.path, asked.rev, tuple(sorted(wanted)))


def _info(shown: CodeFile) -> dict[str, Any]:
    at = shown.changed or shown.commit
    return {
        "repo": shown.repo,
        "path": shown.path,
        "rev": shown.rev,
        "url": shown.url,
        "public": shown.public,
        "cloned": shown.cloned,
        "folder": shown.folder,
        "commit": at,
        "commit_short": at[:12],
        "date": shown.changed_date or shown.date,
        "changed": bool(shown.changed),
        "blob": shown.blob,
        "message": shown.message,
    }


def _files(link: Linker, shown: CodeFile, pages_for: set[str] | None) -> list[dict[str, Any]]:
    out = []
    for path in shown.files:
        page = code_page(shown.repo, path, shown.rev)
        url = link.root + href(page) if pages_for is None or page in pages_for else None
        out.append({"path": path[len(shown.path) + 1 :], "url": url})
    return out


def _lines_of(
    context: dict[str, Any], link: Linker, shown: CodeFile, asked: Asked, mine: list[CodeTarget]
) -> None:
    """The blocks of lines the page shows, the lines marked, and the way to the rest."""
    html = code_lines(shown.text or "", shown.path)
    count = len(html)
    here = link.root + href(code_page(shown.repo, shown.path, shown.rev))
    spans = shown.spans
    focus = asked.lines
    if asked.symbol:
        focus = spans.get(asked.symbol)
        if focus is None:
            context["notice"] = f"{asked.symbol} is not defined in {shown.path}."
    if focus is not None and (focus[0] > count or focus[1] > count):
        context["notice"] = (
            f"{shown.path} has {count} lines; L{focus[0]}-{focus[1]} is not among them."
        )
        focus = None
    marks: set[int] = set()
    anchors: dict[int, str] = {}
    linked: list[tuple[int, int]] = []
    for target in mine:
        span = target.lines or (spans.get(target.symbol) if target.symbol else None)
        if span is not None and span[0] <= count:
            span = (span[0], min(span[1], count))
            linked.append(span)
            marks.update(range(span[0], span[1] + 1))
            if target.symbol:
                anchors.setdefault(span[0], symbol_anchor(target.symbol))
    if asked.symbol and focus is not None:
        anchors.setdefault(focus[0], symbol_anchor(asked.symbol))
    if focus is not None:
        marks = set(range(focus[0], focus[1] + 1))
        first, last = max(1, focus[0] - CONTEXT), min(count, focus[1] + CONTEXT)
        ranges = [(first, min(last, first + MOST - 1))]
        context["whole_url"] = f"{here}#L{focus[0]}"
    elif count <= MOST:
        ranges = [(1, count)] if count else []
    elif link.static:  # one page per file: the first lines and every range linked to
        around = [(max(1, a - CONTEXT), min(count, b + CONTEXT)) for a, b in linked]
        ranges = _merged([(1, MOST), *around])
        context["notice"] = (
            f"{shown.path} has {count} lines; the first {MOST} and those notes link to are shown."
        )
    else:
        ranges = [(1, MOST)]
        context["notice"] = f"{shown.path} has {count} lines; the first {MOST} are shown."
        context["more_url"] = f"{here}?lines={MOST + 1}-{min(count, 2 * MOST)}"
    blocks = []
    shown_to = 0
    for first, last in ranges:
        rows = [
            {
                "n": n,
                "html": Markup(html[n - 1]),  # escaped by code_lines
                "marked": n in marks,
                "symbol": anchors.get(n),
            }
            for n in range(first, last + 1)
        ]
        blocks.append({"first": first, "last": last, "skipped": first - 1 - shown_to, "rows": rows})
        shown_to = last
    context["blocks"] = blocks
    context["count"] = count
    context["below"] = count - shown_to


def _merged(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Line ranges in order, overlapping or touching ones joined."""
    out: list[tuple[int, int]] = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _backlinks(
    pages: Pages, link: Linker, into: list[tuple[Link, CodeTarget | None]]
) -> list[dict[str, Any]]:
    docs = pages.kb.documents_for(found.ref.source for found, _t in into)
    out = []
    for found, target in into:
        doc = docs.get(found.ref.source)
        if doc is None:
            continue
        out.append(
            {
                "title": doc.title,
                "url": link.doc(doc),
                "type": doc.type,
                "line": found.ref.line,
                "where": _where(target),
                "to": link.code(target) if target is not None else None,
                "context": pages.context_line(found.ref.path, found.ref.line),
            }
        )
    return out


def _where(target: CodeTarget | None) -> str:
    if target is None:
        return ""
    where = target.path
    if target.lines:
        a, b = target.lines
        where += f"#L{a}" + (f"-{b}" if b != a else "")
    elif target.symbol:
        where += f"#{target.symbol}"
    return where + (f"@{target.rev}" if target.rev else "")


def symbol_anchor(symbol: str) -> str:
    """The id of a symbol's first line on its code page (as :meth:`Linker.code` links)."""
    return "sym-" + quote(symbol, safe="")
