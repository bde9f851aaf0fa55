"""Where a Hugo or Jekyll site puts each page: its key for templates and its URL.

A data file read by a site template must name pages as the generator does, and link to the
URLs it builds, or the template finds nothing and the links lead nowhere:

- Hugo (gohugo.io/content-management/urls/): a page's key is ``.File.Path``, its path inside
  its content folder; its URL is ``/section/name/`` (lower case, spaces as ``-``), a bundle's
  (``name/index.md``) and a section's (``_index.md``) their folder, ``slug`` replaces the last
  part, ``url`` the whole, ``[permalinks]`` patterns apply per section, ``uglyURLs`` gives
  ``/section/name.html``; a language other than the default is served under ``/lang/``; the
  ``baseURL``'s path comes first (``.RelPermalink``). ``parse/site_urls.py`` makes them,
  as it does for the links ``check`` follows; a page Hugo never writes is never linked.
- Jekyll (jekyllrb.com/docs/permalinks/): the key is ``page.path``; a page is
  ``/folder/name.html`` (``index.md`` its folder), or ``/folder/name/`` with
  ``permalink: pretty``; a post ``_posts/2024-01-02-title.md`` is
  ``/:categories/:year/:month/:day/:title.html`` (``/`` instead of ``.html`` when pretty);
  a ``permalink`` in front matter wins; ``baseurl`` comes first (``relative_url``).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from studykb.model import Document
from studykb.parse.site_urls import of_page, rendered
from studykb.vault.flavour import Site, reading

_POST = re.compile(r"^(\d{4})-(\d{2})-(\d{2})-(.+)$")
_TOKEN = re.compile(r":([a-z_]+)")
#: What Hugo's ``.RelPermalink`` leaves unescaped (``中文 笔记.md`` is ``%E4%B8%AD%E6%96%87-...``).
_HUGO_SAFE = "-._~!$&'()*+,;=:@/%"
#: What Jekyll leaves unescaped in a URL made from file names (``Jekyll::URL.escape_path``).
_JEKYLL_SAFE = "-._~!$&'()*+,;=:@/"
#: Generators whose pages this module places.
GENERATORS = ("hugo", "jekyll")


@dataclass(frozen=True)
class SitePages:
    """The pages of one site; ``docs``: the vault's documents by key (for their front matter)."""

    site: Site
    docs: Mapping[str, Document]

    # -- keys ------------------------------------------------------------------------------
    def root(self, path: str) -> str:
        """The content folder (Hugo) or source (Jekyll) holding ``path``."""
        best = ""
        for folder in self.site.content_dirs:
            if folder != "." and path.startswith(folder + "/") and len(folder) > len(best):
                best = folder
        return best

    def key(self, key: str, path: str) -> str:
        """The page's path as the generator names it (``docs/install.md``)."""
        root = self.root(path)
        rel = path[len(root) + 1 :] if root else path
        return rel + key[len(path) :]  # a course unit keeps its "#unit"

    def language(self, path: str) -> str:
        """The language of the content folder holding ``path`` (``""`` for the default)."""
        root = self.root(path)
        for lang, folder in self.site.language_dirs.items():
            if folder == root and lang.lower() != self.site.default_language.lower():
                return lang
        return ""

    def language_key(self, path: str, name: str) -> str:
        lang = self.language(path)
        return f"{lang}/{name}" if lang else name

    # -- URLs ------------------------------------------------------------------------------
    def shown(self, path: str) -> bool:
        """Whether the generator writes the page (Hugo: no draft, ``build.render: never``,
        expired page), so that a link to it can lead somewhere."""
        if self.site.generator != "hugo":
            return True
        return rendered(self.docs[path].meta if path in self.docs else {})

    def href(self, key: str, path: str) -> str:
        """The URL the generator gives the page (site-absolute, with the base path)."""
        meta = self.docs[path].meta if path in self.docs else {}
        rel = self.key(path, path)
        if self.site.generator == "hugo":  # percent-encoded as .RelPermalink is
            url, _names = of_page(path, meta, reading(self.site))
            url = quote(url, safe=_HUGO_SAFE)
        else:
            url = _jekyll_url(rel, meta, self.site)
        anchor = key[len(path) + 1 :] if key != path else ""
        return _based(self.site.base_path, url) + (f"#{anchor}" if anchor else "")


def _based(base: str, url: str) -> str:
    return base.rstrip("/") + "/" + url.lstrip("/") if base not in ("", "/") else url


def _jekyll_url(rel: str, meta: Mapping[str, Any], site: Site) -> str:
    """The URL Jekyll gives a page: a ``permalink`` as written, else one made from the file's
    path (percent-encoded as Jekyll does: ``My Setup.md`` is ``My%20Setup.html``)."""
    if isinstance(meta.get("permalink"), str) and meta["permalink"].strip():
        return "/" + str(meta["permalink"]).strip().lstrip("/")
    return quote(_jekyll_path(rel, meta, site), safe=_JEKYLL_SAFE)


def _jekyll_path(rel: str, meta: Mapping[str, Any], site: Site) -> str:
    style = site.permalinks.get("*", "date")
    pretty = site.pretty_urls
    folder, name = posixpath.split(rel)
    stem = name[:-3] if name.lower().endswith(".md") else name
    post = _POST.match(stem)
    if folder.split("/")[-1] == "_posts" and post:
        year, month, day, title = post.groups()
        categories = _categories(meta)
        parts = [*categories, year, month, day, title]
        if style not in ("date", "pretty"):
            values = {
                "year": year,
                "month": month,
                "day": day,
                "title": title,
                "categories": "/".join(categories),
                "i_month": str(int(month)),
                "i_day": str(int(day)),
                "short_year": year[2:],
            }
            out = _TOKEN.sub(lambda m: values.get(m.group(1), m.group(0)), style)
            return "/" + re.sub("/+", "/", out).lstrip("/")
        return "/" + "/".join(parts) + ("/" if pretty else ".html")
    if stem.lower() == "index":
        return "/" + folder + "/" if folder else "/"
    return "/" + "/".join(p for p in (folder, stem) if p) + ("/" if pretty else ".html")


def _categories(meta: Mapping[str, Any]) -> list[str]:
    value = meta.get("categories", meta.get("category"))
    if isinstance(value, str):
        return [v for v in value.split() if v]
    if isinstance(value, list):
        return [str(v) for v in value if str(v).strip()]
    return []
