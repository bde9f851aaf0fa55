"""How a ``studykb`` process starts: the one home of its start-up speed seams.

A fresh ``studykb`` process spends most of its time starting: the interpreter, click,
markdown-it, whoosh, the Chinese segmenter's dictionary, the vault refresh. Two seams
cut that, and both live here, before click loads (this module imports nothing heavy):

* **Forwarding** (:func:`forward`). While ``studykb watch`` runs, all of that is already
  loaded in its process, and it answers commands on a Unix socket in the state folder
  (``.studykb/serve.sock``, readable by the owner only; the server side is
  :mod:`studykb.editor.serve`). This sends it the command line and prints what comes
  back; the answer is the one the command would have given here, after the same
  refresh. Only commands that read are sent (:data:`READING`), only when standard output
  is not a terminal (a terminal gets colours and a width this process knows best), and
  never with ``--output``, ``--write`` or ``--help``. When there is no server, it is
  another studykb version, or anything goes wrong on the way, the command runs here as
  usual. ``STUDYKB_LOCAL=1`` always runs it here. The command line goes only to a server
  that is provably this user's (:func:`refusal`): the socket and the state folder it is
  in are checked before connecting, and the server's process must run as this user. A
  socket planted by someone else is not connected to (nothing is sent to it); the
  command runs here with a one-line notice. Whatever comes back is printed as a local
  run prints (control characters made visible), never raw.
* **The early refresh** (:func:`start_early`). Most commands begin by bringing the
  state up to date. In a fresh process on two cores, the vault is opened and that
  refresh started beside this process (:meth:`studykb.session.Session.refresh_ahead`)
  before click and the command's own modules load; the command takes it over when it
  asks for the knowledge base (``studykb.cli.app.Context``). Whatever goes wrong there
  is left for the command to meet again and report in its own way.

:class:`Launch` carries what these seams hand to the command: the early refresh, or the
session of a watch answering. It travels as click's ``obj``, never as a class or module
attribute. :data:`COMMANDS` is the one table of commands: the module defining each, and
whether it reads only (may be forwarded and refreshed early).
"""

from __future__ import annotations

import json
import os
import stat
import struct
import sys
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from studykb import __version__
from studykb.outputs.terminal import safe

if TYPE_CHECKING:
    from studykb.api import Session
    from studykb.vault import Ahead


@dataclass(frozen=True, slots=True)
class Command:
    """One ``studykb`` command in the table."""

    module: str
    """The module of :mod:`studykb.cli` that defines it (loaded only when it runs)."""
    reads: bool = False
    """It reads the vault and writes nothing of the user's: a running watch may answer
    it, and its refresh may start before click loads."""
    writing: frozenset[str] = frozenset()
    """Its subcommands that write (``repos add``): they always run here."""
    busy: bool = False
    """It has work of its own while its refresh runs beside it (loading the ranking
    code, the search index): the refresh walks the folder itself, else this process
    walks it for the refresh (``studykb.vault.walked``)."""


#: Every command: name -> where it is defined and whether it only reads.
COMMANDS: MappingProxyType[str, Command] = MappingProxyType(
    {
        "after": Command("plans", reads=True),
        "ask": Command("plans", reads=True),
        "backlinks": Command("core", reads=True),
        "before": Command("plans", reads=True),
        "build": Command("core", reads=True),
        "check": Command("core", reads=True),
        "graph": Command("core", reads=True),
        "init": Command("core"),
        "list": Command("notes"),
        "lsp": Command("editor"),
        "mark": Command("plans"),
        "mv": Command("notes"),
        "new": Command("editor"),
        "next": Command("plans", reads=True),
        "related": Command("related", reads=True, busy=True),
        "repos": Command("repos", reads=True, writing=frozenset({"add"})),
        "search": Command("search", reads=True, busy=True),
        "serve": Command("web"),
        "show": Command("core", reads=True),
        "sidebar": Command("related", reads=True),
        "site": Command("web"),
        "status": Command("plans", reads=True),
        "topic": Command("related", reads=True),
        "topics": Command("related", reads=True),
        "watch": Command("editor"),
    }
)
#: Commands a server may answer and whose refresh may start early.
READING = frozenset(name for name, command in COMMANDS.items() if command.reads)

#: Options that write files or ask for help: the command runs here.
LOCAL_OPTIONS = frozenset({"-o", "--output", "--write", "-h", "--help", "--version"})
SOCKET_NAME = "serve.sock"
PROTOCOL = 1
#: Seconds to wait for the server to accept; an answer may take longer (a big refresh).
CONNECT_TIMEOUT = 0.5
ANSWER_TIMEOUT = 600.0


def split_argv(argv: list[str]) -> tuple[str | None, str | None]:
    """(the ``--vault`` value, the command name) of a command line; None where absent."""
    vault = None
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--vault":
            if i + 1 >= len(argv):
                return vault, None
            vault = argv[i + 1]
            i += 2
            continue
        if arg.startswith("--vault="):
            vault = arg.split("=", 1)[1]
        elif not arg.startswith("-"):
            return vault, arg
        i += 1
    return vault, None


def reads_only(argv: list[str]) -> tuple[str | None, bool]:
    """(the ``--vault`` value, whether the command line only reads: its command is one
    of :data:`READING` and it names none of that command's writing subcommands)."""
    vault, command = split_argv(argv)
    if command not in READING:
        return vault, False
    writing = COMMANDS[command].writing
    at = next(i for i, a in enumerate(argv) if a == command and argv[i - 1 : i] != ["--vault"])
    after = argv[at + 1 :]
    sub = next((a for a in after if not a.startswith("-")), None)
    return vault, sub not in writing


def all_text(argv: list[str]) -> bool:
    """Whether every argument is text: bytes that are not UTF-8 reach Python as surrogate
    escapes, which a server's output cannot carry (the command says so when run here)."""
    try:
        for arg in argv:
            arg.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def forward(argv: list[str]) -> int | None:
    """The exit code of ``argv`` answered by a running server, or None to run it here."""
    if os.environ.get("STUDYKB_LOCAL") or sys.stdout.isatty():
        return None
    vault_dir, reading = reads_only(argv)
    if not reading or any(a.split("=", 1)[0] in LOCAL_OPTIONS for a in argv):
        return None
    if not all_text(argv):
        return None  # run here, where it is bad usage with a message (exit 2)
    try:
        # deferred: only this path opens a socket
        import socket

        from studykb.api import STATE_DIR, find_vault  # the configuration only

        path = find_vault(vault_dir) / STATE_DIR / SOCKET_NAME
        if not hasattr(socket, "AF_UNIX"):
            return None
        refused = refusal(path)
        if refused is not None:
            if refused:
                sys.stderr.write(safe(f"studykb: {refused}; not using it, answering here") + "\n")
            return None
        request = json.dumps({"protocol": PROTOCOL, "version": __version__, "argv": argv})
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(CONNECT_TIMEOUT)
            conn.connect(str(path))
            if not ours(conn):
                return None
            conn.settimeout(ANSWER_TIMEOUT)
            conn.sendall(request.encode() + b"\n")
            conn.shutdown(socket.SHUT_WR)
            chunks = []
            while chunk := conn.recv(1 << 16):
                chunks.append(chunk)
        answer = json.loads(b"".join(chunks))
        if not answer.get("served"):
            return None
        code, out, err = int(answer["code"]), str(answer["stdout"]), str(answer["stderr"])
    except Exception:  # no server, a stale socket, another version...: run it here
        return None
    try:
        if out:
            sys.stdout.write(safe(out))
            sys.stdout.flush()
    except BrokenPipeError:  # `| head`: the reader left, as a local run would find it
        closed_pipe()
        return 0
    if err:
        sys.stderr.write(safe(err))
        sys.stderr.flush()
    return code


def refusal(path: Path) -> str | None:
    """Why the socket at ``path`` is not to be connected to; None when it may be.

    "" (say nothing, run here) when there is no socket, or its state folder is not this
    user's private folder (the local run then says what is wrong with the folder, as it
    does without a watch). Otherwise the socket must be a socket, this user's, and not
    writable by others: in a folder only this user can write in, only this user (or
    root) can have put it there, and nobody can swap it between this check and the
    connection. Like the folder's own checks (``studykb.vault.statedir``), but without
    its stamp, which this process starting light does not read: a socket cannot be
    committed or copied with a listener behind it."""
    try:
        folder = os.lstat(path.parent)
        st = os.lstat(path)
    except OSError:
        return ""
    if _others_could_write(folder) or not stat.S_ISDIR(folder.st_mode):
        return ""
    mode = stat.S_IMODE(st.st_mode)
    if not stat.S_ISSOCK(st.st_mode):
        return f"{path} is not a socket"
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return f"the socket {path} belongs to another user (uid {st.st_uid})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"the socket {path} can be written by other users (mode {mode:04o})"
    return None


def _others_could_write(st: os.stat_result) -> bool:
    """Whether a file or folder is another user's, or writable by other users."""
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return True
    return bool(st.st_mode & (stat.S_IWGRP | stat.S_IWOTH))


def ours(conn: object) -> bool:
    """Whether the process at the other end of a connected Unix socket runs as this
    user (Linux tells, with ``SO_PEERCRED``; elsewhere the socket's owner decided)."""
    # deferred: only this path opens a socket
    import socket

    option = getattr(socket, "SO_PEERCRED", None)
    if option is None or not isinstance(conn, socket.socket) or not hasattr(os, "getuid"):
        return True
    try:
        _pid, uid, _gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, option, 12))
    except OSError:
        return False
    return bool(uid == os.getuid())


def closed_pipe() -> None:
    """Standard output's reader went away: send what is left nowhere (so the exit's own
    flush cannot fail) and say nothing, as ``cat`` and ``git`` do."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


# -- the early refresh -----------------------------------------------------------------------

#: The options after which a command does not run (help, version).
_NOT_RUNNING = frozenset({"-h", "--help", "--version"})


@dataclass
class Early:
    """The vault a command line names, opened, and its refresh under way (or None)."""

    vault_dir: str | None
    """The ``--vault`` value it was opened with."""
    kb: Session
    ahead: Ahead | None

    def discard(self) -> None:
        """Not taken (bad usage): let the refresh finish, and close the vault."""
        try:
            if self.ahead is not None:
                self.ahead.result()
        finally:
            self.kb.close()


def start_early(argv: list[str]) -> Early | None:
    """Open the vault of a command line whose command begins with a refresh, and start
    that refresh; None for any other command line, or when the vault cannot be opened
    here (the command opens it again and says why)."""
    vault_dir, reading = reads_only(argv)
    if not reading or _NOT_RUNNING.intersection(argv):
        return None
    # deferred: the API loads frontmatter, msgpack, yaml for it
    from studykb.api import Session

    try:
        kb = Session.open(vault_dir)
    except Exception:  # noqa: BLE001 - met again, and reported, by the command
        return None
    _vault, command = split_argv(argv)
    walk_here = command is not None and not COMMANDS[command].busy
    try:
        return Early(vault_dir, kb, kb.refresh_ahead(walk_here))
    except BaseException:
        kb.close()
        raise


@dataclass
class Launch:
    """What the start-up seams hand to the command being run (click's ``obj``)."""

    early: Early | None = None
    """The vault the command line names, opened and refreshing before click loaded."""
    warm: Session | None = None
    """A session already open in this process (``studykb watch`` answering)."""

    def take_early(self) -> Early | None:
        """The early refresh, handed over once."""
        early, self.early = self.early, None
        return early
