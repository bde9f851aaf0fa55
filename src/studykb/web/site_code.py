"""The code pages of a static site: one page for each file (or folder) of a tracked
repository that a note links into, at the commit the link names (HEAD otherwise), as the
served code page shows it (:mod:`studykb.web.code`) but whole: every range and symbol
that notes link to is marked, and a link's ``#L10`` or ``#sym-NAME`` is its anchor. No
other file of a repository gets a page; a link into a repository that is not cloned here
goes to its web host, and gets no page unless it has no address (then its page says so).

A code page is made from its file's blob id (a folder's tree id), the commit that last
changed it, the lines of the symbols linked to, and the notes linking in (their place and
content): :func:`code_pages` digests these, so a later build makes the page again only
when one of them changed (a ``git pull`` that changed the file, an edited note), and a
pull that left the file alone leaves its page alone. A link into a file that is not there
(a ``dangling-code`` problem of ``check``) gets a page saying so, never a broken link.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import TYPE_CHECKING

from studykb.errors import StudyError
from studykb.web.code import Asked, code_page_of, read
from studykb.web.links import Linker, code_page, relative_root
from studykb.web.templating import render

if TYPE_CHECKING:
    from studykb.api import CodeFile, CodeTarget, Link, Session
    from studykb.web.pages import Page, Pages
    from studykb.web.site_output import Output
    from studykb.web.templating import Frame

#: A code page made: (path, digest, written, digest of its inputs).
CodeDone = tuple[str, str, bool, str]
Into = list[tuple["Link", "CodeTarget | None"]]


def tracks_code(kb: Session) -> bool:
    """Whether the vault has code links or names clones (else the repositories, and
    dulwich, are never read)."""
    return kb.tracks_code()


def repo_states(kb: Session) -> tuple[str, str]:
    """(what every page's code links depend on: each tracked repository's name, address
    and whether it is cloned here; what code pages may be made from besides the vault:
    that and the refs of every clone). Both '' for a vault that tracks no code."""
    if not tracks_code(kb):
        return "", ""
    view = kb.repos()
    names = sorted({(r.name, r.url, r.cloned) for r in view.repos.values()})
    return repr(names), view.heads()


def code_pages(
    pages: Pages, frame: Frame, output: Output, files: dict[str, str], common: str
) -> list[CodeDone]:
    """Write (or keep) the code page of every file a note links into; ``files``: path ->
    content digest of every vault file, ``common``: what every page is made from."""
    kb = pages.kb
    if not tracks_code(kb):
        return []
    linked = kb.repos().linked()
    wanted: dict[str, Asked] = {}
    for target, _link in linked:
        if not target.cloned and target.public:
            continue  # its link goes to the web host
        path = code_page(target.repo, target.path, target.rev)
        wanted.setdefault(path, Asked(target.repo, target.path, target.rev))
    out: list[CodeDone] = []
    written = set(wanted)
    for path, asked in sorted(wanted.items()):
        into: Into = [(link, t) for t, link in linked if _inside(t, asked)]
        link = Linker(relative_root(path), static=True)
        shown: CodeFile | None = None
        try:
            shown = read(kb, asked, into)
            made = _made_from(shown)
        except StudyError as exc:
            made = f"missing\0{exc}"
        inputs = _inputs(common, path, made, into, files)
        kept = output.kept(path, inputs)
        if kept is not None:
            out.append((path, kept[0], False, inputs))
            continue
        page = _page(pages, link, asked, into, written, shown)
        html = render(page, frame, link, path=path)
        out.append((path, *output.write(path, html.encode()), inputs))
    return out


def _page(
    pages: Pages, link: Linker, asked: Asked, into: Into, written: set[str], shown: CodeFile | None
) -> Page:
    where = f"{asked.repo}:{asked.path}" + (f"@{asked.rev}" if asked.rev else "")
    if shown is None:  # read again for the message
        try:
            return code_page_of(pages, link, asked, into, written)
        except StudyError as exc:
            return pages.error(404, f"{where}: {exc}")
    return code_page_of(pages, link, asked, into, written, shown)


def _inside(target: CodeTarget, asked: Asked) -> bool:
    """Whether a link's target is the page's file, or (a folder's page) below it."""
    return target.repo == asked.repo and (
        target.path == asked.path or target.path.startswith(asked.path + "/")
    )


def _made_from(shown: CodeFile) -> str:
    """What the page shows of its file, but its text (its blob id stands for it); the
    commit read is left out where the page names the commit that last changed the file
    instead (a pull that left the file alone changes only the commit read)."""
    if shown.changed:
        shown = replace(shown, commit="", date="")
    return repr(replace(shown, text=None))


def _inputs(common: str, path: str, made: str, into: Into, files: dict[str, str]) -> str:
    h = hashlib.blake2b(common.encode(), digest_size=16)
    h.update(f"\0{path}\0{made}\0".encode())
    for link, _target in into:
        ref = link.ref
        h.update(f"\0{ref.source}\0{ref.text}\0{ref.line}\0{files.get(ref.path, '')}".encode())
    return h.hexdigest()
