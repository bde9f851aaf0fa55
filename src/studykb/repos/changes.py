"""The commit that last changed a file (or folder) of a clone, as the code pages show it.

It is the oldest commit of the first-parent line from the commit read back in which the
path has its present content without a break. One walk serves every file of a commit: the
line of commits and every tree read are kept (:class:`Walk`, kept per clone and commit,
the few last ones), so the code pages of a site, sixty files of one repository, read
each tree of its history once instead of once a file. Trees and commits are named by
their ids, so nothing kept can go stale; a new HEAD is a new walk.
"""

from __future__ import annotations

import stat
from dataclasses import dataclass, field
from pathlib import Path

from dulwich.objects import Commit, Tree

from studykb.repos.git import Clone, GitError
from studykb.runtime import process

#: First-parent commits walked back at most.
CHANGE_WALK = 2000
#: Walks kept (by clone and commit).
WALKS = 4
#: Trees kept per walk at most (each a few entries; a walk past it reads on).
TREES = 200_000

_Entries = dict[bytes, tuple[int, bytes]]


@dataclass
class Walk:
    """The first-parent line back from one commit of one clone, and the trees read."""

    start: bytes
    line: list[tuple[bytes, bytes, int]] = field(default_factory=list)
    """(commit id, tree id, commit time) from the start back, as far as walked."""
    complete: bool = False
    """The line reaches the root commit (or a cut history's end)."""
    cut: bool = False
    """It ends where a shallow clone's history stops."""
    trees: dict[bytes, _Entries] = field(default_factory=dict)


def last_change(clone: Clone, commit: Commit, path: str, sha: bytes) -> Commit | None:
    """The commit at which ``path`` (whose blob or tree at ``commit`` is ``sha``) last
    came to be what it is; None beyond :data:`CHANGE_WALK` commits or a shallow clone's
    end."""
    walk = _walk(clone, commit)
    parts = path.encode().split(b"/")
    n = 0
    while True:
        if n + 1 >= len(walk.line) and not _extend(clone, walk):
            if walk.cut or len(walk.line) >= CHANGE_WALK:
                return None
            return clone.commit(walk.line[n][0].decode())  # the root commit
        here, parent = walk.line[n], walk.line[n + 1]
        if parent[1] != here[1] and _lookup(clone, walk, parent[1], parts) != sha:
            return clone.commit(here[0].decode())
        n += 1


def _walk(clone: Clone, commit: Commit) -> Walk:
    walk = _walk_of(clone.folder, commit.id)
    if not walk.line:
        walk.line.append((commit.id, commit.tree, commit.commit_time))
    return walk


@process.memo(maxsize=WALKS)
def _walk_of(folder: Path, start: bytes) -> Walk:
    """The walk from commit ``start`` of the clone at ``folder`` (what it holds is named
    by ids, so it is the same whenever asked)."""
    return Walk(start)


def _extend(clone: Clone, walk: Walk) -> bool:
    """One more commit on the line; False at its end (or :data:`CHANGE_WALK`)."""
    if walk.complete or len(walk.line) >= CHANGE_WALK:
        return False
    last = clone.commit(walk.line[-1][0].decode())
    if not last.parents:
        walk.complete = True
        return False
    try:
        parent = clone.commit(last.parents[0].decode())
    except GitError:
        walk.complete = walk.cut = True  # a shallow clone: the history stops here
        return False
    walk.line.append((parent.id, parent.tree, parent.commit_time))
    return True


def _lookup(clone: Clone, walk: Walk, tree: bytes, parts: list[bytes]) -> bytes | None:
    """The id of what ``parts`` names below the tree ``tree`` (None: not there)."""
    sha = tree
    for n, part in enumerate(parts):
        entries = walk.trees.get(sha)
        if entries is None:
            entries = _entries(clone, sha)
            if entries is None:
                return None
            if len(walk.trees) < TREES:
                walk.trees[sha] = entries
        found = entries.get(part)
        if found is None:
            return None
        mode, sha = found
        if n + 1 < len(parts) and not stat.S_ISDIR(mode):
            return None
    return sha


def _entries(clone: Clone, sha: bytes) -> _Entries | None:
    try:
        tree = clone.repo[sha]
    except (KeyError, OSError, ValueError):
        return None
    if not isinstance(tree, Tree):
        return None
    return {item.path: (item.mode, item.sha) for item in tree.iteritems()}
