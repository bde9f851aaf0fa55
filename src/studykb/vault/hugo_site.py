"""Hugo's configuration: where a Hugo site's pages are and how Hugo names them.

Hugo's configuration (gohugo.io/getting-started/configuration/): keys are case-insensitive;
``config/_default/`` holds ``hugo.toml`` (or ``config.toml``) and one file per root key
(``languages.toml``, ``params.toml``, ``menus.en.toml``); ``contentDir`` may be set per
language under ``[languages.xx]``; ``[[module.mounts]]`` with ``target = "content"`` or
``"static..."`` replace the default ``content/`` and ``static/`` mounts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studykb.vault.siteconf import (
    ConfigWarning,
    Site,
    base_path,
    clean_dir,
    load,
    lower_keys,
    merge,
    relative,
    table_of,
    text_of,
)

HUGO_FILES = ("hugo.toml", "hugo.yaml", "hugo.yml", "hugo.json")
CONFIG_FILES = ("config.toml", "config.yaml", "config.yml", "config.json")
#: Root keys (lower case) only a Hugo configuration has.
_HUGO_KEYS = frozenset(
    {
        "baseurl",
        "contentdir",
        "theme",
        "params",
        "languages",
        "defaultcontentlanguage",
        "languagecode",
        "module",
        "markup",
        "taxonomies",
        "menu",
        "menus",
        "permalinks",
        "outputs",
        "paginate",
        "pagination",
        "enablerobotstxt",
        "uglyurls",
        "staticdir",
        "publishdir",
        "enableemoji",
        "summarylength",
        "disablekinds",
    }
)


def hugo_config(root: Path, warnings: list[ConfigWarning]) -> tuple[dict[str, Any], str | None]:
    """Hugo's merged configuration (keys lower-cased) and the main file's name."""
    config: dict[str, Any] = {}
    main: str | None = None
    for name in (*HUGO_FILES, *CONFIG_FILES):
        path = root / name
        if path.is_file():
            main = name
            config = lower_keys(load(root, path, warnings))
            break
    default_dir = root / "config" / "_default"
    if default_dir.is_dir():
        merge(config, _config_dir(root, default_dir, warnings))
        if main is None:
            main = relative(root, default_dir)
    return config, main


def _config_dir(root: Path, folder: Path, warnings: list[ConfigWarning]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    try:
        files = sorted(
            p
            for p in folder.iterdir()
            if p.is_file() and p.suffix.lower() in (".toml", ".yaml", ".yml", ".json")
        )
    except OSError as exc:
        warnings.append(ConfigWarning(relative(root, folder), None, f"cannot list: {exc}"))
        return merged
    for path in files:
        data = lower_keys(load(root, path, warnings))
        key = path.name.split(".", 1)[0].lower()
        if key in ("hugo", "config"):
            merge(merged, data)
        elif key == "menus" and path.name.count(".") > 1:  # menus.en.toml
            lang = path.name.split(".")[1].lower()
            merge(merged, {"languages": {lang: {"menus": data}}})
        else:
            merge(merged, {key: data})
    return merged


def looks_like_hugo(config: Mapping[str, Any], root: Path) -> bool:
    if not _HUGO_KEYS.intersection(config):
        return False
    content = text_of(config.get("contentdir")) or "content"
    return (root / clean_dir(content)).is_dir() or bool(_language_dirs(config))


def _language_dirs(config: Mapping[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for lang, settings in table_of(config.get("languages")).items():
        folder = text_of(table_of(settings).get("contentdir"))
        if folder:
            out[str(lang)] = clean_dir(folder)
    return out


def _mounts(config: Mapping[str, Any]) -> list[dict[str, Any]]:
    mounts = table_of(config.get("module")).get("mounts")
    return [m for m in mounts if isinstance(m, dict)] if isinstance(mounts, list) else []


def hugo_site(root: Path, override: bool) -> Site:
    """A Hugo site: its content and static folders (module mounts, else ``contentDir``,
    the languages' and ``staticDir``), heading options and URLs."""
    warnings: list[ConfigWarning] = []
    config, main = hugo_config(root, warnings)
    default_lang = (text_of(config.get("defaultcontentlanguage")) or "en").lower()
    site_dir = clean_dir(text_of(config.get("contentdir")) or "content")
    language_dirs = _language_dirs(config)
    mounts = _hugo_mounts(config)
    for lang, folder in mounts.languages:
        language_dirs.setdefault(lang, folder)
    content = mounts.content or _hugo_content_dirs(config, site_dir, language_dirs)
    static = mounts.static
    if not static and not mounts.static_mounts:
        static = _static_dirs(config)
    if override and not (root / site_dir).is_dir() and not language_dirs:
        warnings.append(ConfigWarning(main or ".", None, f"no content folder {site_dir}/"))
    return Site(
        root=root,
        generator="hugo",
        content_dirs=tuple(content),
        language_dirs=language_dirs,
        default_language=default_lang,
        heading_flavour="hugo",
        heading_options=_hugo_heading_options(config),
        static_dirs=tuple(static),
        static_mounts=tuple(mounts.static_mounts),
        pretty_urls=True,
        ugly_urls=config.get("uglyurls") is True,
        permalinks=_permalinks(config),
        keep_case=config.get("disablepathtolower") is True,
        languages=tuple(lang.lower() for lang in _languages(config)),
        sections=_nested_sections(root, content, _permalinks(config)),
        taxonomies=_taxonomies(config),
        link_hook=_link_hook(root, config),
        base_path=base_path(config.get("baseurl")),
        config_file=main,
        warnings=tuple(warnings),
        include_bases=(".", *content),
    )


@dataclass
class _Mounts:
    """Where Hugo's ``[[module.mounts]]`` put folders, in the order they are listed."""

    #: Folders mounted as (or inside) ``content``.
    content: list[str] = field(default_factory=list)
    #: Folders mounted as ``static``.
    static: list[str] = field(default_factory=list)
    #: (folder, URL prefix) of folders mounted inside ``static``.
    static_mounts: list[tuple[str, str]] = field(default_factory=list)
    #: (language code, folder) of content mounts with a ``lang``.
    languages: list[tuple[str, str]] = field(default_factory=list)


def _hugo_mounts(config: Mapping[str, Any]) -> _Mounts:
    """What the mounts put where (a mount without a source or target is skipped)."""
    out = _Mounts()
    for mount in _mounts(config):
        source, target = text_of(mount.get("source")), text_of(mount.get("target"))
        if not source or not target:
            continue
        target_dir = clean_dir(target)
        if target_dir == "content" or target_dir.startswith("content/"):
            out.content.append(clean_dir(source))
            lang = text_of(mount.get("lang"))
            if lang and target_dir == "content":
                out.languages.append((lang.lower(), clean_dir(source)))
        elif target_dir == "static":
            out.static.append(clean_dir(source))
        elif target_dir.startswith("static/"):
            out.static_mounts.append((clean_dir(source), "/" + target_dir[len("static/") :]))
    return out


def _hugo_content_dirs(
    config: Mapping[str, Any], site_dir: str, language_dirs: Mapping[str, str]
) -> list[str]:
    """The content folders without content mounts: ``contentDir`` and each language's, or
    only the languages' when every language has its own."""
    content = list(dict.fromkeys([site_dir, *language_dirs.values()]))
    if language_dirs and all(lang in language_dirs for lang in _languages(config)):
        content = list(dict.fromkeys(language_dirs.values()))
    return content


def _languages(config: Mapping[str, Any]) -> list[str]:
    return [str(lang) for lang in table_of(config.get("languages"))]


def _static_dirs(config: Mapping[str, Any]) -> list[str]:
    value = config.get("staticdir")
    if isinstance(value, str) and value.strip():
        return [clean_dir(value)]
    if isinstance(value, list):
        dirs = [clean_dir(v) for v in value if isinstance(v, str) and v.strip()]
        if dirs:
            return dirs
    return ["static"]


def _hugo_heading_options(config: Mapping[str, Any]) -> dict[str, Any]:
    parser = table_of(table_of(table_of(config.get("markup")).get("goldmark")).get("parser"))
    options: dict[str, Any] = {}
    id_type = text_of(parser.get("autoheadingidtype"))
    if id_type and id_type.lower() in ("github", "github-ascii", "blackfriday"):
        options["id_type"] = id_type.lower()
    elif parser.get("autoheadingidasciionly") is True:  # before Hugo 0.62
        options["id_type"] = "github-ascii"
    attribute = table_of(parser.get("attribute"))
    if attribute.get("title") is False:
        options["attributes"] = False
    if parser.get("autodefinitiontermid") is True:
        options["definition_terms"] = True
    if parser.get("autoheadingid") is False:
        options["auto_ids"] = False
    return options


def _nested_sections(
    root: Path, content: list[str], patterns: Mapping[str, str]
) -> tuple[str, ...]:
    """The folders of the content that Hugo makes sections below the first level (those
    holding an ``_index.md``): only ``:sections`` in a permalink needs them."""
    if not any(":sections" in p for p in patterns.values()):
        return ()
    found: set[str] = set()
    for folder in content:
        base = root / folder
        for index in base.glob("*/**/_index*.md"):
            found.add(index.parent.relative_to(base).as_posix())
    return tuple(sorted(found))


def _taxonomies(config: Mapping[str, Any]) -> tuple[str, ...]:
    """The URL folders of Hugo's taxonomies: ``[taxonomies]`` values, else tags and
    categories."""
    table = config.get("taxonomies")
    if not isinstance(table, dict):
        return ("categories", "tags")
    return tuple(sorted(str(v).lower() for v in table.values() if isinstance(v, str)))


def _permalinks(config: Mapping[str, Any]) -> dict[str, str]:
    """Section -> pattern for its pages: ``[permalinks]``, or its ``page`` table (Hugo
    0.120 on, where ``section``, ``term`` and ``taxonomy`` tables name list pages)."""
    table = table_of(config.get("permalinks"))
    pages = {k: v for k, v in table.items() if isinstance(v, str)}
    pages.update({k: v for k, v in table_of(table.get("page")).items() if isinstance(v, str)})
    return {str(k): str(v) for k, v in pages.items()}


#: Where Hugo looks for a link render hook, below the project or a theme folder.
_LINK_HOOKS = (
    "layouts/_markup/render-link.html",
    "layouts/_default/_markup/render-link.html",
)


def _link_hook(root: Path, config: dict[str, Any]) -> bool:
    """Whether the site (or its theme) renders links with a hook of its own."""
    folders = [root]
    theme = config.get("theme")
    for name in theme if isinstance(theme, list) else [theme]:
        if isinstance(name, str) and name and "/" not in name.strip("/") and ".." not in name:
            folders.append(root / "themes" / name)
    return any((folder / hook).is_file() for folder in folders for hook in _LINK_HOOKS)
