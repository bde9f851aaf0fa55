"""Reading and rewriting the user's own files without ever losing a byte of theirs.

Only commands whose job is to write (``mark``, ``sidebar --write``, ``new``, ``mv``) change a
user's file, and they all go through this module:

* :func:`read_for_edit` reads a file whole and *stable*: its real path lies inside the
  vault (a symbolic link is followed to its target, which must be inside too), it is a
  regular file the user may write, and its size, mtime and inode are the same before and
  after the read. An empty file is refused: it is what an editor that truncates and then
  writes leaves for an instant.
* :func:`replace` puts new bytes in its place only if it still holds what was read. The
  new content goes to a temporary file beside it (same owner and mode), which is then
  *exchanged* with the file in one step (Linux ``renameat2(RENAME_EXCHANGE)``, macOS
  ``renamex_np(RENAME_SWAP)``). What comes out of the exchange is what the file held at
  that instant: if it is not what was read (an editor saved meanwhile), the exchange is
  undone (by exchanges again, as often as the editor saves meanwhile) and its newest
  save stays. Where the system cannot exchange, the file is compared once more right
  before ``os.replace``. A file with several hard links is
  rewritten in place (keeping the links), after the same comparison.
* :func:`create` writes a new file, never over an existing one, with the user's umask.

Temporary files are named ``.NAME.studykb-PID-XXXX.tmp``; :func:`stale_temporary` tells
which of them a killed process left behind, so the next scan removes them.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from studykb.errors import StudyError
from studykb.runtime import process
from studykb.vault.reads import FileChanged as FileChanged
from studykb.vault.reads import Read as Read
from studykb.vault.reads import read_for_edit as read_for_edit
from studykb.vault.reads import read_in as read_in
from studykb.vault.reads import read_note as read_note

#: Errors of a file that went between being listed and being read (seen at the next scan).
VANISHED = frozenset({errno.ENOENT, errno.ENOTDIR})

#: Temporary files of studykb's own: ``.NAME.studykb-PID-RANDOM.tmp``; earlier versions
#: named them ``.NAME.XXXXXXXX.tmp`` (``tempfile.mkstemp``).
TEMPORARY = re.compile(r"^\.(?P<name>.+)\.studykb-(?P<pid>\d+)-[0-9a-f]{8}\.tmp$")
_OLD_TEMPORARY = re.compile(r"^\.(?P<name>.+\.md)\.[a-z0-9_]{8}\.tmp$")
#: Seconds after which a temporary file of a process that may still live is stale anyway.
STALE_AFTER = 3600.0


def replace(read: Read, new: bytes) -> None:
    """Put ``new`` in place of the file ``read`` came from, if it still holds ``read.data``.

    Raises :class:`FileChanged` (and leaves the file as the other writer left it) when it
    changed since it was read.
    """
    if read.nlink > 1:
        _rewrite_in_place(read, new)
        return
    tmp = _write_temporary(read.path, new, read.mode, read.uid, read.gid)
    try:
        new_ino = os.lstat(tmp).st_ino
        with _Guard(read) as guard:
            guard.check()
            if _exchange(tmp, read.path):
                if not guard.untouched(tmp):
                    # someone saved meanwhile: their file is at ``tmp`` now; put it back
                    _put_back(tmp, read.path, new_ino)
                    raise _changed(read)
            else:
                guard.check()
                os.replace(tmp, read.path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    sync_folder(read.path.parent)


def _put_back(tmp: Path, path: Path, ours: int) -> None:
    """After an exchange brought another writer's save out to ``tmp``: put it back at
    ``path``, where our file (inode ``ours``) went.

    The writer may save yet again, over ours, at any instant, so the put-back is an
    exchange too, and what it brings out tells whether it was the last step: the file
    placed at ``path`` before it (ours, first) means nobody saved in between; anything
    else is a newer save that went over it, which the next exchange puts back in turn.
    What is left at ``tmp`` at the end (ours, or a save that a newer one superseded) is
    removed by the caller.
    """
    with contextlib.suppress(OSError):
        if os.lstat(path).st_ino != ours:
            return  # they saved over ours already: the newest save is in place
        placed = ours
        for _attempt in range(100):
            moving = os.lstat(tmp).st_ino
            if not _exchange(tmp, path):
                return
            came = os.lstat(tmp).st_ino
            if came == placed:
                return  # nobody saved in between: the newest save is at ``path``
            placed = moving  # a newer save came out: it goes back, the older one out


def _changed(read: Read) -> FileChanged:
    return FileChanged(
        f"{read.shown} changed while studykb was editing it (an editor "
        "saving?); not changed. Run the command again."
    )


class _Guard:
    """The file being replaced, held open (and, where the system allows, under a write
    lease) from the last comparison until the exchange is confirmed.

    A lease (Linux ``F_SETLEASE``) makes any other process that opens the file in that
    window wait, and tells studykb it happened: an editor that opened the old file just
    before the exchange, to write into it in place, is then given its file back instead
    of writing into one that is about to be deleted. All reads go through the one file
    descriptor (opening the file again would break the lease).
    """

    def __init__(self, read: Read) -> None:
        self.read = read
        self.fd = -1
        self.leased = False

    def __enter__(self) -> _Guard:
        try:
            self.fd = os.open(
                self.read.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK
            )
        except OSError:
            raise _changed(self.read) from None
        self.leased = _take_lease(self.fd)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fd >= 0:
            os.close(self.fd)  # releases the lease: a waiting opener goes on

    def _same(self) -> bool:
        read = self.read
        st = os.fstat(self.fd)
        if (st.st_ino, st.st_size, st.st_mtime_ns) != (read.ino, read.size, read.mtime_ns):
            return False
        return os.pread(self.fd, read.size + 1, 0) == read.data and not self.broken()

    def broken(self) -> bool:
        """Whether another process opened the file since the lease was taken."""
        if not self.leased:
            return False
        import fcntl  # deferred: Unix only (a lease is taken only where it exists)

        return bool(fcntl.fcntl(self.fd, fcntl.F_GETLEASE) != fcntl.F_WRLCK)

    def check(self) -> None:
        """FileChanged unless the file at its path is still the one read, unchanged."""
        try:
            ok = os.lstat(self.read.path).st_ino == self.read.ino and self._same()
        except OSError:
            ok = False
        if not ok:
            raise _changed(self.read)

    def untouched(self, moved_to: Path) -> bool:
        """After the exchange: the old file (now at ``moved_to``) is as read, and nobody
        opened it meanwhile."""
        try:
            return os.lstat(moved_to).st_ino == self.read.ino and self._same()
        except OSError:
            return False


def _take_lease(fd: int) -> bool:
    """A write lease on ``fd``'s file, where Linux gives one (False elsewhere: the
    comparisons alone then guard the exchange).

    The kernel tells a lease holder of a breaker with SIGIO, whose default action ends
    the process: leases are taken only where SIGIO is ignored or handled (the main
    thread sets it to be ignored).
    """
    try:
        import fcntl  # deferred: Unix only, missing elsewhere
    except ImportError:
        return False
    if not hasattr(fcntl, "F_SETLEASE"):
        return False
    if signal.getsignal(signal.SIGIO) == signal.SIG_DFL:
        if threading.current_thread() is not threading.main_thread():
            return False
        signal.signal(signal.SIGIO, signal.SIG_IGN)
    for _attempt in range(20):  # another process has it open for a moment (an editor)
        try:
            fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_WRLCK)
            return True
        except OSError as exc:
            if exc.errno != errno.EAGAIN:
                return False  # not supported here (a network file system...)
            time.sleep(0.002)
    return False


def _rewrite_in_place(read: Read, new: bytes) -> None:
    """Rewrite a file with several hard links through its inode, keeping the links.

    A copy of the old bytes is kept beside it (``.NAME.studykb-PID-XXXX.bak``) until the
    new ones are on disk, so a process killed halfway leaves the old content next to the
    file; the scan reports such a copy and never deletes it.
    """
    backup = _write_temporary(read.path, read.data, read.mode, read.uid, read.gid, ".bak")
    fd = os.open(read.path, os.O_RDWR | getattr(os, "O_NOFOLLOW", 0))
    try:
        st = os.fstat(fd)
        current = b"".join(iter(lambda: os.read(fd, 1 << 20), b""))
        if (st.st_ino, st.st_size, st.st_mtime_ns) != (
            read.ino,
            read.size,
            read.mtime_ns,
        ) or current != read.data:
            os.unlink(backup)
            raise FileChanged(
                f"{read.shown} changed while studykb was editing it; not "
                "changed. Run the command again."
            )
        os.lseek(fd, 0, os.SEEK_SET)
        view = memoryview(new)
        while view:
            view = view[os.write(fd, view) :]
        os.ftruncate(fd, len(new))
        os.fsync(fd)
    finally:
        os.close(fd)
    os.unlink(backup)  # kept only if this process died above


def _write_temporary(
    beside: Path, data: bytes, mode: int, uid: int, gid: int, suffix: str = ".tmp"
) -> Path:
    """A new file next to ``beside`` holding ``data``, synced, with the given mode/owner."""
    name = f".{beside.name}.studykb-{os.getpid()}-{os.urandom(4).hex()}{suffix}"
    tmp = beside.with_name(name)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise StudyError(_cannot_write(beside.parent, exc)) from None
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fchmod(fd, mode)
        if (uid, gid) != (os.getuid(), os.getgid()):
            with contextlib.suppress(OSError):  # only root may give a file away
                os.fchown(fd, uid, gid)
        os.fsync(fd)
    except OSError as exc:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise StudyError(_cannot_write(beside.parent, exc)) from None
    os.close(fd)
    return tmp


def _cannot_write(folder: Path, exc: OSError) -> str:
    if exc.errno == errno.ENOSPC:
        return f"disk full: cannot write in {folder}; nothing was changed."
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return f"cannot write in {folder} ({exc.strerror}); nothing was changed."
    return f"cannot write in {folder}: {exc.strerror or exc}; nothing was changed."


def sync_folder(folder: Path) -> None:
    """fsync a folder, so a rename in it survives a crash (best effort)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


# -- exchanging two names in one step ------------------------------------------------------

_RENAME_EXCHANGE = 2  # Linux <linux/fs.h>
_RENAME_SWAP = 2  # macOS <stdio.h>
_AT_FDCWD = -100


def _load_libc() -> Any:
    # deferred: ctypes loads only when a write exchanges two files
    import ctypes
    import ctypes.util  # deferred: as above

    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    except OSError:
        return False  # no C library to call: never exchange


def _exchange(a: Path, b: Path) -> bool:
    """Swap the files named ``a`` and ``b`` atomically; False where the system cannot."""
    libc = process.once("vault.libc", _load_libc)  # loaded once for the process
    if not libc:
        return False
    import ctypes  # deferred: loaded by _load_libc already

    if sys.platform.startswith("linux") and hasattr(libc, "renameat2"):
        rc = libc.renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    elif sys.platform == "darwin" and hasattr(libc, "renamex_np"):
        rc = libc.renamex_np(os.fsencode(a), os.fsencode(b), _RENAME_SWAP)
    else:
        return False
    if rc == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False  # this file system cannot: compare and replace instead
    raise StudyError(_cannot_write(b.parent, OSError(code, os.strerror(code))))


# -- new files -------------------------------------------------------------------------------


def create(root: Path, target: Path, data: bytes) -> None:
    """Write a new file at ``target`` (inside ``root``), never over an existing one.

    Its folders are created as needed; the real folder must lie inside the vault (a
    folder that is a link out of it is refused). The file gets the mode the user's
    umask gives new files.
    """
    base = Path(os.path.realpath(root))
    folder = target.parent
    existing = folder
    while not existing.exists():
        existing = existing.parent
    if not Path(os.path.realpath(existing)).is_relative_to(base):
        raise StudyError(f"{existing} is a link out of the vault; not writing there.")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StudyError(_cannot_write(folder, exc)) from None
    real_folder = Path(os.path.realpath(folder))
    if not real_folder.is_relative_to(base):
        raise StudyError(f"{folder} is a link out of the vault; not writing there.")
    umask = _umask()
    tmp = _write_temporary(
        real_folder / target.name, data, 0o666 & ~umask, os.getuid(), os.getgid()
    )
    final = real_folder / target.name
    try:
        try:
            os.link(tmp, final)  # atomic, and refuses an existing name
        except FileExistsError:
            raise StudyError(f"{target} exists already; not overwriting it.") from None
        except OSError as exc:
            if exc.errno not in (
                errno.EPERM,
                errno.ENOTSUP,
                errno.EOPNOTSUPP,
                errno.EXDEV,
                errno.EMLINK,
            ):
                raise StudyError(_cannot_write(folder, exc)) from None
            try:  # no hard links here (FAT, some shares): reserve the name, then replace
                os.close(os.open(final, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
            except FileExistsError:
                raise StudyError(f"{target} exists already; not overwriting it.") from None
            os.replace(tmp, final)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    sync_folder(real_folder)


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current


# -- leftovers of killed processes --------------------------------------------------------------


def stale_temporary(name: str, folder: str, now: float | None = None) -> bool:
    """Whether the hidden file ``name`` in ``folder`` is a temporary file of studykb's
    own that no running process will finish (its process is gone, or it is old)."""
    match = TEMPORARY.match(name)
    old = match is None and _OLD_TEMPORARY.match(name) is not None
    if match is None and not old:
        return False
    try:
        age = (now or time.time()) - os.lstat(os.path.join(folder, name)).st_mtime
    except OSError:
        return False
    if age > STALE_AFTER:
        return True
    if match is None:
        return False  # an earlier version's: only by age
    pid = int(match.group("pid"))
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True  # its process is gone: nothing will finish or rename it, however new
    except PermissionError:
        return False
    return False


# -- moving a file ------------------------------------------------------------------------------


def remove(read: Read) -> None:
    """Delete the file ``read`` came from (its content now lives elsewhere, written by
    :func:`create`), only if it still holds what was read; FileChanged otherwise."""
    with _Guard(read) as guard:
        guard.check()
        os.unlink(read.path)
    sync_folder(read.path.parent)
