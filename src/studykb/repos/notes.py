"""A tracked repository's own Markdown, read into the vault: its ``notes``.

``notes = ["README.md", "notes/"]`` in ``[repos.NAME]`` (or ``notes:`` in a course's
``repo:`` table, or an entry's with ``kind: repo``) names files and folders of the
repository; every Markdown file among them (below a folder, at any depth) is a document
of the vault named ``NAME:path`` (:mod:`studykb.vault.outside`), read from the clone's
HEAD in git's object store, never the working tree, and never written. Nothing is read
unless ``notes`` says so.

The session hands :func:`source` to the vault: each refresh asks it for every file with
its blob id (``git:<hex>``), and reads only the blobs that are new. A repository that is
no clone here, a ``notes`` entry that names nothing at HEAD, a blob that is too large is
a problem on the line that names it or on ``NAME:path``, and the rest is read.
"""

from __future__ import annotations

import posixpath
from pathlib import Path
from typing import TYPE_CHECKING

from studykb.model import WARNING, Problem
from studykb.parse.reading import DRAWING
from studykb.repos.tracked import Tracked, tracked, unique
from studykb.vault.outside import MARK, Outside

if TYPE_CHECKING:
    from studykb.repos.git import Clone
    from studykb.vault import Vault

#: The problem code of a ``notes`` entry that cannot be read (no clone, nothing there).
MISSING = "missing-notes"


def wanted(vault: Vault) -> list[Tracked]:
    """The tracked repositories that say which of their Markdown is read (no git read)."""
    if not vault.config.repo_notes and not _any_notes(vault):
        return []
    return [repo for repo in unique(tracked(vault)) if repo.notes]


def _any_notes(vault: Vault) -> bool:
    """Whether a course's or entry's front matter may say ``notes`` (one quick query)."""
    return vault.any_saying(("course", "entry"), '"notes"')


def source(vault: Vault) -> Outside:
    """Every Markdown file the tracked repositories' ``notes`` name, at HEAD."""
    repos = wanted(vault)
    if not repos:
        return Outside()
    # deferred: loads dulwich, for a vault that reads a repository's notes only
    from studykb.repos.git import Clone, GitError

    hashes: dict[str, str] = {}
    blobs: dict[str, tuple[Path, bytes, str]] = {}
    problems: list[Problem] = []
    for repo in repos:
        where, line = repo.notes_at
        if repo.clone is None or not repo.clone.exists():
            said = "names no clone here" if repo.clone is None else f"has no clone at {repo.clone}"
            message = f"repository {repo.name!r} {said}; its notes are not read"
            problems.append(Problem(where, line, WARNING, MISSING, message))
            continue
        try:
            clone = Clone(repo.clone)
            try:
                files = clone.files(clone.commit())
            finally:
                clone.close()
        except GitError as exc:
            path, at = repo.declared_at
            message = f"repository {repo.name!r}: {exc}"  # as check says it (said once)
            problems.append(Problem(path, at, WARNING, "bad-repo", message))
            continue
        for written in repo.notes:
            found = _chosen(files, written)
            if not found:
                message = f"{repo.name}:{written.strip('/')} is not in the repository at HEAD"
                problems.append(Problem(where, line, WARNING, MISSING, message))
            for path, sha in found:
                name = f"{repo.name}:{path}"
                hashes[name] = MARK + sha.decode("ascii")
                blobs[name] = (repo.clone, sha, path)
    limit = vault.config.max_file_bytes

    def read(paths: list[str]) -> dict[str, bytes | Problem]:
        out: dict[str, bytes | Problem] = {}
        clones: dict[Path, Clone | GitError] = {}
        try:
            for name in paths:
                folder, sha, path = blobs[name]
                if folder not in clones:
                    try:
                        clones[folder] = Clone(folder)
                    except GitError as exc:
                        clones[folder] = exc
                out[name] = _read(clones[folder], sha, path, name, limit)
        finally:
            for clone in clones.values():
                if isinstance(clone, Clone):
                    clone.close()
        return out

    return Outside(hashes, read, problems)


def _read(
    clone: Clone | Exception, sha: bytes, path: str, name: str, limit: int
) -> bytes | Problem:
    """The bytes of one note, or the problem that says why they are not read."""
    # deferred: loads dulwich (only called once a clone is open)
    from studykb.repos.git import GitError

    if isinstance(clone, Exception):
        return Problem(name, 0, WARNING, "unreadable", f"{clone}; not read")
    try:
        data = clone.read(sha, path)
    except GitError as exc:
        code = "too-large" if "too large" in str(exc) else "unreadable"
        return Problem(name, 0, WARNING, code, f"{exc}; not read")
    if len(data) > limit:
        mb, most = len(data) / 1024 / 1024, limit / 1024 / 1024
        message = f"{mb:.1f} MB is over the {most:g} MB limit; not read"
        return Problem(name, 0, WARNING, "too-large", message)
    return data


def _chosen(files: list[tuple[str, bytes]], written: str) -> list[tuple[str, bytes]]:
    """The Markdown files ``written`` names: itself, or every one below the folder."""
    path = posixpath.normpath(written.strip().strip("/")) if written.strip("/ ") else "."
    if path in (".", ""):
        return [(p, sha) for p, sha in files if _markdown(p)]
    exact = [(p, sha) for p, sha in files if p == path and _markdown(p)]
    if exact:
        return exact
    return [(p, sha) for p, sha in files if p.startswith(path + "/") and _markdown(p)]


def _markdown(path: str) -> bool:
    name = posixpath.basename(path).lower()
    hidden = any(part.startswith(".") for part in path.split("/"))
    return name.endswith(".md") and not name.endswith(DRAWING) and not hidden
