"""``studykb lsp``: the language server run on standard input and output (or given
streams), leaving on an interrupt."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
from typing import Any

from studykb.editor.lsp import StudyServer
from studykb.editor.lsp_features import build
from studykb.editor.watch import ServerFactory
from studykb.runtime.memory import long_lived, responsive


def serve(
    vault_dir: str | None,
    stdin: Any = None,
    stdout: Any = None,
    commands: ServerFactory | None = None,
) -> None:
    """Run the server over stdio until the client says exit (or closes the pipe)."""
    long_lived()
    logging.basicConfig(level=logging.WARNING, format="studykb lsp: %(message)s")
    # the watcher thread refreshes in the background: hand the interpreter back to the
    # request loop more often than every 5 ms, so answers stay quick meanwhile
    responsive()

    server = build(vault_dir, commands)
    _leave_on_interrupt(server)
    stdin, stdout = _own_streams(stdin, stdout)
    try:
        server.start_io(stdin, stdout)
    finally:
        server.close()


def _own_streams(stdin: Any, stdout: Any) -> tuple[Any, Any]:
    """The editor's pipes as files of the server's own; ``sys.stdin`` becomes the null
    device and ``sys.stdout`` standard error.

    A first build of a large vault parses in forked worker processes, and a forked
    worker starts by closing ``sys.stdin``: with the server's reading thread holding that
    file's lock (it always waits in a read), the worker would wait for it forever, and the
    build with it. A stray print can no longer break the protocol either.
    """
    if stdin is None or stdout is None:
        return stdin, stdout
    try:
        own_in = os.fdopen(os.dup(stdin.fileno()), "rb")
        own_out = os.fdopen(os.dup(stdout.fileno()), "wb")
    except (OSError, ValueError, AttributeError):
        return stdin, stdout  # not files (an in-process test): nothing to protect
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - lives as long as we do
    sys.stdout = sys.stderr
    return own_in, own_out


def _leave_on_interrupt(server: StudyServer) -> None:
    """Ctrl-C (or SIGTERM) ends the server at once: its socket is removed and the process
    leaves, without waiting for the thread that reads standard input (whose lock a
    second Ctrl-C would otherwise find taken at shutdown: a fatal error, exit 134)."""

    def leave(signum: int, _frame: object) -> None:
        with contextlib.suppress(Exception):
            server.close()
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        os._exit(130 if signum == signal.SIGINT else 0)

    with contextlib.suppress(ValueError):  # only the main thread may set handlers
        signal.signal(signal.SIGINT, leave)
        signal.signal(signal.SIGTERM, leave)
