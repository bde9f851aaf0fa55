"""``studykb watch`` answering commands for other ``studykb`` processes (see client.py).

The watch process already holds everything a command needs, loaded and refreshed: the
vault state, markdown-it, whoosh and an open index, the Chinese segmenter. A
:class:`CommandServer` listens on ``.studykb/serve.sock`` (a Unix socket, mode 0600:
only its owner can connect; no network port is opened) and runs each command it
receives with the watch's own vault, one at a time, under the lock the watch holds
while it refreshes. A command's output is captured and sent back whole, with its exit
code; the client prints it. A request is one JSON line
``{"protocol", "version", "argv"}``; the answer is one JSON object
``{"served", "code", "stdout", "stderr"}`` (``served`` false: run it yourself).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from studykb import __version__
from studykb.editor.client import FORWARDED, LOCAL_OPTIONS, PROTOCOL, SOCKET_NAME, split_argv

#: Largest request read (a command line).
MAX_REQUEST = 1 << 20


class CommandServer:
    """Serves commands on ``<state dir>/serve.sock`` from a thread, until :meth:`stop`."""

    def __init__(self, state_dir: Path, vault: Callable[[], Any], lock: threading.Lock) -> None:
        self.path = state_dir / SOCKET_NAME
        self.vault = vault
        """Returns the vault to answer with (the watch may reopen it)."""
        self.lock = lock
        self._sock: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._inode: int | None = None

    def start(self) -> bool:
        """Listen; False when this system has no Unix sockets or another server answers."""
        if not hasattr(socket, "AF_UNIX"):
            return False
        if _answers(self.path):
            return False  # another watch serves this vault
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()  # left by a watch that was killed
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)  # the socket is born rw for its owner only
        try:
            sock.bind(str(self.path))
        except OSError:
            sock.close()
            return False
        finally:
            os.umask(old)
        sock.listen(8)
        self._sock = sock
        self._inode = self.path.stat().st_ino
        self._thread = threading.Thread(target=self._serve, name="studykb-serve", daemon=True)
        self._thread.start()
        return True

    def stop(self) -> None:
        sock, self._sock = self._sock, None
        if sock is None:
            return
        with contextlib.suppress(OSError):
            sock.close()
        with contextlib.suppress(OSError):
            if self.path.stat().st_ino == self._inode:  # still ours
                self.path.unlink()

    def _serve(self) -> None:
        while self._sock is not None:
            try:
                conn, _addr = self._sock.accept()
            except OSError:
                return  # closed by stop()
            with conn, contextlib.suppress(Exception):  # one bad request never stops it
                self._answer(conn)

    def _answer(self, conn: socket.socket) -> None:
        conn.settimeout(5.0)
        data = b""
        while b"\n" not in data and len(data) < MAX_REQUEST:
            chunk = conn.recv(1 << 16)
            if not chunk:
                break
            data += chunk
        request = json.loads(data.split(b"\n", 1)[0])
        if not isinstance(request, dict):
            raise ValueError("not a request")
        argv = request.get("argv")
        answer: dict[str, Any] = {"served": False}
        if (request.get("protocol") == PROTOCOL and request.get("version") == __version__
                and isinstance(argv, list) and all(isinstance(a, str) for a in argv)
                and servable(argv)):
            with self.lock:
                code, out, err = run_command(self.vault(), argv)
            answer = {"served": True, "code": code, "stdout": out, "stderr": err}
        conn.settimeout(None)
        conn.sendall(json.dumps(answer, ensure_ascii=False).encode())


def servable(argv: list[str]) -> bool:
    """Whether a server may answer ``argv`` (the client checks the same first).

    Beyond the client's quick look, the command line is parsed as the command would
    parse it: any option or argument naming a file or folder, however it is spelled
    (``-oFILE``, ``--output=FILE``), makes it run in the caller's process, where a
    relative path means what the caller meant.
    """
    _vault, command = split_argv(argv)
    if command not in FORWARDED or any(a.split("=", 1)[0] in LOCAL_OPTIONS for a in argv):
        return False
    return not _names_paths(argv)


def _names_paths(argv: list[str]) -> bool:
    """Whether ``argv`` gives a value to any parameter of type File or Path."""
    import click

    from studykb.cli import cli, prepare

    prepare()
    _vault, name = split_argv(argv)
    if name is None:
        return True
    rest = argv[argv.index(name) + 1:]
    try:
        with click.Context(cli, info_name="studykb") as group_ctx:
            cmd = cli.get_command(group_ctx, name)
            if cmd is None:
                return True
            ctx = cmd.make_context(name, list(rest), parent=group_ctx, resilient_parsing=True)
    except (click.ClickException, click.exceptions.Exit):
        return True  # let the command itself say what is wrong, here
    for param in cmd.params:
        if isinstance(param.type, (click.File, click.Path)) and param.name and \
                ctx.get_parameter_source(param.name) not in (
                    click.core.ParameterSource.DEFAULT, None):
            return True
    return False


def run_command(vault: Any, argv: list[str]) -> tuple[int, str, str]:
    """Run the command line ``argv`` with ``vault``; (exit code, stdout, stderr)."""
    import click

    from studykb.cli import Context, cli, prepare

    prepare()
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
            Context.using(vault):
        try:
            rv = cli.main(args=list(argv), prog_name="studykb", standalone_mode=False)
            code = rv if isinstance(rv, int) else 0
        except click.ClickException as exc:
            exc.show()
            code = exc.exit_code
        except click.exceptions.Abort:
            click.echo("Aborted!", err=True)
            code = 1
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except Exception as exc:  # the watch must outlive any one command
            click.echo(f"studykb: internal error: {type(exc).__name__}: {exc}", err=True)
            code = 70
    return code, out.getvalue(), err.getvalue()


def _answers(path: Path) -> bool:
    """Whether a server is listening on ``path``."""
    if not path.exists():
        return False
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(0.5)
        try:
            probe.connect(str(path))
        except OSError:
            return False
    return True
