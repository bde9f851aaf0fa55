"""An mkdocs site: its documents, heading ids, footnotes and page titles from ``mkdocs.yml``.

``markdown_extensions`` says how headings get ids: ``toc`` always runs, its ``slugify`` names
a Python function (``!!python/name:pymdownx.slugs.uslugify``, ``!!python/object/apply:
pymdownx.slugs.slugify {kwds: {case: lower}}``) that is never imported: the known ones are
mapped to ``parse/mkdocs_slugs.py``; an unknown one is reported and the default used.
``attr_list`` ids and ``footnotes`` anchors (``#fn:1``, ``#fnref:1``) count only when the
extension is listed. A page's title in ``nav`` is its title, as mkdocs shows it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from studykb.parse.mkdocs_slugs import CASES, NORMAL_FORMS, SLUGIFIERS
from studykb.vault.scope import of_site
from studykb.vault.siteconf import ConfigWarning, Site, base_path, clean_dir, load, text_of


def _extensions(config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Extension name -> its options (a list of names or one-key tables, or a table)."""
    value = config.get("markdown_extensions")
    out: dict[str, dict[str, Any]] = {}
    items = list(value.items()) if isinstance(value, dict) else None
    if items is None:
        items = []
        for item in value if isinstance(value, list) else []:
            if isinstance(item, str):
                items.append((item, {}))
            elif isinstance(item, dict):
                items.extend(item.items())
    for name, options in items:
        out[str(name).removeprefix("markdown.extensions.")] = (
            options if isinstance(options, dict) else {}
        )
    return out


def _slugify(value: Any, name: str, warnings: list[ConfigWarning]) -> dict[str, Any]:
    """The heading options of a ``toc`` ``slugify`` setting, read as data."""
    if value is None or value == "":
        return {}
    # deferred: loads frontmatter and yaml (a value of mkdocs.yml, read with them already)
    from studykb.parse.frontmatter import PythonTag

    known = SLUGIFIERS.get(value.target) if isinstance(value, PythonTag) else None
    if known is None:
        shown = value.target if isinstance(value, PythonTag) else str(value)
        warnings.append(
            ConfigWarning(name, None, f"toc slugify {shown} is not known; ids as toc's default")
        )
        return {}
    kind, _, rest = known.partition(":")
    case, _, encoded = rest.partition(":")
    options: dict[str, Any] = {"slugify": kind}
    if case:
        options["case"] = case
    if encoded:
        options["percent_encode"] = True
    kwds = value.value.get("kwds") if isinstance(value.value, dict) else None
    if value.tag.startswith("object/apply:") and isinstance(kwds, dict):
        if kwds.get("case") in CASES:
            options["case"] = kwds["case"]
        if kwds.get("normalize") in NORMAL_FORMS:
            options["normalize"] = kwds["normalize"]
        if isinstance(kwds.get("percent_encode"), bool):
            options["percent_encode"] = kwds["percent_encode"]
    return options


def heading_options(
    extensions: dict[str, dict[str, Any]], name: str, warnings: list[ConfigWarning]
) -> dict[str, Any]:
    """``parse.slugs`` options of the ``mkdocs`` flavour from the listed extensions."""
    toc = extensions.get("toc", {})
    options = _slugify(toc.get("slugify"), name, warnings)
    separator = toc.get("separator")
    if isinstance(separator, str) and separator:
        options["separator"] = separator
    options["attr_list"] = "attr_list" in extensions
    return options


def nav_titles(nav: Any, docs: str) -> dict[str, str]:
    """Vault path -> the title ``nav`` gives the page (``- Install: guide/install.md``)."""
    out: dict[str, str] = {}
    stack = [nav]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(reversed(item))
        elif isinstance(item, dict):
            for title, value in item.items():
                if isinstance(value, str) and value.lower().endswith((".md", ".markdown")):
                    if "://" not in value:
                        rel = clean_dir(value)
                        out.setdefault(rel if docs == "." else f"{docs}/{rel}", str(title))
                else:
                    stack.append(value)
    return out


def mkdocs_site(root: Path) -> Site:
    """An mkdocs site: ``docs_dir`` (``docs``) less ``exclude_docs``, its ``toc`` ids,
    extensions and ``nav`` titles."""
    warnings: list[ConfigWarning] = []
    name = "mkdocs.yml" if (root / "mkdocs.yml").is_file() else "mkdocs.yaml"
    config = load(root, root / name, warnings) if (root / name).is_file() else {}
    docs = clean_dir(text_of(config.get("docs_dir")) or "docs")
    extensions = _extensions(config)
    return Site(
        root=root,
        generator="mkdocs",
        content_dirs=(docs,),
        heading_flavour="mkdocs",
        heading_options=heading_options(extensions, name, warnings),
        static_dirs=(docs,),
        pretty_urls=config.get("use_directory_urls", True) is not False,
        base_path=base_path(config.get("site_url")),
        config_file=name if (root / name).is_file() else None,
        warnings=tuple(warnings),
        scope=of_site(root, "mkdocs", (docs,), config),
        extensions=tuple(sorted(extensions)),
        nav_titles=nav_titles(config.get("nav"), docs),
        snippets="pymdownx.snippets" in extensions,
        include_bases=snippet_bases(extensions.get("pymdownx.snippets", {})),
        tab_ids=tab_options(extensions, name, warnings),
        theme_statuses=theme_statuses(config),
    )


def theme_statuses(config: dict[str, Any]) -> tuple[str, ...]:
    """The page statuses of Material for MkDocs (``status: new`` in a page's front matter
    puts an icon in the navigation): ``new``, ``deprecated`` and each identifier under
    ``extra.status`` of ``mkdocs.yml``; none for another theme."""
    theme = config.get("theme")
    name = theme.get("name") if isinstance(theme, dict) else theme
    if name != "material":
        return ()
    extra = config.get("extra")
    custom = extra.get("status") if isinstance(extra, dict) else None
    names = {"new", "deprecated", *(custom if isinstance(custom, dict) else ())}
    return tuple(sorted(str(n).lower() for n in names))


def tab_options(
    extensions: dict[str, dict[str, Any]], name: str, warnings: list[ConfigWarning]
) -> dict[str, Any]:
    """How pymdownx.tabbed names a tab (``=== "Title"``): with a ``slugify`` (read as
    toc's is), the title's slug, after the heading above's id when
    ``combine_header_slug``; without one, ``__tabbed_1_1``, nothing a link names."""
    tabbed = extensions.get("pymdownx.tabbed")
    if tabbed is None or not tabbed.get("slugify"):
        return {}
    options = _slugify(tabbed.get("slugify"), name, warnings) or {"slugify": "default"}
    separator = tabbed.get("separator")
    options["separator"] = separator if isinstance(separator, str) and separator else "-"
    options["combine_header_slug"] = tabbed.get("combine_header_slug") is True
    options["emoji"] = "pymdownx.emoji" in extensions
    return options


def snippet_bases(options: dict[str, Any]) -> tuple[str, ...]:
    """pymdownx.snippets' ``base_path`` (a folder or a list; ``"."``, where mkdocs runs: the
    folder of ``mkdocs.yml``)."""
    value = options.get("base_path", ".")
    items = value if isinstance(value, list) else [value]
    return tuple(clean_dir(item) or "." for item in items if isinstance(item, str)) or (".",)
