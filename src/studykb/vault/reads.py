"""Reading the user's files whole and stable (:func:`read_for_edit`): inside the vault,
a regular file the user may write, the same before and after the read; what
:mod:`studykb.vault.files` rewrites is what was read here."""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from studykb.errors import StudyError


class FileChanged(StudyError):
    """The file changed (or looks half-written) while studykb was editing it. Exit 1."""


@dataclass(frozen=True)
class Read:
    """A file read whole for editing, and what it was on disk when read."""

    path: Path
    """The real path of the file (a symbolic link resolved)."""
    shown: str
    """The path as the user knows it (vault-relative), for messages."""
    data: bytes
    ino: int
    dev: int
    size: int
    mtime_ns: int
    mode: int
    uid: int
    gid: int
    nlink: int


def read_note(path: str | os.PathLike[str]) -> tuple[bytes, os.stat_result]:
    """The bytes of a note the scan found, and its stat; OSError when it is gone, or is
    no longer a regular file (a FIFO put in its place would block a plain ``open``)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks), st
    finally:
        os.close(fd)


def read_in(root: Path, path: str) -> bytes | None:
    """The bytes of the vault file ``path`` (from the vault folder ``root``) as they are
    on disk (read whole and stable, never through a link out of the vault), or None."""
    if os.path.isabs(path) or path.startswith("../") or path == "..":
        return None
    try:
        raw, _st = read_note(root / path)
    except OSError:
        return None
    return raw


def read_for_edit(root: Path, rel: str, *, allow_outside: bool = False) -> Read:
    """Read the file at vault path ``rel`` whole, for rewriting it.

    Raises :class:`~studykb.errors.StudyError` (a clear message, exit 1) when the file
    may not or cannot be rewritten, and :class:`FileChanged` when it changes during the
    read or looks half-written.
    """
    real, before = _editable(root, rel, allow_outside)
    data, after = _read_stable(real, rel, before)
    return Read(
        real,
        rel,
        data,
        after.st_ino,
        after.st_dev,
        after.st_size,
        after.st_mtime_ns,
        stat.S_IMODE(after.st_mode),
        after.st_uid,
        after.st_gid,
        after.st_nlink,
    )


def _editable(root: Path, rel: str, allow_outside: bool) -> tuple[Path, os.stat_result]:
    """The real path of the file at vault path ``rel`` and its stat, once it is known to be
    a regular file inside the vault that the user may write (else :class:`StudyError`)."""
    where = root / rel
    real = Path(os.path.realpath(where))
    base = Path(os.path.realpath(root))
    if not allow_outside and not real.is_relative_to(base):
        raise StudyError(f"{rel} is a link to {real}, outside the vault; not changed.")
    try:
        before = os.stat(real)
    except FileNotFoundError:
        raise StudyError(f"{rel} does not exist any more; not changed.") from None
    except OSError as exc:
        raise StudyError(f"cannot read {rel}: {exc.strerror}; not changed.") from None
    if not stat.S_ISREG(before.st_mode):
        raise StudyError(f"{rel} is not a regular file any more; not changed.")
    if not before.st_mode & 0o222 or not os.access(real, os.W_OK):  # root too honours 0444
        raise StudyError(
            f"{rel} is read-only; not changed.",
            hint="Make it writable (chmod u+w) if studykb should edit it.",
        )
    return real, before


def _read_stable(real: Path, rel: str, before: os.stat_result) -> tuple[bytes, os.stat_result]:
    """The bytes of the file at ``real`` and its stat after the read; :class:`FileChanged`
    when it is not the file ``before`` described all along, or it is empty."""
    try:
        fd = os.open(real, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK)
    except OSError as exc:
        raise StudyError(f"cannot read {rel}: {exc.strerror}; not changed.") from None
    try:
        opened = os.fstat(fd)
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        after = os.fstat(fd)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if (
        _identity(before) != _identity(opened)
        or _identity(opened) != _identity(after)
        or len(data) != after.st_size
    ):
        raise FileChanged(
            f"{rel} changed while it was being read (an editor saving?); "
            "not changed. Run the command again."
        )
    if not data.strip():
        raise FileChanged(f"{rel} is empty (an editor may be saving it); not changed.")
    return data, after


def _identity(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
