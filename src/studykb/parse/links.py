"""What a Markdown link destination, a Hugo ``ref`` or a wikilink names, by the site's rules.

Each function turns what is written into a :class:`RawRef` (or None for what is not a
reference: ``mailto:``, ``?query``). Paths become vault paths here, with the generator's
rules (:class:`~studykb.parse.reading.Reading`): site-absolute links start in the content
folder of the page's language, Zola's ``@/`` in ``content/``, links without ``.md`` from a
page served as a folder start at its URL, and Hugo's ``ref`` looks beside the page first.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from urllib.parse import unquote

from studykb.parse.code_links import code_link
from studykb.parse.reading import Reading
from studykb.parse.site_urls import key_form

_SCHEME_RE = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
#: Extensions of files that are documents when linked without being found.
DOC_SUFFIX = ".md"
#: GitLab's and Azure DevOps' table of contents, written like a wikilink.
NOT_LINKS = frozenset({"_TOC_", "TOC", "_toc_"})


@dataclass
class RawRef:
    """A reference found in the body, before it becomes a :class:`~studykb.model.Reference`."""

    line: int
    text: str
    target: str
    style: str  # name | path | url | label
    anchor: str = ""
    optional: bool = False
    outside: bool = False
    attachment: bool = False
    """It names a file that is not a document (an image, a PDF)."""


@dataclass(frozen=True)
class Fragment:
    """A same-page ``#anchor`` link (``[x](#a)``, ``[[#Heading]]``)."""

    line: int
    text: str
    anchor: str


def link_target(
    href: str, path: str, line: int, reading: Reading, page_url: str = ""
) -> RawRef | Fragment | None:
    """Classify a Markdown link destination written in the file at ``path``.

    URLs are kept for URL resolution; ``#x`` is a :class:`Fragment`; relative, site-absolute
    and ``@/`` (Zola) paths become path references, to documents or to attachments. A path
    without ``.md`` that names no document is an ordinary site link, so it is optional.
    Where pages are named by their URLs (Hugo), a page link is a ``site`` reference to a
    site path, one without ``/`` first taken from ``page_url``, the page's own URL.
    """
    href = href.strip()
    if not href:
        return None
    if href.startswith("#"):
        return Fragment(line, href, unquote(href[1:]))
    if _SCHEME_RE.match(href):
        scheme = href.split(":", 1)[0].lower()
        return RawRef(line, href, href, "url") if scheme in ("http", "https") else None
    if href.startswith("//"):
        return RawRef(line, href, "https:" + href, "url")
    raw = href
    target, _, anchor = unquote(href).partition("#")
    target = target.split("?", 1)[0]
    if not target:
        return None
    ext = posixpath.splitext(target.rstrip("/"))[1].lower()
    is_doc = ext == DOC_SUFFIX
    attachment = bool(ext) and not is_doc and not _looks_like_name(ext)
    if reading.site_urls and not is_doc and not attachment and not target.startswith("@/"):
        if "{{" in target or (reading.link_hook and not target.startswith("/")):
            return None  # made by a shortcode, or the site's own link hook's: not judged
        site = _site_ref(line, raw, target, anchor, page_url, reading.taxonomies)
        if site is not None:
            return site
    if target.startswith("@/"):  # Zola internal link
        joined = _join(reading.content_root(path), target[2:])
    elif target.startswith("/"):  # site-absolute: the content folder (or the repository)
        joined = reading.site_path(target, path)
    elif is_doc or attachment:
        joined = posixpath.join(posixpath.dirname(path), target)
    else:
        joined = posixpath.join(reading.page_folder(path), target)
    norm = posixpath.normpath(joined) if joined else "."
    outside = (norm == ".." or norm.startswith("../")) and not attachment
    return RawRef(
        line, raw, norm, "path", anchor, optional=not is_doc, outside=outside, attachment=attachment
    )


def _site_ref(
    line: int, raw: str, target: str, anchor: str, page_url: str, lists: tuple[str, ...]
) -> RawRef | None:
    """A Hugo page link as a site path (``../b/`` from ``/a/x/`` is ``/a/b``); None for a
    taxonomy's list (``lists``: ``/tags/x/`` is Hugo's own page)."""
    if not target.startswith("/"):
        if not page_url:
            return None
        folder = page_url if page_url.endswith("/") else posixpath.dirname(page_url) + "/"
        target = posixpath.join(folder, target)
    norm = posixpath.normpath(target)
    if norm.startswith("//"):
        norm = "/" + norm.lstrip("/")
    if norm.strip("/").split("/", 1)[0].lower() in lists:
        return None
    return RawRef(line, raw, key_form(norm), "site", anchor, optional=True)


def _join(root: str, rest: str) -> str:
    return rest if root in ("", ".") else f"{root}/{rest}"


def _looks_like_name(ext: str) -> bool:
    """``dendron.notes.md`` has ``.notes`` as a false extension; real file types are short words."""
    return not ext[1:].isalnum() or len(ext) > 6 or ext[1:].isdigit()


def wikilink(
    line: int, markup: str, target: str, anchor: str, label: str, reading: Reading
) -> RawRef | Fragment | None:
    """``[[target#anchor|label]]`` (``[[label|target]]`` where the vault writes labels first)."""
    if reading.label_first and label:
        target, _, anchor = label.partition("#")
        target, anchor = target.strip(), anchor.strip()
    if target in NOT_LINKS and not anchor:
        return None
    if not target:
        return Fragment(line, markup, anchor) if anchor else None
    code = code_link(f"{target}#{anchor}" if anchor else target)
    if code is not None:
        # a link into a tracked repository's code: a reference to the document that
        # tracks it (if any; a repository of studykb.toml has none), judged by the repos
        # feature from its text, never a heading of that document
        return RawRef(line, markup, code.repo, "code", optional=True)
    return RawRef(line, markup, target, "name", anchor)


def hugo_ref(
    line: int, markup: str, target: str, anchor: str, lang: str, path: str, reading: Reading
) -> RawRef | Fragment | None:
    """``{{< ref "x.md#a" >}}`` / ``relref``: Hugo looks beside the page, then from the
    content root of the page's language (or of ``lang=``), then by file name."""
    if not target:
        return Fragment(line, markup, anchor) if anchor else None
    root = (reading.language_root(lang) if lang else None) or reading.content_root(path)
    if target.startswith("/"):
        norm = posixpath.normpath(_join(root, target.lstrip("/")))
        return RawRef(line, markup, norm, "path", anchor)
    return RawRef(line, markup, target, "name", anchor)
