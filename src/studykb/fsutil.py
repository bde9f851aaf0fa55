"""Atomic file writes: a temporary file in the same folder, then ``os.replace``.

``write_atomic`` is for the user's files (``mark``, ``sidebar --write``): it keeps the
file's mode, syncs the data, and with ``expect`` refuses to replace a file that changed
since it was read. ``write_cache`` is for studykb's own caches in ``.studykb/``: best
effort, since a cache that cannot be written only makes the next query slower.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import tempfile
from pathlib import Path
from typing import Any

from .errors import StudyError


def write_atomic(path: Path, data: bytes, expect: bytes | None = None) -> None:
    """Replace ``path`` with ``data``; with ``expect``, only if it still holds those bytes."""
    if expect is not None:
        try:
            current = path.read_bytes()
        except FileNotFoundError:
            current = None
        if current != expect:
            raise StudyError(f"{path.name} changed while it was being edited; not written.")
    mode = None
    with contextlib.suppress(FileNotFoundError):
        mode = path.stat().st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_cache(path: os.PathLike[str] | str, *objects: Any) -> None:
    """Pickle ``objects`` one after another into ``path`` atomically; OSError is ignored."""
    folder = os.path.dirname(os.fspath(path))
    name = os.path.basename(os.fspath(path))
    with contextlib.suppress(OSError):
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "wb") as fh:
                for obj in objects:
                    pickle.dump(obj, fh, protocol=5)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
