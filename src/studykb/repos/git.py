"""Reading a local clone with dulwich: commits, trees, blobs and the history of a path.

Everything is read from the object store, never from the working tree, so nothing in the
clone's files (a symbolic link, a checked-out file) is followed; nothing is written and no
hook, filter or configured command runs (dulwich runs hooks only when it commits, which
studykb never does). A clone whose ``.git`` is a symbolic link, a ``gitdir:`` file leading
out of the clone, or that borrows objects from elsewhere (``objects/info/alternates``) is
refused: reading it would read outside the folder named.
"""

from __future__ import annotations

import stat
import zlib
from dataclasses import dataclass
from pathlib import Path

from dulwich.diff_tree import RenameDetector, tree_changes
from dulwich.errors import FileFormatException, NotGitRepository
from dulwich.object_store import tree_lookup_path
from dulwich.objects import Blob, Commit, Tree
from dulwich.objectspec import parse_commit
from dulwich.repo import Repo

from studykb.repos.head import GitError as GitError
from studykb.repos.head import safe_clone as safe_clone

#: A file larger than this is not read for lines or symbols.
MAX_BYTES = 2 * 1024 * 1024
_LINK_MODE = 0o120000
_SUBMODULE_MODE = 0o160000
#: Everything dulwich raises on a corrupt or half-copied object store.
_BROKEN = (KeyError, OSError, ValueError, AssertionError, zlib.error)


@dataclass(frozen=True)
class Entry:
    """A path at a commit: a file's bytes (None: not read), or a folder."""

    path: str
    folder: bool
    data: bytes | None
    sha: bytes


class Clone:
    """One local clone, opened read-only."""

    def __init__(self, folder: Path) -> None:
        safe_clone(folder)
        try:
            self.repo = Repo(str(folder))
        except NotGitRepository:
            raise GitError(f"{folder} is not a git repository") from None
        except _BROKEN as exc:
            raise GitError(f"{folder} cannot be read as a git repository: {exc}") from None
        self.folder = folder
        self._commits: dict[str, Commit] = {}

    def close(self) -> None:
        self.repo.close()

    @property
    def shallow(self) -> bool:
        try:
            return bool(self.repo.get_shallow())
        except _BROKEN:
            return False

    def commit(self, rev: str | None = None) -> Commit:
        """The commit ``rev`` names (a hex prefix, a tag, a branch; None: HEAD)."""
        key = rev or "HEAD"
        if key in self._commits:
            return self._commits[key]
        try:
            found = parse_commit(self.repo, key.encode())
        except (KeyError, NotGitRepository, ValueError):
            what = "HEAD" if rev is None else f"commit {rev!r}"
            raise GitError(f"{what} is not in the clone at {self.folder}") from None
        except _BROKEN as exc:
            raise GitError(f"the clone at {self.folder} is damaged: {exc}") from None
        self._commits[key] = found
        return found

    def entry(self, commit: Commit, path: str, read: bool = True) -> Entry | None:
        """``path`` at ``commit`` (None: not there). A symbolic link, a submodule or a file
        too large to read is a GitError: nothing outside the repository's own files is read."""
        try:
            mode, sha = tree_lookup_path(self.repo.__getitem__, commit.tree, path.encode())
        except KeyError:
            return None
        except _BROKEN as exc:
            raise GitError(f"cannot read {path}: the clone is damaged ({exc})") from None
        if mode == _LINK_MODE:
            raise GitError(f"{path} is a symbolic link in the repository; not followed")
        if mode == _SUBMODULE_MODE:
            raise GitError(f"{path} is a submodule (another repository); not read")
        if stat.S_ISDIR(mode):
            return Entry(path, True, None, sha)
        if not read:
            return Entry(path, False, None, sha)
        return Entry(path, False, self.read(sha, path), sha)

    def read(self, sha: bytes, path: str, limit: int = MAX_BYTES) -> bytes:
        """The bytes of the file ``path`` whose blob is ``sha``; GitError when it is no
        file or larger than ``limit`` bytes."""
        blob = self._object(sha, path)
        if not isinstance(blob, Blob):
            raise GitError(f"{path} is not a file")
        size = blob.raw_length()
        if size > limit:
            raise GitError(f"{path} is too large to read ({size // 1024} KiB)")
        return bytes(blob.as_raw_string())

    def _object(self, sha: bytes, what: str) -> object:
        try:
            return self.repo[sha]
        except (*_BROKEN, FileFormatException) as exc:
            raise GitError(f"cannot read {what}: the clone is damaged ({exc})") from None

    def files(self, commit: Commit) -> list[tuple[str, bytes]]:
        """Every regular file at ``commit``: (path, blob id)."""
        out: list[tuple[str, bytes]] = []
        stack: list[tuple[str, bytes]] = [("", commit.tree)]
        while stack:
            prefix, sha = stack.pop()
            tree = self._object(sha, prefix or "the root folder")
            if not isinstance(tree, Tree):
                continue
            for item in tree.iteritems():
                name = item.path.decode("utf-8", "replace")
                full = f"{prefix}{name}"
                if stat.S_ISDIR(item.mode):
                    stack.append((full + "/", item.sha))
                elif stat.S_ISREG(item.mode):
                    out.append((full, item.sha))
        return sorted(out)

    def below(self, commit: Commit, path: str) -> list[tuple[str, int, bytes]] | None:
        """(path, mode, blob id) of ``path`` at ``commit`` if it is a file or a symbolic
        link, or of every file and link below it if it is a folder (at any depth, in path
        order); None when it is not there. Submodules are left out: they are another
        repository. Only the trees below ``path`` are read."""
        if path in ("", "."):
            mode, sha = stat.S_IFDIR, commit.tree
        else:
            try:
                mode, sha = tree_lookup_path(self.repo.__getitem__, commit.tree, path.encode())
            except KeyError:
                return None
            except _BROKEN as exc:
                raise GitError(f"cannot read {path}: the clone is damaged ({exc})") from None
        if not stat.S_ISDIR(mode):
            return [] if mode == _SUBMODULE_MODE else [(path, mode, sha)]
        out: list[tuple[str, int, bytes]] = []
        stack = [("" if path in ("", ".") else path + "/", sha)]
        while stack:
            prefix, tree_sha = stack.pop()
            tree = self._object(tree_sha, prefix or "the root folder")
            if not isinstance(tree, Tree):
                continue
            try:
                items = list(tree.iteritems())
            except (*_BROKEN, FileFormatException) as exc:
                raise GitError(f"cannot read {prefix or 'the root folder'}: {exc}") from None
            for item in items:
                full = prefix + item.path.decode("utf-8", "replace")
                if stat.S_ISDIR(item.mode):
                    stack.append((full + "/", item.sha))
                elif item.mode != _SUBMODULE_MODE:
                    out.append((full, item.mode, item.sha))
        return sorted(out)

    @staticmethod
    def is_link(mode: int) -> bool:
        """Whether a tree entry's ``mode`` is a symbolic link's."""
        return mode == _LINK_MODE

    def blob(self, sha: bytes) -> bytes | None:
        """The bytes of blob ``sha``; None when too large or not a blob."""
        found = self._object(sha, "a file")
        if not isinstance(found, Blob) or found.raw_length() > MAX_BYTES:
            return None
        return found.as_raw_string()

    def last_change(self, path: str, commit: Commit | None = None) -> Commit | None:
        """The newest commit at or before ``commit`` (HEAD) that changed ``path`` (a file or
        a folder); None when none did (or the history ends, as in a shallow clone)."""
        start = commit or self.commit()
        try:
            for entry in self.repo.get_walker(include=[start.id], paths=[path.encode()]):
                return entry.commit
        except _BROKEN:
            return None
        return None

    def moved(self, path: str, commit: Commit) -> str | None:
        """Where ``path``, missing at ``commit``, went: the new path of the rename that
        removed it, found in the history before ``commit``; None when it was deleted."""
        try:
            walker = self.repo.get_walker(include=[commit.id], paths=[path.encode()])
            for entry in walker:
                found = entry.commit
                if not found.parents:
                    return None
                parent = self.commit(found.parents[0].decode())
                detector = RenameDetector(self.repo.object_store)
                for change in tree_changes(
                    self.repo.object_store, parent.tree, found.tree, rename_detector=detector
                ):
                    old, new = change.old, change.new
                    if old is None or new is None or old.path is None or new.path is None:
                        continue
                    if old.path.decode("utf-8", "replace") == path and change.type in (
                        "rename",
                        "copy",
                    ):
                        return str(new.path.decode("utf-8", "replace"))
                return None
        except (GitError, *_BROKEN):
            return None
        return None


def is_binary(data: bytes) -> bool:
    """Whether a file's bytes look binary (a NUL byte near the start, as git decides)."""
    return b"\0" in data[:8000]
