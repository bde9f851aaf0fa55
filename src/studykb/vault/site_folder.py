"""Where a named generator's site is: the vault itself, or one of its folders.

``generator = "hugo"`` in ``studykb.toml`` must give the rules Hugo's own configuration
would, also when the site is kept in a folder of the repository (``website/`` holding
``content/``, ``docs/`` holding ``mkdocs.yml``). :func:`site_folder` finds that folder by
the generator's files (its configuration first, then its content folder), and
:func:`rebased` turns the paths of a site read there into vault paths.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

from studykb.vault.scope import Scope
from studykb.vault.siteconf import ConfigWarning, Site

#: The files that mark each generator's site folder: (configuration, content folders).
MARKERS: Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]] = MappingProxyType(
    {
        "hugo": (
            (
                "hugo.toml",
                "hugo.yaml",
                "hugo.yml",
                "hugo.json",
                "config.toml",
                "config.yaml",
                "config/_default",
            ),
            ("content",),
        ),
        "zola": (("zola.toml", "config.toml"), ("content",)),
        "quartz": (("quartz.config.ts",), ("content",)),
        "mkdocs": (("mkdocs.yml", "mkdocs.yaml"), ()),
        "jekyll": (("_config.yml",), ()),
        "dendron": (("dendron.yml", "root.schema.yml"), ()),
        "obsidian": ((".obsidian",), ()),
    }
)
#: Folders never searched: dependencies, build output, themes (a theme has its own config).
_SKIP = frozenset({"node_modules", "public", "_site", "site", "themes", "vendor", "resources"})
#: How deep below the vault a site folder is looked for.
DEPTH = 2


def _has(folder: Path, names: tuple[str, ...]) -> bool:
    return any((folder / name).exists() for name in names)


def _folders(root: Path) -> list[Path]:
    """The vault's folders to ``DEPTH`` levels, nearest first (hidden and skipped left out)."""
    out: list[Path] = []
    queue: deque[tuple[Path, int]] = deque([(root, 0)])
    while queue:
        folder, depth = queue.popleft()
        if depth >= DEPTH:
            continue
        try:
            children = sorted(p for p in folder.iterdir() if p.is_dir())
        except OSError:
            continue
        for child in children:
            if child.name.startswith((".", "_")) or child.name in _SKIP:
                continue
            out.append(child)
            queue.append((child, depth + 1))
    return out


def site_folder(root: Path, generator: str) -> str:
    """The folder (vault-relative, ``"."`` for the vault) that holds ``generator``'s site:
    the vault when it has the generator's configuration or content folder, else the nearest
    folder with its configuration, else the nearest with its content folder."""
    config, content = MARKERS.get(generator, ((), ()))
    if not config and not content or _has(root, config) or _has(root, content):
        return "."
    folders = _folders(root)
    for names in (config, content):
        for folder in folders:
            if names and _has(folder, names):
                return folder.relative_to(root).as_posix()
    return "."


def _under(folder: str, path: str) -> str:
    return folder if path in ("", ".") else f"{folder}/{path}"


def rebased(site: Site, root: Path, folder: str) -> Site:
    """``site``, read in the vault's ``folder``, with every path relative to the vault."""
    scope = site.scope or Scope()
    return replace(
        site,
        root=root,
        content_dirs=tuple(_under(folder, d) for d in site.content_dirs),
        language_dirs={k: _under(folder, v) for k, v in site.language_dirs.items()},
        static_dirs=tuple(_under(folder, d) for d in site.static_dirs),
        static_mounts=tuple((_under(folder, d), url) for d, url in site.static_mounts),
        include_bases=tuple(_under(folder, d) for d in site.include_bases),
        nav_titles={_under(folder, k): v for k, v in site.nav_titles.items()},
        config_file=_under(folder, site.config_file) if site.config_file else None,
        warnings=tuple(replace(w, path=_under(folder, w.path)) for w in site.warnings),
        scope=Scope(
            within=tuple(_under(folder, d) for d in scope.within) or (folder,),
            ignore=tuple((_under(folder, base), p) for base, p in scope.ignore),
            said=scope.said or (f"{site.generator} site: {folder}/",),
        ),
    )


__all__ = ["ConfigWarning", "rebased", "site_folder"]
