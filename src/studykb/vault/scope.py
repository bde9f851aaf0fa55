"""Which Markdown files of a folder are the generator's documents.

A site's repository holds more Markdown than the site renders: Hugo's ``archetypes/``,
``layouts/`` and ``themes/``, a README beside ``content/``, a Quartz repository's ``docs/``,
the ``_origin.md`` twins a d2lbook translation keeps. Reading those as notes makes false
errors (an archetype's ``{{ .Name }}`` front matter) and false ties (two files per section).
A :class:`Scope` says which files are read, from the generator's own settings:

- Hugo, Zola: only the content folders (``contentDir``, languages, module mounts);
- Quartz: ``content/``, less ``ignorePatterns`` of ``quartz.config.ts``;
- mkdocs: ``docs_dir`` (``docs``), less ``exclude_docs`` (gitignore-style lines);
- Jekyll: less ``exclude`` of ``_config.yml`` and what Jekyll always leaves out;
- Dendron: the vaults of ``dendron.yml``;
- d2lbook (a ``config.ini`` with ``[build]``), any generator: less ``exclusions``.

``init --dry-run`` says which, and how many files each folder then gives.
"""

from __future__ import annotations

import configparser
import fnmatch
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: What Jekyll never renders (jekyllrb.com/docs/configuration/options/, ``exclude``).
JEKYLL_EXCLUDES = ("_site", "vendor", "node_modules", ".bundle", ".jekyll-cache", "Gemfile")
_QUARTZ_IGNORE = re.compile(r"ignorePatterns\s*:\s*\[([^\]]*)\]", re.S)
_QUOTED = re.compile(r"""["'`]([^"'`]+)["'`]""")


@dataclass(frozen=True)
class Scope:
    """The documents of a site: Markdown files inside ``within`` (everywhere when empty)
    that match none of ``ignore`` (each relative to its ``base`` folder)."""

    #: Folders (vault-relative, ``/``) holding the documents; empty: the whole vault.
    within: tuple[str, ...] = ()
    #: (base folder, pattern): gitignore-like; without ``/`` a pattern matches any part.
    ignore: tuple[tuple[str, str], ...] = ()
    #: Where each rule came from, for ``init --dry-run`` (``"hugo content: content/"``).
    said: tuple[str, ...] = ()

    def reads(self, rel: str) -> bool:
        """Whether the Markdown file at vault path ``rel`` is a document."""
        if self.within and not any(_under(rel, d) for d in self.within):
            return False
        return not any(_matches(rel, base, pattern) for base, pattern in self.ignore)


def _under(rel: str, folder: str) -> bool:
    return folder in ("", ".") or rel.startswith(folder.rstrip("/") + "/")


def _matches(rel: str, base: str, pattern: str) -> bool:
    """A gitignore-like ``pattern`` (relative to ``base``) against the file at ``rel``."""
    if base not in ("", "."):
        if not _under(rel, base):
            return False
        rel = rel[len(base.rstrip("/")) + 1 :]
    pattern = pattern.strip().replace("**/", "*").replace("/**", "/*")
    if not pattern or pattern.startswith(("#", "!")):
        return False
    anchored = pattern.startswith("/")
    pattern = pattern.strip("/")
    parts = rel.split("/")
    if "/" not in pattern and not anchored:  # a name: any folder or file of that name
        return any(fnmatch.fnmatchcase(part, pattern) for part in parts)
    return fnmatch.fnmatchcase(rel, pattern) or fnmatch.fnmatchcase(rel, pattern + "/*")


def of_site(root: Path, generator: str, content: tuple[str, ...], config: dict[str, Any]) -> Scope:
    """The scope of a site (``config``: its settings, as the detection read them)."""
    within: tuple[str, ...] = ()
    ignore: list[tuple[str, str]] = []
    said: list[str] = []
    if generator in ("hugo", "zola", "dendron", "mkdocs") or (
        generator == "quartz" and content != (".",)
    ):
        within = tuple(d for d in content if d not in ("", "."))
        if within:
            said.append(f"{generator} content: " + ", ".join(f"{d}/" for d in within))
    if generator == "quartz":
        patterns = _quartz_ignores(root)
        base = content[0] if content else "."
        ignore.extend((base, p) for p in patterns)
        if patterns:
            said.append("quartz.config.ts ignorePatterns: " + ", ".join(patterns))
    if generator == "mkdocs":
        patterns = _lines(config.get("exclude_docs"))
        ignore.extend((content[0], p) for p in patterns)
        if patterns:
            said.append("mkdocs.yml exclude_docs: " + ", ".join(patterns))
    if generator == "jekyll":
        patterns = [*JEKYLL_EXCLUDES, *_strings(config.get("exclude"))]
        ignore.extend((".", p) for p in patterns)
        said.append("jekyll exclude: " + ", ".join(patterns))
    d2l = _d2lbook_exclusions(root)
    if d2l:
        ignore.extend((".", p) for p in d2l)
        said.append("d2lbook config.ini exclusions: " + ", ".join(d2l))
    return Scope(within, tuple(ignore), tuple(said))


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _lines(value: Any) -> list[str]:
    """gitignore-like lines (mkdocs' ``exclude_docs`` is one multi-line string)."""
    out: list[str] = []
    for text in _strings(value):
        out.extend(line.strip() for line in text.splitlines() if line.strip())
    return out


def _quartz_ignores(root: Path) -> list[str]:
    """The string patterns of ``ignorePatterns: [...]`` in ``quartz.config.ts`` (read as
    text: the file is TypeScript, never run)."""
    try:
        text = (root / "quartz.config.ts").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    found = _QUARTZ_IGNORE.search(text)
    return _QUOTED.findall(found.group(1)) if found else []


def _d2lbook_exclusions(root: Path) -> list[str]:
    """``exclusions`` under ``[build]`` of a d2lbook ``config.ini`` (space-separated globs)."""
    path = root / "config.ini"
    if not path.is_file():
        return []
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, configparser.Error):
        return []
    if not parser.has_option("build", "exclusions"):
        return []
    return parser.get("build", "exclusions").split()
