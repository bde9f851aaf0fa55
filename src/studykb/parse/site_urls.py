"""The URL Hugo gives a page, from its file, front matter and the site's settings.

Parsing needs it (a site-absolute link names a page by its URL, not its file) and so does
the sidebar data file (its links must be the URLs Hugo builds). gohugo.io/content-management/
urls/ and /permalinks/:

- ``url`` in front matter is the whole path, as written (a language prefix comes first);
- else ``[permalinks]`` (``posts = "/:year/:slug/"``, or ``[permalinks.page]``) applies to
  the pages of its section, with the tokens ``:year :month :monthname :day :weekday
  :yearday :section :sections :sections[1:] :sections[last] :title :slug :slugorfilename
  :slugorcontentbasename :filename :contentbasename``;
- else ``/section/name/``, with ``slug`` in place of the name, a bundle (``x/index.md``)
  and a section (``_index.md``) served as their folder, ``uglyURLs`` as ``name.html``.

Names are made into paths as Hugo's ``MakePathSanitized`` does: letters (any script),
digits and marks kept with ``. / _ - # + ~``, a run of spaces one ``-``, the rest dropped,
lower case unless ``disablePathToLower``. A page Hugo never writes (``draft``,
``build.render: never``, ``headless``, an ``expiryDate`` past) has no URL.
"""

from __future__ import annotations

import datetime as dt
import posixpath
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from studykb.parse.reading import Reading

_TOKEN = re.compile(r":([a-z_]+)(\[[^\]]*\])?")
_KEPT = frozenset("./\\_-#+~")
_MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


@dataclass(frozen=True)
class HugoUrls:
    """The settings of a Hugo site that decide its URLs."""

    #: Section -> ``[permalinks]`` pattern for its pages.
    permalinks: tuple[tuple[str, str], ...] = ()
    #: ``uglyURLs``: ``/section/name.html``.
    ugly: bool = False
    #: ``disablePathToLower``.
    keep_case: bool = False
    #: Folders below the first level that are sections (they hold an ``_index.md``).
    sections: tuple[str, ...] = ()


def sanitize(text: str, keep_case: bool = False) -> str:
    """A name as Hugo makes it a path (``My Setup`` -> ``my-setup``, ``流水线 并行`` kept)."""
    out: list[str] = []
    hyphen = False
    for char in text.strip():
        if char in _KEPT or unicodedata.category(char)[0] in "LM" or char.isdecimal():
            if hyphen and char != "-" and out and out[-1] != "-":
                out.append("-")
            hyphen = False
            out.append(char)
        elif char.isspace() and out:
            hyphen = True
    made = "".join(out)
    return made if keep_case else made.lower()


def _scalar(value: Any) -> str | None:
    """A front-matter value written as text or a number (``slug: 123``), else None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (str, int, float)):
        text = str(value).strip()
        return text or None
    return None


def rendered(meta: Mapping[str, Any], today: dt.date | None = None) -> bool:
    """Whether Hugo writes the page at all (its default build: no drafts, no expired)."""
    if meta.get("draft") is True or meta.get("headless") is True:
        return False
    for key in ("build", "_build"):
        options = meta.get(key)
        if isinstance(options, Mapping):
            render = options.get("render", options.get("Render"))
            if render is False or (
                isinstance(render, str) and render.lower() in ("never", "false")
            ):
                return False
    expiry = _scalar(meta.get("expiryDate", meta.get("expirydate")))
    if expiry and re.match(r"\d{4}-\d{2}-\d{2}", expiry):
        try:
            when = dt.date.fromisoformat(expiry[:10])
        except ValueError:
            return True
        return when > (today or dt.date.today())
    return True


def page_url(rel: str, meta: Mapping[str, Any], urls: HugoUrls, lang: str = "") -> str:
    """The site path of the page at ``rel`` (its path inside its content folder), without
    the base URL's path; ``lang``: its language's prefix (``""`` for the default)."""
    prefix = f"/{lang}" if lang else ""
    own = _scalar(meta.get("url"))
    if own and "://" not in own:
        return prefix + "/" + own.strip("/") + ("/" if own.endswith("/") or "." not in own else "")
    folder, name = posixpath.split(rel)
    stem = name[:-3] if name.lower().endswith(".md") else name
    keep = urls.keep_case
    if stem == "_index":
        return prefix + ("/" + sanitize(folder, keep) + "/" if folder else "/")
    if stem == "index":  # a leaf bundle: its folder is the page
        folder, stem = posixpath.split(folder)
    slug = _scalar(meta.get("slug"))
    section = folder.split("/", 1)[0] if folder else ""
    pattern = dict(urls.permalinks).get(section)
    if pattern:
        sections = _sections(folder, urls.sections)
        return prefix + _expand(pattern, meta, sections, slug, stem, keep)
    parts = [p for p in (sanitize(folder, keep), sanitize(slug or stem, keep)) if p]
    if urls.ugly:
        return prefix + "/" + "/".join(parts) + ".html"
    return prefix + "/" + "/".join(parts) + "/"


def _date(meta: Mapping[str, Any]) -> dt.date | None:
    for key in ("date", "publishDate", "publishdate", "pubdate"):
        text = _scalar(meta.get(key))
        if text and re.match(r"\d{4}-\d{2}-\d{2}", text):
            try:
                return dt.date.fromisoformat(text[:10])
            except ValueError:
                continue
    return None


def _sections(folder: str, nested: tuple[str, ...]) -> list[str]:
    """The sections a page in ``folder`` is in: the first folder, then each folder below
    it down to the deepest one that is a section (holds an ``_index.md``)."""
    parts = [p for p in folder.split("/") if p]
    depth = 1
    for end in range(2, len(parts) + 1):
        if "/".join(parts[:end]) in nested:
            depth = end
    return parts[:depth]


def _expand(
    pattern: str,
    meta: Mapping[str, Any],
    sections: list[str],
    slug: str | None,
    stem: str,
    keep: bool,
) -> str:
    """A ``[permalinks]`` pattern for one page (a token Hugo does not know is kept)."""
    date = _date(meta)
    title = _scalar(meta.get("title")) or stem

    def value(match: re.Match[str]) -> str:
        token, index = match.group(1), match.group(2)
        if token == "sections":
            return "/".join(sanitize(s, keep) for s in _pick(sections, index))
        plain = _token(token, date, title, slug, stem, sections, keep)
        return match.group(0) if plain is None else plain + (index or "")

    out = _TOKEN.sub(value, pattern)
    out = re.sub("/+", "/", "/" + out.strip("/"))
    return out + ("/" if pattern.endswith("/") else "")


def _token(
    token: str,
    date: dt.date | None,
    title: str,
    slug: str | None,
    stem: str,
    sections: list[str],
    keep: bool,
) -> str | None:
    if token in _DATED:
        return _dated(token, date) if date else ""
    named = {
        "section": sections[0] if sections else "",
        "title": title,
        "slug": slug or title,
        "slugorfilename": slug or stem,
        "slugorcontentbasename": slug or stem,
        "filename": stem,
        "contentbasename": stem,
    }
    if token not in named:
        return None
    return sanitize(named[token], keep)


_DATED = ("year", "month", "monthname", "day", "weekday", "weekdayname", "yearday")


def _dated(token: str, d: dt.date) -> str:
    """A date token of a permalink pattern."""
    values = {
        "year": f"{d.year:04d}",
        "month": f"{d.month:02d}",
        "monthname": _MONTHS[d.month - 1],
        "day": f"{d.day:02d}",
        "weekday": str((d.weekday() + 1) % 7),
        "weekdayname": _WEEKDAYS[d.weekday()],
        "yearday": str(d.timetuple().tm_yday),
    }
    return values[token]


def _pick(sections: list[str], index: str | None) -> list[str]:
    """``:sections[1:]``, ``[:last]``, ``[last]``, ``[0]`` of the page's sections."""
    if not index:
        return sections
    inner = index[1:-1].strip().replace("last", str(len(sections) - 1))
    try:
        if ":" in inner:
            start, _, stop = inner.partition(":")
            return sections[int(start or 0) : int(stop) if stop else None]
        return [sections[int(inner)]]
    except (ValueError, IndexError):
        return []


def aliases(meta: Mapping[str, Any], url: str) -> list[str]:
    """Hugo's ``aliases``: old site paths that redirect to the page (a relative one is
    beside the page's own URL)."""
    value = meta.get("aliases")
    items = value if isinstance(value, list) else [value] if isinstance(value, str) else []
    out = []
    for item in items:
        text = _scalar(item)
        if not text or "://" in text:
            continue
        path = (
            text
            if text.startswith("/")
            else posixpath.join(posixpath.dirname(url.rstrip("/")), text)
        )
        out.append(path)
    return out


def key_form(url: str) -> str:
    """A site path as names and links compare it: decoded, without a trailing ``/`` or
    ``index.html``, ``/`` for the home page."""
    path = posixpath.normpath("/" + url.strip().lstrip("/")) if url.strip() else "/"
    if path.endswith("/index.html"):
        path = path[: -len("/index.html")] or "/"
    return path if path.startswith("/") else "/" + path


def of_page(path: str, meta: Mapping[str, Any], reading: Reading) -> tuple[str, list[str]]:
    """(the page's URL, every site path it answers to in key form: that URL, then its
    ``aliases``); the second is empty for a page Hugo never writes."""
    root = reading.content_root(path)
    rel = path[len(root) + 1 :] if root not in ("", ".") and path.startswith(root + "/") else path
    lang = _language(root, reading)
    folder, name = posixpath.split(rel)
    parts = name.rsplit(".", 2)
    if len(parts) == 3 and parts[2].lower() == "md" and parts[1].lower() in reading.languages:
        # a translation by file name: post.zh.md is the zh page post
        rel = posixpath.join(folder, parts[0] + ".md")
        lang = "" if parts[1].lower() == reading.default_language.lower() else parts[1].lower()
    urls = HugoUrls(reading.permalinks, reading.ugly_urls, reading.keep_case, reading.sections)
    url = page_url(rel, meta, urls, lang)
    if not rendered(meta):
        return url, []
    names = [key_form(url), *(key_form(a) for a in aliases(meta, url))]
    return url, list(dict.fromkeys(names))


def _language(root: str, reading: Reading) -> str:
    """The URL prefix of the language whose content folder is ``root`` (``""``: default)."""
    for code, folder in reading.language_dirs:
        if folder == root and code.lower() != reading.default_language.lower():
            return code.lower()
    return ""
