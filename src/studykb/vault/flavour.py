"""Which site generator a folder is written for, and what that means for reading it.

``detect(root)`` looks at the files a generator needs and returns a :class:`Site`: the
generator, its content folder(s), the heading-anchor flavour (see ``parse/slugs.py``), the
folders whose files are served at the site root, Dendron's label-first wikilinks, and URL
hints. Pure: it reads configuration files and never raises for a bad one; it falls back to
defaults and says what it skipped in ``Site.warnings``.

Detection, first match wins (``override=`` skips it):

1. ``dendron.yml`` -> dendron (notes are ``a.b.c.md`` in the vaults it lists);
2. ``quartz.config.ts`` -> quartz (content in ``content/``);
3. ``hugo.toml|yaml|yml|json``, or ``config.*`` / ``config/_default/`` with Hugo keys
   (``baseURL``, ``contentDir``, ``theme``, ``params``...) and a content folder -> hugo;
4. ``config.toml`` / ``zola.toml`` with ``base_url`` and ``[markdown]``, ``compile_sass`` or
   ``[extra]``, and ``content/`` -> zola;
5. ``.obsidian/`` -> obsidian;
6. ``_config.yml`` -> jekyll;
7. anything else -> github (a repository of Markdown files).

Hugo's configuration is read in ``vault/hugo_site.py``; :class:`Site` and the readers of
configuration files are in ``vault/siteconf.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from studykb.config import GENERATORS as _GENERATORS
from studykb.config import Config
from studykb.parse.reading import Reading
from studykb.vault.hugo_site import (
    CONFIG_FILES,
    HUGO_FILES,
    hugo_config,
    hugo_site,
    looks_like_hugo,
)
from studykb.vault.mkdocs_site import mkdocs_site
from studykb.vault.scope import of_site
from studykb.vault.site_folder import rebased, site_folder
from studykb.vault.siteconf import (
    ConfigWarning,
    Site,
    base_path,
    clean_dir,
    load,
    table_of,
    text_of,
)

__all__ = [
    "GENERATORS",
    "HEADING_FLAVOURS",
    "ConfigWarning",
    "Site",
    "detect",
    "of_config",
    "reading",
]

#: The generators ``detect`` can name.
GENERATORS = _GENERATORS

#: The heading-anchor flavour of each generator (``parse.slugs.FLAVOURS``): Dendron, Quartz
#: (rehype-slug), Jekyll (kramdown's GFM ids) and plain repositories slug as GitHub does.
HEADING_FLAVOURS = MappingProxyType(
    {
        "hugo": "hugo",
        "zola": "zola",
        "obsidian": "obsidian",
        "dendron": "github",
        "quartz": "github",
        "mkdocs": "mkdocs",
        "jekyll": "github",
        "github": "github",
    }
)


# --- Zola -------------------------------------------------------------------------------------


def _zola_config_file(root: Path) -> Path | None:
    for name in ("zola.toml", "config.toml"):
        if (root / name).is_file():
            return root / name
    return None


def _looks_like_zola(config: Mapping[str, Any], root: Path) -> bool:
    if "base_url" not in config or not (root / "content").is_dir():
        return False
    return any(
        key in config
        for key in (
            "markdown",
            "compile_sass",
            "extra",
            "slugify",
            "taxonomies",
            "build_search_index",
        )
    )


def _zola_site(
    root: Path, config: Mapping[str, Any], main: str | None, warnings: list[ConfigWarning]
) -> Site:
    strategy = text_of(table_of(config.get("slugify")).get("anchors"))
    options = {"strategy": strategy} if strategy in ("on", "safe", "off") else {}
    return Site(
        root=root,
        generator="zola",
        content_dirs=("content",),
        default_language=text_of(config.get("default_language")) or "en",
        heading_flavour="zola",
        heading_options=options,
        static_dirs=("static",),
        pretty_urls=True,
        base_path=base_path(config.get("base_url")),
        config_file=main,
        warnings=tuple(warnings),
    )


# --- Dendron, Obsidian, Quartz, Jekyll, GitHub ---------------------------------------------------


def _dendron_site(root: Path) -> Site:
    warnings: list[ConfigWarning] = []
    config = load(root, root / "dendron.yml", warnings)
    vaults = table_of(config.get("workspace")).get("vaults", config.get("vaults"))
    dirs: list[str] = []
    if isinstance(vaults, list):
        for vault in vaults:
            fs_path = text_of(table_of(vault).get("fsPath"))
            if fs_path:
                dirs.append(clean_dir(fs_path))
    dirs = [d for d in dirs if (root / d).is_dir()] or ["."]
    # Dendron resolves /assets/... against a vault's root
    return Site(
        root=root,
        generator="dendron",
        content_dirs=tuple(dirs),
        heading_flavour="github",
        static_dirs=tuple(dirs),
        label_first=True,
        config_file="dendron.yml",
        warnings=tuple(warnings),
    )


def _jekyll_site(root: Path) -> Site:
    warnings: list[ConfigWarning] = []
    config = load(root, root / "_config.yml", warnings)
    source = clean_dir(text_of(config.get("source")) or ".")
    permalink = text_of(config.get("permalink"))
    return Site(
        root=root,
        generator="jekyll",
        content_dirs=(source,),
        heading_flavour="github",
        static_dirs=(source,),
        pretty_urls=permalink == "pretty" or bool(permalink and permalink.endswith("/")),
        permalinks={"*": permalink} if permalink else {},
        base_path=base_path(text_of(config.get("baseurl")) or "/"),
        config_file="_config.yml",
        warnings=tuple(warnings),
        scope=of_site(root, "jekyll", (source,), config),
    )


def _simple_site(root: Path, generator: str) -> Site:
    if generator == "quartz":
        content = ("content",) if (root / "content").is_dir() else (".",)
        return Site(
            root=root,
            generator="quartz",
            content_dirs=content,
            heading_flavour="github",
            pretty_urls=True,
            config_file="quartz.config.ts" if (root / "quartz.config.ts").is_file() else None,
        )
    if generator == "obsidian":
        return Site(
            root=root, generator="obsidian", content_dirs=(".",), heading_flavour="obsidian"
        )
    # a repository: GitHub resolves /path against the repository's root
    return Site(
        root=root,
        generator="github",
        content_dirs=(".",),
        heading_flavour="github",
        static_dirs=(".",),
    )


# --- detection ----------------------------------------------------------------------------


def detect(root: Path, override: str | None = None) -> Site:
    """What ``root`` is written for; ``override`` names the generator instead of guessing.

    Never raises for unreadable or malformed configuration: ``Site.warnings`` says which
    file (and line) was skipped.
    """
    root = Path(root)
    if override is not None:
        name = override.strip().lower()
        if name not in GENERATORS:
            raise ValueError(f"unknown generator {override!r}; one of {', '.join(GENERATORS)}")
        folder = site_folder(root, name)
        reason = f'generator = "{name}" in studykb.toml'
        if folder == ".":
            return replace(_scoped(_build(root, name, override=True)), reason=reason)
        site = rebased(_scoped(_build(root / folder, name, override=True)), root, folder)
        return replace(site, reason=f"{reason}, its site in {folder}/")
    scratch: list[ConfigWarning] = []
    name, why = _guess(root, scratch)
    site = replace(_scoped(_build(root, name, override=False)), reason=why)
    missed = [w for w in dict.fromkeys(scratch) if w not in site.warnings]
    return replace(site, warnings=site.warnings + tuple(missed)) if missed else site


def _scoped(site: Site) -> Site:
    """The site with the scope of its documents (builders that read more set their own)."""
    if site.scope is not None:
        return site
    return replace(site, scope=of_site(site.root, site.generator, site.content_dirs, {}))


def _guess(root: Path, scratch: list[ConfigWarning]) -> tuple[str, str]:
    """The generator's name and the file that says so; configuration faults met on the way
    go to ``scratch``."""
    if (root / "dendron.yml").is_file():
        return "dendron", "dendron.yml"
    if (root / "quartz.config.ts").is_file():
        return "quartz", "quartz.config.ts"
    for name in HUGO_FILES:
        if (root / name).is_file():
            return "hugo", name
    zola_file = _zola_config_file(root)
    if zola_file is not None:
        config = load(root, zola_file, scratch)
        if _looks_like_zola(config, root):
            return "zola", f"{zola_file.name} with Zola's settings"
    if (
        any((root / name).is_file() for name in CONFIG_FILES)
        or (root / "config" / "_default").is_dir()
    ):
        config, main = hugo_config(root, scratch)
        if looks_like_hugo(config, root):
            return "hugo", f"{main} with Hugo's settings"
    for name in ("mkdocs.yml", "mkdocs.yaml"):
        if (root / name).is_file():
            return "mkdocs", name
    if (root / ".obsidian").is_dir():
        return "obsidian", ".obsidian/"
    if (root / "_config.yml").is_file():
        return "jekyll", "_config.yml"
    if (root / "root.schema.yml").is_file():  # a Dendron vault kept without its workspace
        return "dendron", "root.schema.yml"
    return "github", "no site generator's configuration found"


def _build(root: Path, generator: str, override: bool) -> Site:
    if generator == "hugo":
        return hugo_site(root, override)
    if generator == "zola":
        warnings: list[ConfigWarning] = []
        zola_file = _zola_config_file(root)
        config = load(root, zola_file, warnings) if zola_file is not None else {}
        main = zola_file.name if zola_file is not None else None
        return _zola_site(root, config, main, warnings)
    if generator == "dendron":
        if (root / "dendron.yml").is_file():
            return _dendron_site(root)
        return Site(
            root=root,
            generator="dendron",
            heading_flavour="github",
            static_dirs=(".",),
            label_first=True,
        )
    if generator == "mkdocs":
        return mkdocs_site(root)
    if generator == "jekyll" and (root / "_config.yml").is_file():
        return _jekyll_site(root)
    if generator == "jekyll":
        return Site(root=root, generator="jekyll", heading_flavour="github", static_dirs=(".",))
    return _simple_site(root, generator)


# --- what parsing and resolution need ------------------------------------------------------


def reading(site: Site, headings: str | None = None) -> Reading:
    """The parse rules of ``site``; ``headings`` overrides its heading-anchor rules."""
    flavour = headings or site.heading_flavour
    options = dict(site.heading_options) if flavour == site.heading_flavour else {}
    languages = dict(site.language_dirs)
    if languages and site.default_language and site.content_dirs:
        # a language without its own contentDir (the default, usually) reads the site's
        languages.setdefault(site.default_language, site.content_dirs[0])
    return Reading(
        generator=site.generator,
        heading_flavour=flavour,
        heading_options=tuple(sorted(options.items())),
        content_dirs=site.content_dirs,
        language_dirs=tuple(sorted(languages.items())),
        default_language=site.default_language,
        label_first=site.label_first,
        page_urls=site.generator in ("hugo", "zola"),
        shortcodes=site.generator == "hugo",
        static_dirs=site.static_dirs,
        permalinks=tuple(sorted(site.permalinks.items())) if site.generator == "hugo" else (),
        ugly_urls=site.ugly_urls,
        keep_case=site.keep_case,
        languages=site.languages,
        sections=site.sections,
        taxonomies=site.taxonomies,
        link_hook=site.link_hook,
        extensions=site.extensions,
        nav_titles=tuple(sorted(site.nav_titles.items())),
        snippets=site.snippets,
        include_bases=site.include_bases,
        tab_ids=tuple(sorted(site.tab_ids.items())),
        theme_statuses=site.theme_statuses,
    )


def of_config(config: Config) -> tuple[Site, Reading]:
    """The site of a vault and its parse rules, as its ``studykb.toml`` asks."""
    site = detect(config.root, config.generator)
    return site, reading(site, config.headings)
