"""A speed seam of the refresh started ahead (:meth:`Vault.refresh_ahead`): the folder
walked here while the refresh beside loads the parser.

After an edit, the refresh beside a fresh command walks the folder (a ``stat`` of every
file: about 45 ms of CPU at 10k notes), then loads markdown-it, YAML and the parser
(about 45 ms) to read the edited file, one after the other, while this process has
little to do but wait (loading click, the command's module). With ``walk_here``, the
two run side by side: the refresh beside loads the parser and reads the stored files'
stamps while this process walks the folder and hands it what it found through a pipe
(plain data: JSON and integers); the refresh then goes on exactly as with its own walk
(:meth:`Refresh.run` with ``given`` and ``stamps``: a refresh reads the stamps after its
walk, a concurrent one may have written in between either way). When
nothing changed, the parser was loaded for nothing, in time this process would have
waited anyway. Whatever goes wrong with the walk here or its way there (an error, the
pipe closed early, something that is not a walk), the refresh beside walks the folder
itself.

Not for a command with work of its own to do meanwhile (``related``, ``search``:
:data:`studykb.launch.COMMANDS`): that work would wait for the walk.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import struct
import time
from array import array
from typing import TYPE_CHECKING, Any

from studykb.model import Problem
from studykb.vault.refresh import PARALLEL_THRESHOLD, Ahead, Refresh
from studykb.vault.scan import Scan, scan

if TYPE_CHECKING:
    from studykb.vault import Vault

#: Room asked for in the pipe, so the walk is written at once (Linux; best effort).
_PIPE_BYTES = 1 << 20
#: The lengths that open a walk as sent: its small parts (JSON), its paths, how many.
_HEAD = struct.Struct("<QQQ")
#: What the small parts of a walk are.
_FIELDS = frozenset({"scanned_ns", "attachments", "attachment_names", "problems", "stale"})


def encode(found: Scan, scanned_ns: int) -> bytes:
    """A walk as plain data: its small parts as JSON, then every Markdown file's path
    (NUL-separated UTF-8), mtime and size (64-bit integers); a quarter of the time
    JSON takes for 10k files, both ways."""
    small = json.dumps(
        {
            "scanned_ns": scanned_ns,
            "attachments": found.attachments,
            "attachment_names": found.attachment_names,
            "problems": [(p.path, p.line, p.severity, p.code, p.message) for p in found.problems],
            "stale": found.stale,
        }
    ).encode()
    paths = "\0".join(found.files).encode("utf-8", "surrogatepass")
    mtimes = array("q", [st[0] for st in found.files.values()])
    sizes = array("q", [st[1] for st in found.files.values()])
    head = _HEAD.pack(len(small), len(paths), len(found.files))
    return b"".join((head, small, paths, mtimes.tobytes(), sizes.tobytes()))


def decode(data: bytes) -> tuple[Scan, int] | None:
    """The walk :func:`encode` sent, and when it started; None for anything else (empty:
    the walk did not come)."""
    try:
        n_small, n_paths, count = _HEAD.unpack_from(data)
        at = _HEAD.size
        if len(data) != at + n_small + n_paths + 16 * count:
            return None
        given = json.loads(data[at : at + n_small])
        at += n_small
        text = data[at : at + n_paths].decode("utf-8", "surrogatepass")
        paths = text.split("\0") if count else []
        at += n_paths
        mtimes, sizes = array("q"), array("q")
        mtimes.frombytes(data[at : at + 8 * count])
        sizes.frombytes(data[at + 8 * count :])
        if len(paths) != count or set(given) != _FIELDS:
            return None
        found = Scan(
            files=dict(zip(paths, zip(mtimes, sizes, strict=True), strict=True)),
            attachments=dict(given["attachments"]),
            attachment_names=dict(given["attachment_names"]),
            problems=[Problem(*row) for row in given["problems"]],
            stale=list(given["stale"]),
        )
        return found, int(given["scanned_ns"])
    except (ValueError, TypeError, KeyError, AttributeError, struct.error):
        return None


def start(vault: Vault) -> Ahead | None:
    """:meth:`Vault.refresh_ahead` with the folder walked here (see the module)."""
    # deferred: the worker pools load only for a refresh ahead of the command
    from studykb.runtime import pools

    if vault.store.fresh or not pools.beside_helps() or not pools.can_fork():
        return None
    read, write = os.pipe()
    with contextlib.suppress(OSError, AttributeError):
        import fcntl  # deferred: Linux's pipe size, only here

        fcntl.fcntl(write, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
    try:
        job = pools.beside(_refresh_given, (vault, read, write))
    finally:
        os.close(read)  # the child's end
    try:
        scanned_ns = time.time_ns()
        data = encode(scan(vault.config, vault.site.scope), scanned_ns)
    except Exception:  # noqa: BLE001 - the refresh beside walks the folder itself
        data = b""
    try:
        _send(write, data)
    except OSError:  # it ended already: its result says why
        pass
    finally:
        os.close(write)
    return Ahead(vault, job)


def _send(fd: int, data: bytes) -> None:
    """All of ``data`` into the pipe ``fd`` (a write may take only part of it)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _refresh_given(shared: tuple[Vault, int, int]) -> dict[str, Any] | None:
    """The refresh beside: the parser loaded and the stored stamps read while the walk
    comes, then the refresh."""
    vault, read, write = shared
    os.close(write)  # this process's copy: the walk's end is the parent's alone
    vault.reconnect()
    _load_parser()
    stamps = vault.store.files.stamps()  # as a refresh reads them, before or after its walk
    with open(read, "rb") as pipe:
        given = decode(pipe.read())
    refresh = Refresh(vault)
    if given is None:  # no walk came: the refresh walks, and reads the stamps, itself
        stats = refresh.run(most=PARALLEL_THRESHOLD)
    else:
        stats = refresh.run(most=PARALLEL_THRESHOLD, given=given, stamps=stamps)
    return None if stats is None else dataclasses.asdict(stats)


def _load_parser() -> None:
    """Load what reading a note needs (markdown-it, YAML, the parser)."""
    # deferred: the package only; its parser loads on the attribute below
    from studykb import parse

    parse.parse_file  # noqa: B018 - the attribute loads the parser (PEP 562)
