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
import json
import os
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from studykb import __version__
from studykb.editor.client import PROTOCOL, SOCKET_NAME

#: Largest request read (a command line).
MAX_REQUEST = 1 << 20


#: Runs a command line: (exit code, stdout, stderr).
Runner = Callable[[list[str]], tuple[int, str, str]]


class CommandServer:
    """Serves commands on ``<state dir>/serve.sock`` from a thread, until :meth:`stop`.

    ``accepts(argv)`` says whether a command line may be answered here, ``run(argv)``
    answers it; both come from the command line's own layer (:mod:`studykb.cli.served`).
    """

    def __init__(self, state_dir: Path, accepts: Callable[[list[str]], bool], run: Runner,
                 lock: threading.Lock) -> None:
        self.path = state_dir / SOCKET_NAME
        self.accepts = accepts
        self.run = run
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
                and self.accepts(argv)):
            with self.lock:
                code, out, err = self.run(argv)
            answer = {"served": True, "code": code, "stdout": out, "stderr": err}
        conn.settimeout(None)
        conn.sendall(json.dumps(answer, ensure_ascii=False).encode())


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
