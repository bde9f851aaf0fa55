"""A detected site (:class:`Site`) and reading generators' configuration files, never raising.

``vault/flavour.py`` detects the generator and ``vault/hugo_site.py`` reads Hugo's settings;
both read files with :func:`load`, which returns ``{}`` and records a :class:`ConfigWarning`
for a file it cannot read.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

from studykb.vault.scope import Scope


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
    #: The site renders links through a hook of its own (Hugo's ``render-link.html``), which
    #: may rewrite any relative link (Hugo's docs: ``[term](g)`` is a glossary entry).
    link_hook: bool = False
    #: The path part of the site's base URL (``/repo/`` for ``https://x.github.io/repo/``).
    base_path: str = "/"
    #: The configuration file read, relative to ``root`` (None when there is none).
    config_file: str | None = None
    #: Configuration that could not be read.
    warnings: tuple[ConfigWarning, ...] = ()
    #: Which Markdown files are the generator's documents (``vault/scope.py``).
    scope: Scope | None = None
    #: mkdocs' ``markdown_extensions`` (``footnotes``, ``attr_list``...).
    extensions: tuple[str, ...] = ()
    #: Vault path -> the page's title in mkdocs' ``nav``.
    nav_titles: Mapping[str, str] = field(default_factory=dict)
    #: Folders (relative to ``root``) included files are found from: Hugo's project folder
    #: and content folders; pymdownx.snippets' ``base_path`` (``vault/includes.py``).
    include_bases: tuple[str, ...] = ()
    #: pymdownx.snippets is listed: ``--8<--`` lines paste files in.
    snippets: bool = False
    #: pymdownx.tabbed with a ``slugify``: the options that name each tab's id.
    tab_ids: Mapping[str, Any] = field(default_factory=dict)
    #: ``status`` values the theme owns (Material for MkDocs' page status).
    theme_statuses: tuple[str, ...] = ()
    #: Why this generator is in force (``generator = "hugo" in studykb.toml``, ``hugo.toml``).
    reason: str = ""


_TOML_LINE = re.compile(r"line (\d+)")


def relative(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def load(root: Path, path: Path, warnings: list[ConfigWarning]) -> dict[str, Any]:
    """A TOML, YAML or JSON file as a dict; ``{}`` (and a warning) when it cannot be read."""
    rel = relative(root, path)
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


def lower_keys(value: Any) -> Any:
    """Hugo's keys are case-insensitive: lower-case every mapping key, recursively."""
    if isinstance(value, dict):
        return {str(k).lower(): lower_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [lower_keys(v) for v in value]
    return value


def merge(into: dict[str, Any], more: Mapping[str, Any]) -> None:
    for key, value in more.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            merge(into[key], value)
        else:
            into[key] = value


def text_of(value: Any) -> str | None:
    """A non-empty string setting, else None."""
    return value.strip() if isinstance(value, str) and value.strip() else None


def table_of(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def clean_dir(value: str) -> str:
    """A folder setting as a relative posix path (``./content/`` -> ``content``)."""
    path = PurePosixPath(value.replace("\\", "/").strip())
    parts = [p for p in path.parts if p not in (".", "/")]
    return "/".join(parts) or "."


def base_path(url: Any) -> str:
    if not isinstance(url, str) or not url.strip():
        return "/"
    path = urlsplit(url.strip()).path or "/"
    return path if path.endswith("/") else path + "/"
