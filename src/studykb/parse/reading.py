"""How to read a vault's Markdown the way its site generator renders it.

A :class:`Reading` is the part of a detected site (``vault/flavour.py``) that parsing needs:
which plugins run, how heading anchors are made, where site-absolute links start and how
wikilinks are ordered. It is plain, frozen and picklable, so worker processes get it with
each file, and its :meth:`~Reading.digest` tells the state when every file must be read again.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
from dataclasses import asdict, dataclass
from typing import Any

#: How Obsidian's Excalidraw plugin names a drawing: Markdown that is not a note.
DRAWING = ".excalidraw.md"
#: File names of pages that stand for their folder (Hugo/Zola bundles and sections, READMEs).
INDEX_STEMS = ("index", "_index", "readme")


@dataclass(frozen=True)
class Reading:
    """The generator rules one vault is read with (the default: a GitHub repository)."""

    #: The generator's name (``vault.flavour.GENERATORS``).
    generator: str = "github"
    #: The ``parse.slugs`` flavour of heading anchors.
    heading_flavour: str = "github"
    #: Options of that flavour, as sorted (name, value) pairs.
    heading_options: tuple[tuple[str, Any], ...] = ()
    #: Content folders (vault-relative, ``"."`` for the vault itself), the first the default.
    content_dirs: tuple[str, ...] = (".",)
    #: (language code, content folder) of a multilingual Hugo site.
    language_dirs: tuple[tuple[str, str], ...] = ()
    #: The language served at the site root (``""`` when there is none).
    default_language: str = ""
    #: ``[[a|b]]`` means label ``a``, target ``b`` (Dendron).
    label_first: bool = False
    #: A relative link without ``.md`` starts from the page's URL (``/docs/install/``), not its
    #: file's folder: Hugo and Zola serve ``docs/install.md`` as a folder.
    page_urls: bool = False
    #: Read ``{{< >}}`` / ``{{% %}}`` shortcodes (Hugo).
    shortcodes: bool = False
    #: Folders served at the site root (Hugo's and Zola's ``static/``): where ``/x.png`` is.
    static_dirs: tuple[str, ...] = ()
    #: Hugo's ``[permalinks]`` for pages, as sorted (section, pattern) pairs.
    permalinks: tuple[tuple[str, str], ...] = ()
    #: Hugo's ``uglyURLs``.
    ugly_urls: bool = False
    #: Hugo's ``disablePathToLower``.
    keep_case: bool = False
    #: Every language of a Hugo site (``post.zh.md`` is the ``zh`` page ``post``).
    languages: tuple[str, ...] = ()
    #: Hugo's nested sections (``notes/ml`` holding an ``_index.md``), where ``:sections``
    #: in a permalink needs them.
    sections: tuple[str, ...] = ()
    #: Hugo's taxonomies (``/tags/x/`` is a list Hugo makes, not a page of the notes).
    taxonomies: tuple[str, ...] = ()
    #: The site renders links with a hook of its own: a relative page link may mean
    #: anything to it, so only site-absolute links are judged.
    link_hook: bool = False
    #: mkdocs' ``markdown_extensions`` (``footnotes``: ``#fn:1`` and ``#fnref:1`` anchors).
    extensions: tuple[str, ...] = ()
    #: (vault path, title) of the pages mkdocs' ``nav`` names: the page's title.
    nav_titles: tuple[tuple[str, str], ...] = ()
    #: Read pymdownx.snippets' ``--8<--`` lines (mkdocs with the extension listed).
    snippets: bool = False
    #: pymdownx.tabbed's ``slugify`` options, sorted (``slugify``, ``case``, ``separator``,
    #: ``combine_header_slug``...): each ``=== "Tab"`` has an id then; empty: none.
    tab_ids: tuple[tuple[str, Any], ...] = ()
    #: ``status`` values that are the theme's page status (Material for MkDocs: ``new``,
    #: ``deprecated`` and the keys of ``extra.status``), not a reading status.
    theme_statuses: tuple[str, ...] = ()
    #: Folders (vault-relative) included files are looked up from: Hugo's project folder,
    #: then its content folders; pymdownx.snippets' ``base_path``.
    include_bases: tuple[str, ...] = ()

    @property
    def site_urls(self) -> bool:
        """Pages are named by the URL the generator gives them (Hugo: ``slug``, ``url``,
        ``[permalinks]``), so a site-absolute link is looked up among those URLs."""
        return self.generator == "hugo"

    @property
    def footnotes(self) -> bool:
        """``[^1]: ...`` is a footnote (GFM, Obsidian, Hugo, Zola, Quartz, kramdown; mkdocs
        with its ``footnotes`` extension), not a link reference definition."""
        return self.generator != "mkdocs" or "footnotes" in self.extensions

    @property
    def definition_ids(self) -> bool:
        """Definition-list terms get ids (Hugo's ``autoDefinitionTermID``)."""
        return self.heading_flavour == "hugo" and bool(self.options.get("definition_terms"))

    @property
    def options(self) -> dict[str, Any]:
        """The heading options as keyword arguments of ``parse.slugs``."""
        return dict(self.heading_options)

    def digest(self) -> str:
        """Changes whenever any rule changes (the state then reads every file again)."""
        text = json.dumps(asdict(self), sort_keys=True, default=str)
        return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()

    def content_root(self, path: str) -> str:
        """The content folder holding the file at ``path`` (the deepest), else the first."""
        best = ""
        for folder in self.content_dirs:
            if folder != "." and path.startswith(folder + "/") and len(folder) > len(best):
                best = folder
        if best:
            return best
        return self.content_dirs[0] if self.content_dirs else "."

    def language_root(self, lang: str) -> str | None:
        """The content folder of language ``lang``, or None."""
        for code, folder in self.language_dirs:
            if code.lower() == lang.lower():
                return folder
        return None

    def site_path(self, url_path: str, from_path: str) -> str:
        """The vault path a site-absolute link names (``/docs/x/`` -> ``content/en/docs/x``).

        With languages, ``/zh/docs/x/`` is in the ``zh`` folder and ``/docs/x/`` in the default
        language's; otherwise the path starts in the content folder of the linking file.
        """
        rest = url_path.lstrip("/")
        root = self.content_root(from_path)
        if self.language_dirs:
            head, _, tail = rest.partition("/")
            own = self.language_root(head)
            if own is not None and head.lower() != self.default_language.lower():
                root, rest = own, tail
            else:
                root = self.language_root(self.default_language) or self.content_dirs[0]
        return _join(root, rest)

    def page_folder(self, path: str) -> str:
        """The folder relative links start from: the page's URL folder where pages are
        served as folders (``docs/install.md`` -> ``docs/install``), else the file's folder."""
        folder = posixpath.dirname(path)
        if not self.page_urls:
            return folder
        stem = posixpath.basename(path).rsplit(".", 1)[0].lower()
        return folder if stem in INDEX_STEMS else path.rsplit(".", 1)[0]


def _join(root: str, rest: str) -> str:
    if root in ("", "."):
        return rest
    return f"{root}/{rest}" if rest else root


#: How a plain folder of notes or a repository is read.
GITHUB = Reading()


def checkable(anchor: str) -> bool:
    """Whether ``#anchor`` should name a heading: not an Obsidian block (``#^id``), not empty,
    not a text fragment (``#:~:text=``)."""
    anchor = anchor.strip()
    return bool(anchor) and not anchor.startswith(("^", ":~:"))
