"""A tracked repository's own Markdown, read into the vault: its ``notes``.

``notes = ["README.md", "notes/"]`` in ``[repos.NAME]`` (or ``notes:`` in the ``repo:``
table of a course or of an entry with ``kind: repo``) names files and folders of the
repository; every Markdown file among them (below a folder, at any depth) is a document
of the vault named ``NAME:path`` (:mod:`studykb.vault.outside`), read from the clone's
HEAD in git's object store, never the working tree, and never written. Nothing is read
(and dulwich is not loaded) unless some ``notes`` says so.

The session hands :func:`source` to the vault: each refresh asks it for every file with
its blob id (``git:<hex>``), which reads only the trees below the folders named, and
reads only the blobs that are new. Problems are said on the line that names ``notes``
(``missing-notes``: no clone here, nothing at that path; ``skipped-note``: a file that is
a symbolic link in the repository, binary, over :data:`MAX_NOTE_BYTES` or not UTF-8),
and the rest is read.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from studykb.model import WARNING, Problem
from studykb.parse.reading import DRAWING
from studykb.repos.head import head_commit
from studykb.repos.tracked import Tracked, tracked, unique
from studykb.vault.outside import MARK, Outside, is_outside, split

if TYPE_CHECKING:
    from studykb.repos.git import Clone
    from studykb.vault import Vault

#: The problem code of a ``notes`` entry that reads nothing (no clone, nothing there).
MISSING = "missing-notes"
#: The problem code of one file of ``notes`` that is not read.
SKIPPED = "skipped-note"
#: A repository's note larger than this is not read.
MAX_NOTE_BYTES = 1024 * 1024
#: The problem codes :func:`source` says (a refresh keeps them while nothing changed).
CODES = frozenset({MISSING, SKIPPED, "bad-repo"})
#: In every stamp: a change to what this module reads changes it.
VERSION = "notes-1"


@dataclass(frozen=True)
class _Blob:
    """Where one note's bytes are, and where its ``notes`` is written."""

    clone: Path
    sha: bytes
    path: str
    where: tuple[str, int]


def wanted(vault: Vault) -> list[Tracked]:
    """The tracked repositories that say which of their Markdown is read (no git read)."""
    if not vault.config.repo_notes and not _any_notes(vault):
        return []
    return [repo for repo in unique(tracked(vault)) if repo.notes]


def _any_notes(vault: Vault) -> bool:
    """Whether a course's or entry's front matter may say ``notes`` (one quick query)."""
    return vault.any_saying(("course", "entry"), '"notes"')


def source(vault: Vault, last: str = "") -> Outside:
    """Every Markdown file the tracked repositories' ``notes`` name, at HEAD; only that
    it is all as ``last`` (the stamp of the answer the stored notes came from) named,
    when every HEAD is the commit it was and ``notes`` say the same (git not loaded)."""
    repos = wanted(vault)
    if not repos:
        return Outside()
    limit = min(vault.config.max_file_bytes, MAX_NOTE_BYTES)
    stamp = _stamp(repos, limit)
    if stamp and stamp == last:
        return Outside(stamp=stamp, same=True, codes=CODES)
    # deferred: loads dulwich, for a vault that reads a repository's notes only
    from studykb.repos.git import Clone

    hashes: dict[str, str] = {}
    blobs: dict[str, _Blob] = {}
    problems: list[Problem] = []
    for repo in repos:
        where = repo.notes_at
        for name, path, mode, sha in _listed(repo, problems):
            if name in hashes or name in blobs:
                continue  # named twice (a file and its folder)
            if Clone.is_link(mode):
                why = "is a symbolic link in the repository; not followed"
                problems.append(_problem(where, SKIPPED, f"{name} {why}"))
                continue
            assert repo.clone is not None
            hashes[name] = MARK + sha.decode("ascii")
            blobs[name] = _Blob(repo.clone, sha, path, where)

    def read(paths: list[str]) -> dict[str, bytes | Problem]:
        return _read_all(blobs, paths, limit)

    return Outside(hashes, read, problems, stamp=stamp, codes=CODES)


def _stamp(repos: list[Tracked], limit: int) -> str:
    """What the notes of ``repos`` are read from: this code, the limit, each repository's
    name, clone, ``notes`` and where they are said, and its HEAD commit read without git
    (empty when one cannot be read so)."""
    parts: list[object] = [VERSION, limit]
    for repo in repos:
        head = ""
        if repo.clone is not None and repo.clone.exists():
            head = head_commit(repo.clone) or ""
            if not head:
                return ""
        where = [*repo.notes_at, *repo.declared_at]
        parts.append([repo.name, str(repo.clone), list(repo.notes), where, head])
    text = json.dumps(parts, ensure_ascii=False)
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def _listed(repo: Tracked, problems: list[Problem]) -> list[tuple[str, str, int, bytes]]:
    """(``NAME:path``, path, mode, blob id) of each Markdown file ``repo``'s ``notes``
    names at HEAD; what names nothing is added to ``problems``."""
    # deferred: loads dulwich (only for a repository with notes)
    from studykb.repos.git import Clone, GitError

    where = repo.notes_at
    if split(f"{repo.name}:x") != (repo.name, "x"):
        message = f"repository {repo.name!r}: a name with these characters cannot name its notes"
        problems.append(_problem(where, MISSING, message + " (NAME:path); not read"))
        return []
    if repo.clone is None or not repo.clone.exists():
        said = "names no clone here" if repo.clone is None else f"has no clone at {repo.clone}"
        problems.append(
            _problem(where, MISSING, f"repository {repo.name!r} {said}; its notes are not read")
        )
        return []
    try:
        clone = Clone(repo.clone)
    except GitError as exc:  # as check says it (said once)
        path, line = repo.declared_at
        message = f"repository {repo.name!r}: {exc}"
        problems.append(Problem(path, line, WARNING, "bad-repo", message))
        return []
    out: list[tuple[str, str, int, bytes]] = []
    try:
        commit = clone.commit()
        for written in repo.notes:
            inner = _normal(written)
            found = clone.below(commit, inner)
            shown = f"{repo.name}:{inner if inner != '.' else ''}"
            if found is None:
                message = f"{shown} is not in the repository at HEAD; not read"
                problems.append(_problem(where, MISSING, message))
                continue
            markdown = [(p, m, sha) for p, m, sha in found if _markdown(p)]
            if not markdown:
                message = f"{shown} holds no Markdown file at HEAD; nothing read"
                problems.append(_problem(where, MISSING, message))
            out += [(f"{repo.name}:{p}", p, m, sha) for p, m, sha in markdown]
    except GitError as exc:
        problems.append(_problem(where, MISSING, f"repository {repo.name!r}: {exc}; not read"))
    finally:
        clone.close()
    return out


def _read_all(blobs: dict[str, _Blob], paths: list[str], limit: int) -> dict[str, bytes | Problem]:
    """The bytes of each of ``paths`` (``NAME:path``), or the problem that says why not."""
    # deferred: loads dulwich (only called once a repository's notes are listed)
    from studykb.repos.git import Clone, GitError

    out: dict[str, bytes | Problem] = {}
    clones: dict[Path, Clone | GitError] = {}
    try:
        for name in paths:
            blob = blobs[name]
            if blob.clone not in clones:
                try:
                    clones[blob.clone] = Clone(blob.clone)
                except GitError as exc:
                    clones[blob.clone] = exc
            out[name] = _read(clones[blob.clone], blob, name, limit)
    finally:
        for clone in clones.values():
            if not isinstance(clone, Exception):
                clone.close()
    return out


def _read(clone: Clone | Exception, blob: _Blob, name: str, limit: int) -> bytes | Problem:
    """The bytes of one note, or the ``skipped-note`` problem that says why they are not
    read: binary, too large, not UTF-8, unreadable."""
    # deferred: loads dulwich (only called once a clone is open)
    from studykb.repos.git import GitError, is_binary

    if isinstance(clone, Exception):
        return _problem(blob.where, SKIPPED, f"{name}: {clone}; not read")
    try:
        data = clone.read(blob.sha, blob.path, limit)
    except GitError as exc:
        why = str(exc).replace(blob.path, name, 1)
        if "too large" in why:
            why = f"{name} is over the {limit / 1024 / 1024:g} MB a repository's note may be"
        return _problem(blob.where, SKIPPED, f"{why}; not read")
    if is_binary(data):
        return _problem(blob.where, SKIPPED, f"{name} is a binary file; not read")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = data[exc.start : exc.start + 1].hex()
        message = f"{name} is not UTF-8 (byte 0x{bad} at offset {exc.start}); not read"
        return _problem(blob.where, SKIPPED, message)
    return data


def read_note(vault: Vault, path: str) -> bytes | None:
    """The bytes of the repository's note ``path`` (``NAME:path``) as last read into the
    vault (its blob, by the id the state holds), or None when it is no such note or the
    clone cannot give it now."""
    parts = split(path)
    stored = vault.file_hashes([path]).get(path)
    if parts is None or stored is None or not is_outside(stored):
        return None
    repo = next((r for r in wanted(vault) if r.name == parts[0]), None)
    if repo is None or repo.clone is None:
        return None
    # deferred: loads dulwich, for a repository's note only
    from studykb.repos.git import Clone, GitError

    try:
        clone = Clone(repo.clone)
        try:
            return clone.read(stored[len(MARK) :].encode("ascii"), parts[1], MAX_NOTE_BYTES)
        finally:
            clone.close()
    except GitError:
        return None


def files(vault: Vault, paths: list[str]) -> dict[str, Path]:
    """Where each of ``paths`` is on disk: a vault file in the vault's folder, a
    repository's note (``NAME:path``) in its clone's working tree (where it is edited)."""
    out = {path: vault.root / path for path in paths}
    notes = [path for path in paths if split(path) is not None]
    if not notes:
        return out
    hashes = vault.file_hashes(notes)
    clones = {repo.name: repo.clone for repo in wanted(vault) if repo.clone is not None}
    for path in notes:
        name, inner = split(path) or ("", "")
        if is_outside(hashes.get(path, "")) and name in clones:
            out[path] = clones[name] / inner
    return out


def counts(vault: Vault) -> dict[str, int]:
    """How many of its own notes each repository gives the vault, by name."""
    out: dict[str, int] = {}
    for path, digest in vault.file_hashes().items():
        parts = split(path) if is_outside(digest) else None
        if parts is not None:
            out[parts[0]] = out.get(parts[0], 0) + 1
    return out


def _problem(where: tuple[str, int], code: str, message: str) -> Problem:
    return Problem(where[0], where[1], WARNING, code, message)


def _normal(written: str) -> str:
    """A path of ``notes`` as the repository's tree names it (``.`` for its root)."""
    path = written.strip().replace("\\", "/").strip("/")
    return posixpath.normpath(path) if path else "."


def _markdown(path: str) -> bool:
    name = posixpath.basename(path).lower()
    hidden = any(part.startswith(".") for part in path.split("/"))
    return name.endswith(".md") and not name.endswith(DRAWING) and not hidden
