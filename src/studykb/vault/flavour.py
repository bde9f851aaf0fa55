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

Hugo's configuration (gohugo.io/getting-started/configuration/): keys are case-insensitive;
``config/_default/`` holds ``hugo.toml`` (or ``config.toml``) and one file per root key
(``languages.toml``, ``params.toml``, ``menus.en.toml``); ``contentDir`` may be set per
language under ``[languages.xx]``; ``[[module.mounts]]`` with ``target = "content"`` or
``"static..."`` replace the default ``content/`` and ``static/`` mounts.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

from studykb.config import GENERATORS as _GENERATORS
from studykb.config import Config
from studykb.parse.reading import Reading
from studykb.vault.scope import Scope, of_site

#: The generators ``detect`` can name.
GENERATORS = _GENERATORS

#: The heading-anchor flavour of each generator (``parse.slugs.FLAVOURS``): Dendron, Quartz
#: (rehype-slug), Jekyll (kramdown's GFM ids) and plain repositories slug as GitHub does.
HEADING_FLAVOURS = {
    "hugo": "hugo",
    "zola": "zola",
    "obsidian": "obsidian",
    "dendron": "github",
    "quartz": "github",
    "mkdocs": "github",
    "jekyll": "github",
    "github": "github",
}

_HUGO_FILES = ("hugo.toml", "hugo.yaml", "hugo.yml", "hugo.json")
_CONFIG_FILES = ("config.toml", "config.yaml", "config.yml", "config.json")
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


@dataclass(frozen=True)
class ConfigWarning:
    """A configuration file that could not be read (fully); defaults were used."""

    #: The file, relative to the site root, with ``/``.
    path: str
    #: 1-based line of the fault, where the file format says it.
    line: int | None
    #: What went wrong.
    message: str


@dataclass(frozen=True)
class Site:
    """How to read a folder of Markdown the way its generator renders it."""

    #: The folder detected.
    root: Path
    #: One of :data:`GENERATORS`.
    generator: str
    #: Content folders, relative to ``root`` with ``/`` (``"."`` for the root itself).
    content_dirs: tuple[str, ...] = (".",)
    #: Language code -> its content folder, for multilingual Hugo sites.
    language_dirs: Mapping[str, str] = field(default_factory=dict)
    #: Hugo's ``defaultContentLanguage`` (``""`` when the generator has none).
    default_language: str = ""
    #: The ``parse.slugs`` flavour for heading anchors.
    heading_flavour: str = "github"
    #: Options for ``parse.slugs.anchors`` (``id_type``, ``strategy``...).
    heading_options: Mapping[str, Any] = field(default_factory=dict)
    #: Folders whose files are served at the site root: ``/images/x.png`` is
    #: ``static/images/x.png`` (relative to ``root``).
    static_dirs: tuple[str, ...] = ()
    #: Folders mounted below the site root: (folder, URL prefix), e.g.
    #: ``("assets/images", "/images")`` from a Hugo module mount.
    static_mounts: tuple[tuple[str, str], ...] = ()
    #: True where ``[[a|b]]`` means label ``a``, target ``b`` (Dendron).
    label_first: bool = False
    #: Pages are served as ``/section/slug/`` (Hugo, Zola, Jekyll's ``pretty``).
    pretty_urls: bool = False
    #: Hugo's ``uglyURLs``: ``/section/slug.html``.
    ugly_urls: bool = False
    #: Permalink patterns: Hugo ``[permalinks]`` (section -> pattern), Jekyll ``permalink``
    #: (under the key ``"*"``).
    permalinks: Mapping[str, str] = field(default_factory=dict)
    #: Hugo's ``disablePathToLower``: paths keep the case of file names and titles.
    keep_case: bool = False
    #: Every language of a Hugo site (lower case), its own content folder or not.
    languages: tuple[str, ...] = ()
    #: Hugo's nested sections (folders below the first with an ``_index.md``), relative to
    #: their content folder; found only where a ``[permalinks]`` pattern uses ``:sections``.
    sections: tuple[str, ...] = ()
    #: Hugo's taxonomies (plural names, served as ``/tags/x/``): lists Hugo makes itself.
    taxonomies: tuple[str, ...] = ()
    #: The path part of the site's base URL (``/repo/`` for ``https://x.github.io/repo/``).
    base_path: str = "/"
    #: The configuration file read, relative to ``root`` (None when there is none).
    config_file: str | None = None
    #: Configuration that could not be read.
    warnings: tuple[ConfigWarning, ...] = ()
    #: Which Markdown files are the generator's documents (``vault/scope.py``).
    scope: Scope | None = None


# --- reading configuration files, never raising --------------------------------------------------

_TOML_LINE = re.compile(r"line (\d+)")


def _rel(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def _load(root: Path, path: Path, warnings: list[ConfigWarning]) -> dict[str, Any]:
    """A TOML, YAML or JSON file as a dict; ``{}`` (and a warning) when it cannot be read."""
    rel = _rel(root, path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        warnings.append(ConfigWarning(rel, None, f"cannot read: {exc}"))
        return {}
    suffix = path.suffix.lower()
    # YAML (and python-frontmatter with it) is loaded only for a YAML configuration: every
    # command detects the site, most vaults have none
    from studykb.parse.frontmatter import YAMLError, load_config_yaml

    try:
        if suffix == ".toml":
            data: Any = tomllib.loads(text)
        elif suffix == ".json":
            data = json.loads(text) if text.strip() else {}
        else:
            data = load_config_yaml(text)
    except tomllib.TOMLDecodeError as exc:
        found = _TOML_LINE.search(str(exc))
        warnings.append(
            ConfigWarning(rel, int(found.group(1)) if found else None, f"bad TOML: {exc}")
        )
        return {}
    except json.JSONDecodeError as exc:
        warnings.append(ConfigWarning(rel, exc.lineno, f"bad JSON: {exc.msg}"))
        return {}
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        warnings.append(ConfigWarning(rel, line, f"bad YAML: {problem}"))
        return {}
    except (ValueError, RecursionError) as exc:
        warnings.append(ConfigWarning(rel, None, f"cannot parse: {exc}"))
        return {}
    if data is None:
        return {}
    if not isinstance(data, dict):
        warnings.append(ConfigWarning(rel, None, "not a table of settings; ignored"))
        return {}
    return data


def _lower_keys(value: Any) -> Any:
    """Hugo's keys are case-insensitive: lower-case every mapping key, recursively."""
    if isinstance(value, dict):
        return {str(k).lower(): _lower_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_lower_keys(v) for v in value]
    return value


def _merge(into: dict[str, Any], more: Mapping[str, Any]) -> None:
    for key, value in more.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


def _text(value: Any) -> str | None:
    """A non-empty string setting, else None."""
    return value.strip() if isinstance(value, str) and value.strip() else None


def _table(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _clean_dir(value: str) -> str:
    """A folder setting as a relative posix path (``./content/`` -> ``content``)."""
    path = PurePosixPath(value.replace("\\", "/").strip())
    parts = [p for p in path.parts if p not in (".", "/")]
    return "/".join(parts) or "."


# --- Hugo -------------------------------------------------------------------------------------


def _hugo_config(root: Path, warnings: list[ConfigWarning]) -> tuple[dict[str, Any], str | None]:
    """Hugo's merged configuration (keys lower-cased) and the main file's name."""
    config: dict[str, Any] = {}
    main: str | None = None
    for name in (*_HUGO_FILES, *_CONFIG_FILES):
        path = root / name
        if path.is_file():
            main = name
            config = _lower_keys(_load(root, path, warnings))
            break
    default_dir = root / "config" / "_default"
    if default_dir.is_dir():
        _merge(config, _config_dir(root, default_dir, warnings))
        if main is None:
            main = _rel(root, default_dir)
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
        warnings.append(ConfigWarning(_rel(root, folder), None, f"cannot list: {exc}"))
        return merged
    for path in files:
        data = _lower_keys(_load(root, path, warnings))
        key = path.name.split(".", 1)[0].lower()
        if key in ("hugo", "config"):
            _merge(merged, data)
        elif key == "menus" and path.name.count(".") > 1:  # menus.en.toml
            lang = path.name.split(".")[1].lower()
            _merge(merged, {"languages": {lang: {"menus": data}}})
        else:
            _merge(merged, {key: data})
    return merged


def _looks_like_hugo(config: Mapping[str, Any], root: Path) -> bool:
    if not _HUGO_KEYS.intersection(config):
        return False
    content = _text(config.get("contentdir")) or "content"
    return (root / _clean_dir(content)).is_dir() or bool(_language_dirs(config))


def _language_dirs(config: Mapping[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for lang, settings in _table(config.get("languages")).items():
        folder = _text(_table(settings).get("contentdir"))
        if folder:
            out[str(lang)] = _clean_dir(folder)
    return out


def _mounts(config: Mapping[str, Any]) -> list[dict[str, Any]]:
    mounts = _table(config.get("module")).get("mounts")
    return [m for m in mounts if isinstance(m, dict)] if isinstance(mounts, list) else []


def _hugo_site(root: Path, override: bool) -> Site:
    """A Hugo site: its content and static folders (module mounts, else ``contentDir``,
    the languages' and ``staticDir``), heading options and URLs."""
    warnings: list[ConfigWarning] = []
    config, main = _hugo_config(root, warnings)
    default_lang = (_text(config.get("defaultcontentlanguage")) or "en").lower()
    site_dir = _clean_dir(_text(config.get("contentdir")) or "content")
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
        base_path=_base_path(config.get("baseurl")),
        config_file=main,
        warnings=tuple(warnings),
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
        source, target = _text(mount.get("source")), _text(mount.get("target"))
        if not source or not target:
            continue
        target_dir = _clean_dir(target)
        if target_dir == "content" or target_dir.startswith("content/"):
            out.content.append(_clean_dir(source))
            lang = _text(mount.get("lang"))
            if lang and target_dir == "content":
                out.languages.append((lang.lower(), _clean_dir(source)))
        elif target_dir == "static":
            out.static.append(_clean_dir(source))
        elif target_dir.startswith("static/"):
            out.static_mounts.append((_clean_dir(source), "/" + target_dir[len("static/") :]))
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
    return [str(lang) for lang in _table(config.get("languages"))]


def _static_dirs(config: Mapping[str, Any]) -> list[str]:
    value = config.get("staticdir")
    if isinstance(value, str) and value.strip():
        return [_clean_dir(value)]
    if isinstance(value, list):
        dirs = [_clean_dir(v) for v in value if isinstance(v, str) and v.strip()]
        if dirs:
            return dirs
    return ["static"]


def _hugo_heading_options(config: Mapping[str, Any]) -> dict[str, Any]:
    parser = _table(_table(_table(config.get("markup")).get("goldmark")).get("parser"))
    options: dict[str, Any] = {}
    id_type = _text(parser.get("autoheadingidtype"))
    if id_type and id_type.lower() in ("github", "github-ascii", "blackfriday"):
        options["id_type"] = id_type.lower()
    elif parser.get("autoheadingidasciionly") is True:  # before Hugo 0.62
        options["id_type"] = "github-ascii"
    attribute = _table(parser.get("attribute"))
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
    table = _table(config.get("permalinks"))
    pages = {k: v for k, v in table.items() if isinstance(v, str)}
    pages.update({k: v for k, v in _table(table.get("page")).items() if isinstance(v, str)})
    return {str(k): str(v) for k, v in pages.items()}


def _base_path(url: Any) -> str:
    if not isinstance(url, str) or not url.strip():
        return "/"
    path = urlsplit(url.strip()).path or "/"
    return path if path.endswith("/") else path + "/"


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
    strategy = _text(_table(config.get("slugify")).get("anchors"))
    options = {"strategy": strategy} if strategy in ("on", "safe", "off") else {}
    return Site(
        root=root,
        generator="zola",
        content_dirs=("content",),
        default_language=_text(config.get("default_language")) or "en",
        heading_flavour="zola",
        heading_options=options,
        static_dirs=("static",),
        pretty_urls=True,
        base_path=_base_path(config.get("base_url")),
        config_file=main,
        warnings=tuple(warnings),
    )


# --- Dendron, Obsidian, Quartz, Jekyll, GitHub ---------------------------------------------------


def _dendron_site(root: Path) -> Site:
    warnings: list[ConfigWarning] = []
    config = _load(root, root / "dendron.yml", warnings)
    vaults = _table(config.get("workspace")).get("vaults", config.get("vaults"))
    dirs: list[str] = []
    if isinstance(vaults, list):
        for vault in vaults:
            fs_path = _text(_table(vault).get("fsPath"))
            if fs_path:
                dirs.append(_clean_dir(fs_path))
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
    config = _load(root, root / "_config.yml", warnings)
    source = _clean_dir(_text(config.get("source")) or ".")
    permalink = _text(config.get("permalink"))
    return Site(
        root=root,
        generator="jekyll",
        content_dirs=(source,),
        heading_flavour="github",
        static_dirs=(source,),
        pretty_urls=permalink == "pretty" or bool(permalink and permalink.endswith("/")),
        permalinks={"*": permalink} if permalink else {},
        base_path=_base_path(_text(config.get("baseurl")) or "/"),
        config_file="_config.yml",
        warnings=tuple(warnings),
        scope=of_site(root, "jekyll", (source,), config),
    )


def _mkdocs_site(root: Path) -> Site:
    """An mkdocs site: ``docs_dir`` (``docs``) less ``exclude_docs``."""
    warnings: list[ConfigWarning] = []
    name = "mkdocs.yml" if (root / "mkdocs.yml").is_file() else "mkdocs.yaml"
    config = _load(root, root / name, warnings) if (root / name).is_file() else {}
    docs = _clean_dir(_text(config.get("docs_dir")) or "docs")
    return Site(
        root=root,
        generator="mkdocs",
        content_dirs=(docs,),
        heading_flavour="github",
        static_dirs=(docs,),
        pretty_urls=config.get("use_directory_urls", True) is not False,
        base_path=_base_path(config.get("site_url")),
        config_file=name if (root / name).is_file() else None,
        warnings=tuple(warnings),
        scope=of_site(root, "mkdocs", (docs,), config),
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
        return _scoped(_build(root, name, override=True))
    scratch: list[ConfigWarning] = []
    site = _scoped(_build(root, _guess(root, scratch), override=False))
    missed = [w for w in dict.fromkeys(scratch) if w not in site.warnings]
    return replace(site, warnings=site.warnings + tuple(missed)) if missed else site


def _scoped(site: Site) -> Site:
    """The site with the scope of its documents (builders that read more set their own)."""
    if site.scope is not None:
        return site
    return replace(site, scope=of_site(site.root, site.generator, site.content_dirs, {}))


def _guess(root: Path, scratch: list[ConfigWarning]) -> str:
    """The generator's name; configuration faults met on the way go to ``scratch``."""
    if (root / "dendron.yml").is_file():
        return "dendron"
    if (root / "quartz.config.ts").is_file():
        return "quartz"
    if any((root / name).is_file() for name in _HUGO_FILES):
        return "hugo"
    zola_file = _zola_config_file(root)
    if zola_file is not None:
        config = _load(root, zola_file, scratch)
        if _looks_like_zola(config, root):
            return "zola"
    if (
        any((root / name).is_file() for name in _CONFIG_FILES)
        or (root / "config" / "_default").is_dir()
    ):
        config, _ = _hugo_config(root, scratch)
        if _looks_like_hugo(config, root):
            return "hugo"
    if (root / "mkdocs.yml").is_file() or (root / "mkdocs.yaml").is_file():
        return "mkdocs"
    if (root / ".obsidian").is_dir():
        return "obsidian"
    if (root / "_config.yml").is_file():
        return "jekyll"
    if (root / "root.schema.yml").is_file():  # a Dendron vault kept without its workspace
        return "dendron"
    return "github"


def _build(root: Path, generator: str, override: bool) -> Site:
    if generator == "hugo":
        return _hugo_site(root, override)
    if generator == "zola":
        warnings: list[ConfigWarning] = []
        zola_file = _zola_config_file(root)
        config = _load(root, zola_file, warnings) if zola_file is not None else {}
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
        return _mkdocs_site(root)
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
    )


def of_config(config: Config) -> tuple[Site, Reading]:
    """The site of a vault and its parse rules, as its ``studykb.toml`` asks."""
    site = detect(config.root, config.generator)
    return site, reading(site, config.headings)
