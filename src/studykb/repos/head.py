"""A clone's git folder, checked, and its HEAD commit read without the git library.

:func:`safe_clone` is the check every read of a clone starts with (:mod:`studykb.repos.git`
opens a clone only through it). :func:`head_commit` reads the commit id HEAD names from
the few small files git keeps it in (``HEAD``, a loose ref, ``packed-refs``), so that a
refresh can tell a repository's notes are as they were without loading dulwich; anything
unusual (a worktree, an unborn branch, a ref name with ``..``, a file that is a link) is
None, and the caller reads the clone with dulwich as always. Nothing is written.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path


class GitError(Exception):
    """Something about a clone, a commit or a file that a link or a listing reports."""


_SHA = re.compile(r"[0-9a-f]{40}")
_REF = re.compile(r"refs/heads/[A-Za-z0-9._][\w./-]*")
#: ``packed-refs`` larger than this is left to dulwich.
_MOST = 4 * 1024 * 1024


def safe_clone(folder: Path) -> Path:
    """The clone's git folder, checked to stay inside ``folder``; GitError when it does not."""
    if not folder.is_dir():
        raise GitError(f"{folder} is not a folder")
    real = Path(os.path.realpath(folder))
    dotgit = folder / ".git"
    if dotgit.is_symlink():
        raise GitError(f"{dotgit} is a symbolic link; not followed")
    if dotgit.is_file():
        try:
            line = dotgit.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise GitError(f"cannot read {dotgit}: {exc}") from None
        where = Path(os.path.realpath(real / line.removeprefix("gitdir:").strip()))
        if not where.is_relative_to(real):
            raise GitError(f"{dotgit} leads out of the clone ({where}); not followed")
        control = where
    elif dotgit.is_dir():
        control = dotgit
    elif (folder / "HEAD").is_file() and (folder / "objects").is_dir():
        control = folder  # a bare repository
    else:
        raise GitError(f"{folder} is not a git repository (no .git)")
    if (control / "objects" / "info" / "alternates").exists():
        raise GitError(f"{folder} borrows objects from outside the clone (alternates); not read")
    return control


def head_commit(folder: Path) -> str | None:
    """The hex id of the commit at the clone's HEAD, read from git's files; None when it
    cannot be told this way (the clone is read with dulwich then)."""
    try:
        control = safe_clone(folder)
        if (control / "commondir").exists():
            return None  # a worktree: its refs are elsewhere
        head = _small(control / "HEAD")
        if head is None:
            return None
        if _SHA.fullmatch(head):
            return head  # detached
        ref = head.removeprefix("ref:").strip()
        if not head.startswith("ref:") or not _REF.fullmatch(ref) or ".." in ref:
            return None
        loose = _small(control / ref)
        if loose is not None:
            return loose if _SHA.fullmatch(loose) else None
        return _packed(control / "packed-refs", ref)
    except (GitError, OSError, UnicodeDecodeError):
        return None


def _small(path: Path) -> str | None:
    """The text of a small regular file (not a link), stripped; None when it is not one."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > 4096:
            return None
        return os.read(fd, 4096).decode("ascii").strip()
    finally:
        os.close(fd)


def _packed(path: Path, ref: str) -> str | None:
    """The id ``packed-refs`` gives ``ref``, if it is a small regular file that does."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > _MOST:
            return None
        data = os.read(fd, _MOST).decode("utf-8", "replace")
    finally:
        os.close(fd)
    for line in data.splitlines():
        sha, _, name = line.partition(" ")
        if name == ref and _SHA.fullmatch(sha):
            return sha
    return None
