"""Which repositories the vault tracks, and where their local clones are.

Three places name one:

- ``[repos.NAME]`` in studykb.toml, with ``path`` (the local clone) and/or ``url``;
- an entry with ``kind: repo``, named by its id (and aliases), with ``url`` and, where it
  is cloned, ``path``;
- a course with ``repo:`` (a URL, or ``{path, url}``) or ``kind: repo``, named by its id.

A ``[repos.NAME]`` whose name is the id of such a document, or whose ``url`` is the same
address, gives that document's repository its local clone: the notes keep the public URL
and each machine says where its clone is. A relative ``path`` is taken from the vault's
folder, ``~`` is the home folder. Without a clone (no ``path``, or nothing there) the
repository is tracked by URL only and links into it are not judged.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from studykb.config import CONFIG_NAME, Config
from studykb.model import Document, fold
from studykb.parse.urls import normalize_url
from studykb.vault import Vault


@dataclass(frozen=True)
class Tracked:
    """One tracked repository."""

    name: str
    url: str
    written: str
    """The clone's path as written (empty: none)."""
    clone: Path | None
    """The clone's folder, absolute (None: not named)."""
    source: str
    """Where it is declared: a vault path, or ``studykb.toml``."""
    line: int
    key: str | None = None
    """The key of the document that tracks it (None: studykb.toml only)."""
    config_line: int = 0
    """The line of its ``[repos.NAME]`` in studykb.toml, where that gives the clone."""
    notes: tuple[str, ...] = ()
    """The files and folders of its Markdown read into the vault (``notes``; none: none)."""
    notes_at: tuple[str, int] = ("", 0)
    """Where ``notes`` is written (for problems about it)."""
    progress: str = ""
    """The file of the repository whose task items state its progress (``progress``;
    empty: none)."""

    @property
    def cloned(self) -> bool:
        return self.clone is not None and self.clone.exists()

    @property
    def declared_at(self) -> tuple[str, int]:
        """Where the clone's path is written (for problems about the clone)."""
        if self.config_line:
            return CONFIG_NAME, self.config_line
        return self.source, self.line


def _folder(root: Path, written: str) -> Path | None:
    if not written.strip():
        return None
    return Path(os.path.normpath(root / os.path.expanduser(written.strip())))


def _repo_fields(doc: Document) -> tuple[str, str] | None:
    """(path, url) of a document that tracks a repository; None for any other."""
    meta = doc.meta
    if doc.type == "entry" and doc.kind == "repo":
        return _text(meta.get("path") or meta.get("clone")), doc.url or ""
    if doc.type == "course":
        repo = meta.get("repo")
        if isinstance(repo, dict):
            return _text(repo.get("path")), _text(repo.get("url")) or doc.url or ""
        if isinstance(repo, str):
            return "", repo
        if doc.kind == "repo":
            return _text(meta.get("path") or meta.get("clone")), doc.url or ""
    return None


def _notes_of(doc: Document) -> tuple[str, ...]:
    """The ``notes`` of a document that tracks a repository, in its ``repo:`` table
    (``repo: {notes: [...]}`` of a course or of an entry with ``kind: repo``; a bare
    ``notes:`` is the document's own field): a string or a list of strings."""
    repo = doc.meta.get("repo")
    value = repo.get("notes") if isinstance(repo, dict) else None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return ()
    return tuple(v.strip() for v in value if isinstance(v, str) and v.strip())


def _progress_of(doc: Document) -> str:
    """The ``progress`` of a document's ``repo:`` table (a file of the repository)."""
    repo = doc.meta.get("repo")
    return _text(repo.get("progress")) if isinstance(repo, dict) else ""


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


_KEY_LINE = re.compile(r"^\s*(?:path|clone|repo)\s*:", re.M)
_NOTES_LINE = re.compile(r"^\s*notes\s*:", re.M)


def _key_line(root: Path, doc: Document, key: re.Pattern[str] = _KEY_LINE) -> int:
    """The line of ``path:`` (or ``repo:``; or ``key``) in the front matter of ``doc``'s
    file."""
    try:
        text = (root / doc.path).read_text(encoding="utf-8-sig", errors="replace")
    except OSError:
        return doc.line
    found = key.search(text[:20000])
    return text.count("\n", 0, found.start()) + 1 if found else doc.line


def tracked(vault: Vault) -> dict[str, Tracked]:
    """Every tracked repository by folded name (a document's repository also by its key)."""
    candidates = [
        key for key, _path, _id, _title, dtype, *_rest in vault.name_rows()
        if dtype in ("entry", "course")
    ]  # fmt: skip
    return tracked_in(vault.root, vault.config, vault.documents_for(candidates).values())


def tracked_in(root: Path, config: Config, docs: Iterable[Document]) -> dict[str, Tracked]:
    """:func:`tracked` from the documents at hand (the language server's snapshot)."""
    table = {fold(name): (name, path, url, line) for name, path, url, line in config.repos}
    notes = {fold(name): found for name, found in config.repo_notes}
    progress = {fold(name): found for name, found in config.repo_progress}
    by_url = {normalize_url(url): fold(name) for name, _p, url, _l in config.repos if url}
    out: dict[str, Tracked] = {}
    used: set[str] = set()
    for doc in sorted(docs, key=lambda d: d.key):
        fields = _repo_fields(doc)
        if fields is None:
            continue
        path, url = fields
        mine = table.get(fold(doc.id))
        if mine is None and url:
            mine = table.get(by_url.get(normalize_url(url), ""))
        config_line = 0
        if mine is not None:
            used.add(fold(mine[0]))
            path = mine[1] or path
            url = url or mine[2]
            config_line = mine[3] if mine[1] else 0
        line = _key_line(root, doc)
        mine_notes = notes.get(fold(mine[0])) if mine is not None else None
        if mine is not None and mine_notes is not None:
            said, at = mine_notes, (CONFIG_NAME, mine[3])
        else:
            said = _notes_of(doc)
            at = (doc.path, _key_line(root, doc, _NOTES_LINE) if said else line)
        stated = progress.get(fold(mine[0]), "") if mine is not None else ""
        repo = Tracked(
            doc.id, url, path, _folder(root, path), doc.path, line, doc.key, config_line,
            said, at, stated or _progress_of(doc),
        )  # fmt: skip
        out[fold(doc.id)] = repo
        out[doc.key] = repo
    for folded, (name, path, url, line) in table.items():
        if folded not in used and folded not in out:
            out[folded] = Tracked(
                name, url, path, _folder(root, path), CONFIG_NAME, line,
                notes=notes.get(folded, ()), notes_at=(CONFIG_NAME, line),
                progress=progress.get(folded, ""),
            )  # fmt: skip
    return out


def unique(repos: dict[str, Tracked]) -> list[Tracked]:
    """Each repository once, by name."""
    seen: dict[str, Tracked] = {}
    for repo in repos.values():
        seen.setdefault(repo.name, repo)
    return sorted(seen.values(), key=lambda r: fold(r.name))
