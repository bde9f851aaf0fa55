"""Documents read from outside the vault's folder: the Markdown of a tracked repository.

The vault does not know where they come from: the session hands it a source
(:data:`Source`, :mod:`studykb.repos.notes` for a repository's notes), and each refresh
asks it what there is (:class:`Outside`): every file by its path, ``NAME:path/in/repo.md``,
and a content hash that names the content (the git blob id, ``git:<hex>``), so only what
changed is read and parsed again. Such a file is read-only: no command writes it (see
:func:`read_only`), and it is stored with mtime 0, so the walk of the folder never takes
it for one of its own.

A document of a repository is parsed as the file at its path inside the repository, its
relative links resolved inside the repository (``NAME:``, then the path), then named by
its ``NAME:path`` (:func:`parse_outside`).
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from studykb.errors import StudyError
from studykb.model import Parsed, Problem, Reference
from studykb.parse.code_links import NAME

if TYPE_CHECKING:
    from studykb.parse.reading import Reading
    from studykb.vault import Vault
    from studykb.vault.state import Tables
    from studykb.vault.state.rows import FileStamp

#: How the content hash of a document read from outside begins (a file of the vault's
#: folder has a blake2b hex digest, or ``unreadable``).
MARK = "git:"
#: ``NAME:`` at the start of a path: a tracked repository's name (as code links name it).
_PREFIX = re.compile(rf"^({NAME}):(?!/)")


@dataclass(frozen=True)
class Outside:
    """What a source holds now."""

    hashes: dict[str, str] = field(default_factory=dict)
    """path (``NAME:path``) -> content hash (beginning with :data:`MARK`)."""
    read: Callable[[list[str]], dict[str, bytes | Problem]] = lambda _paths: {}
    """The bytes of these files, or the problem that says why one cannot be read."""
    problems: list[Problem] = field(default_factory=list)
    """What the source could not read, on the file that names it or on ``NAME:path``."""
    stamp: str = ""
    """Names everything this answer was made from (empty: it cannot be named cheaply);
    stored with the documents it gave, and handed back to the source next time."""
    same: bool = False
    """The source holds what the stamp handed to it named: the stored documents stand,
    and so do the stored problems of :attr:`codes` (nothing else of this answer is set)."""
    codes: frozenset[str] = frozenset()
    """The problem codes the source says."""


#: Asked by every refresh, with the vault as stored so far and the stamp of the answer
#: the stored documents came from (empty: none).
Source = Callable[["Vault", str], Outside]


def is_outside(digest: str) -> bool:
    """Whether a stored content hash is that of a document read from outside."""
    return digest.startswith(MARK)


def split(path: str) -> tuple[str, str] | None:
    """(repository name, path in it) of ``NAME:path``; None for any other path."""
    found = _PREFIX.match(path)
    if found is None:
        return None
    return found[1], path[found.end() :]


def repository_notes(state: Tables) -> frozenset[str]:
    """The paths of the repositories' notes the state holds."""
    return frozenset(state.files.hashed_as(MARK))


def read_only(vault: Vault, path: str) -> str | None:
    """The repository a document's file ``path`` is read from (so no command may write
    it), or None for a file of the vault's folder."""
    parts = split(path)
    if parts is None:
        return None
    stored = vault.file_hashes([path]).get(path)
    return parts[0] if stored is not None and is_outside(stored) else None


class ReadOnly(StudyError):
    """A command asked to write a repository's note (exit 1: nothing was written)."""


def refuse(vault: Vault, path: str, command: str) -> None:
    """:class:`ReadOnly` when ``path`` is a repository's note: ``command`` writes no file
    of a repository."""
    name = read_only(vault, path)
    if name is not None:
        raise ReadOnly(
            f"{path} is a note of repository {name!r}, read from its clone's HEAD: "
            f"{command} does not write it; nothing was changed.",
            hint="Edit it in the repository and commit; the next command reads it again.",
        )


@dataclass
class Changes:
    """What changed of the documents read from outside the vault's folder since the
    state was written."""

    now: Outside = field(default_factory=Outside)
    items: list[tuple[str, bytes, str, int, int]] = field(default_factory=list)
    """To parse: (path, bytes, content hash, mtime 0, size)."""
    removed: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.items) + len(self.removed)


def changes(stored: dict[str, FileStamp], now: Outside) -> Changes:
    """What ``now`` (what the source holds) changes of the documents ``stored`` holds
    from outside: new or changed ones to parse, gone ones (and those that cannot be
    read any more) to remove."""
    before = {path: st.hash for path, st in stored.items() if is_outside(st.hash)}
    wanted = sorted(path for path, digest in now.hashes.items() if before.get(path) != digest)
    items = []
    problems = list(now.problems)
    unread = []
    for path, data in now.read(wanted).items() if wanted else ():
        if isinstance(data, Problem):
            problems.append(data)
            unread.append(path)
        else:
            items.append((path, data, now.hashes[path], 0, len(data)))
    gone = [path for path in before if path not in now.hashes or path in unread]
    return Changes(now, items, sorted(gone), problems)


def parse_outside(
    path: str, raw: bytes, reading: Reading, parse: Callable[[str, bytes, Reading], Parsed]
) -> Parsed:
    """``raw`` of ``NAME:inner`` parsed as the file ``inner`` of the repository, then
    named by ``NAME:inner``: its documents, references, problems and text."""
    parts = split(path)
    if parts is None:
        return parse(path, raw, reading)
    name, inner = parts
    found = parse(inner, raw, reading)

    def named(p: str) -> str:
        return f"{name}:{p}" if p == inner or p.startswith(inner + "#") else p

    def ref(r: Reference) -> Reference:
        target = r.target
        if r.style == "path" and not (target == ".." or target[:3] == "../"):
            target = f"{name}:{posixpath.normpath(target)}"
        return dataclasses.replace(r, source=named(r.source), path=path, target=target)

    docs = tuple(
        dataclasses.replace(
            d, key=named(d.key), path=path, parent=named(d.parent) if d.parent else d.parent
        )
        for d in found.documents
    )
    return dataclasses.replace(
        found,
        path=path,
        documents=docs,
        references=tuple(ref(r) for r in found.references),
        problems=tuple(_problem(p, path) for p in found.problems),
    )


def _problem(problem: Problem, path: str) -> Problem:
    message = problem.message
    if problem.code == "outside-vault":
        message = message.replace("out of the vault", "out of the repository")
    return dataclasses.replace(problem, path=path, message=message)
