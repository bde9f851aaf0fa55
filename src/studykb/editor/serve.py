"""The vault's socket: one process owns the live state, the others follow it (see watch.py).

The process that keeps a vault fresh (``studykb watch``, ``studykb lsp`` or the web view,
whichever started first) holds ``.studykb/serve.lock`` and listens on
``.studykb/serve.sock`` (a Unix socket, mode 0600: only its owner can connect; no
network port is opened). On it, it

* runs commands for other ``studykb`` processes (studykb.launch), one at a time, under the
  lock the owner holds while it refreshes: a request is one JSON line
  ``{"protocol", "version", "argv"}``; the answer is one JSON object
  ``{"served", "code", "stdout", "stderr"}`` (``served`` false: run it yourself);
* tells followers what changed: a request ``{"protocol", "version", "subscribe": true}``
  is answered by a line ``{"served": true, "subscribed": true, "owner": {"pid", "role",
  "version"}}``, then one line ``{"event": "changed", "paths": [...], "config": bool}``
  after every refresh that changed the state, until either side closes.

Both kinds share protocol 1: a server of an earlier version answers a subscription
with ``{"served": false}``, which a follower takes as "cannot be followed"; an earlier
client never asks for one. The lock file (``flock``, released by the system when its
holder dies, however it dies) decides the owner, so two processes starting at once
never both serve.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from studykb import __version__
from studykb.launch import PROTOCOL, SOCKET_NAME, ours, refusal

#: Largest request read (a command line).
MAX_REQUEST = 1 << 20
LOCK_NAME = "serve.lock"
#: Seconds a follower's socket may block on a send before it is dropped.
SEND_TIMEOUT = 2.0


#: Runs a command line: (exit code, stdout, stderr).
Runner = Callable[[list[str]], tuple[int, str, str]]


@dataclass(frozen=True)
class Owner:
    """The process that owns a vault's live state, as it introduces itself."""

    pid: int
    role: str
    """``watch``, ``lsp`` or ``web``."""
    version: str = ""

    def describe(self) -> str:
        return f"studykb {self.role}, pid {self.pid}"


def _never(_argv: list[str]) -> bool:
    return False


class CommandServer:
    """Serves ``<state dir>/serve.sock`` from a thread, until :meth:`stop`.

    ``accepts(argv)`` says whether a command line may be answered here, ``run(argv)``
    answers it; both come from the command line's own layer (:mod:`studykb.cli.served`).
    Without them it only serves followers.
    """

    def __init__(
        self,
        state_dir: Path,
        accepts: Callable[[list[str]], bool] | None = None,
        run: Runner | None = None,
        lock: threading.Lock | None = None,
        role: str = "watch",
    ) -> None:
        self.path = state_dir / SOCKET_NAME
        self.lock_path = state_dir / LOCK_NAME
        self.accepts = accepts if accepts is not None and run is not None else _never
        self.run = run
        self.lock = lock if lock is not None else threading.Lock()
        self.role = role
        self.serves_commands = accepts is not None and run is not None
        self._sock: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._inode: int | None = None
        self._held: int | None = None
        self._followers: list[socket.socket] = []
        self._followers_lock = threading.Lock()

    def start(self) -> bool:
        """Own the vault and listen; False when another process owns it (or answers on the
        socket), or this system has no Unix sockets."""
        if not hasattr(socket, "AF_UNIX") or not self.own():
            return False
        if answers(self.path):
            self.release()
            return False  # an earlier studykb (without the lock file) serves this vault
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()  # left by a watch that was killed
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)  # the socket is born rw for its owner only
        try:
            sock.bind(str(self.path))
        except OSError:
            sock.close()
            return False  # a path too long for a socket: the lock is kept (still the owner)
        finally:
            os.umask(old)
        sock.listen(8)
        self._sock = sock
        self._inode = self.path.stat().st_ino
        self._thread = threading.Thread(target=self._serve, name="studykb-serve", daemon=True)
        self._thread.start()
        return True

    @property
    def listening(self) -> bool:
        return self._sock is not None

    def own(self) -> bool:
        """Take the ownership lock (kept until :meth:`stop`); False when another holds it."""
        if self._held is not None:
            return True
        try:
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError:
            return True  # cannot lock here (a read-only state folder): behave as before
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        self._held = fd
        return True

    def release(self) -> None:
        fd, self._held = self._held, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)  # closing the file releases the lock

    def stop(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.close()
            with contextlib.suppress(OSError):
                if self.path.stat().st_ino == self._inode:  # still ours
                    self.path.unlink()
        with self._followers_lock:
            followers, self._followers = self._followers, []
        for conn in followers:
            with contextlib.suppress(OSError):
                conn.close()
        self.release()

    # -- followers -------------------------------------------------------------------------
    @property
    def followers(self) -> int:
        with self._followers_lock:
            return len(self._followers)

    def broadcast(self, paths: list[str], config: bool = False) -> None:
        """Tell every follower that the state changed (a follower that cannot take it in
        time is dropped; it notices and catches up on its own)."""
        line = (
            json.dumps(
                {"event": "changed", "paths": paths, "config": config}, ensure_ascii=False
            ).encode()
            + b"\n"
        )
        with self._followers_lock:
            followers = list(self._followers)
        dead = []
        for conn in followers:
            try:
                conn.sendall(line)
            except OSError:
                dead.append(conn)
        if dead:
            with self._followers_lock:
                self._followers = [c for c in self._followers if c not in dead]
            for conn in dead:
                with contextlib.suppress(OSError):
                    conn.close()

    # -- the socket ------------------------------------------------------------------------
    def _serve(self) -> None:
        while self._sock is not None:
            try:
                conn, _addr = self._sock.accept()
            except OSError:
                return  # closed by stop()
            kept = False
            try:
                kept = self._answer(conn)
            except Exception:  # noqa: BLE001 - one bad request never stops it
                kept = False
            if not kept:
                with contextlib.suppress(OSError):
                    conn.close()

    def _answer(self, conn: socket.socket) -> bool:
        """Answer one request; True when the connection is kept (a follower)."""
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
        same = request.get("protocol") == PROTOCOL and request.get("version") == __version__
        if same and request.get("subscribe") is True:
            hello = {
                "served": True,
                "subscribed": True,
                "owner": {"pid": os.getpid(), "role": self.role, "version": __version__},
            }
            conn.settimeout(SEND_TIMEOUT)
            conn.sendall(json.dumps(hello).encode() + b"\n")
            with self._followers_lock:
                self._followers.append(conn)
            return True
        argv = request.get("argv")
        answer: dict[str, Any] = {"served": False}
        if (
            same
            and isinstance(argv, list)
            and all(isinstance(a, str) for a in argv)
            and self.run is not None
            and self.accepts(argv)
        ):
            with self.lock:
                code, out, err = self.run(argv)
            answer = {"served": True, "code": code, "stdout": out, "stderr": err}
        conn.settimeout(None)
        conn.sendall(json.dumps(answer, ensure_ascii=False).encode())
        return False


# -- following ----------------------------------------------------------------------------------
#: How a subscription ended: the owner went away, it cannot be followed (another version,
#: no socket), or ``stop`` was set.
GONE, REFUSED, STOPPED = "gone", "refused", "stopped"


def follow(
    state_dir: Path,
    stop: threading.Event,
    on_owner: Callable[[Owner], None],
    on_event: Callable[[dict[str, Any]], None],
    connect_timeout: float = 0.5,
) -> str:
    """Subscribe to the owner of the vault and call ``on_event`` for each of its events
    (``on_owner`` first, once subscribed), until the owner goes or ``stop`` is set."""
    path = state_dir / SOCKET_NAME
    request = {"protocol": PROTOCOL, "version": __version__, "subscribe": True}
    refused = refusal(path)
    if refused is not None:  # no socket (gone), or one that is not this user's own
        return REFUSED if refused else GONE
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    except (AttributeError, OSError):
        return REFUSED
    with conn:
        try:
            conn.settimeout(connect_timeout)
            conn.connect(str(path))
            if not ours(conn):
                return REFUSED
            conn.settimeout(5.0)
            conn.sendall(json.dumps(request).encode() + b"\n")
            reader = _Lines(conn)
            hello = reader.next(stop)
        except (OSError, ValueError):
            return GONE
        if hello is None:
            return STOPPED if stop.is_set() else GONE
        if not hello.get("subscribed"):
            return REFUSED
        owner = hello.get("owner") or {}
        on_owner(
            Owner(
                int(owner.get("pid") or 0),
                str(owner.get("role") or "watch"),
                str(owner.get("version") or ""),
            )
        )
        while True:
            try:
                event = reader.next(stop)
            except (OSError, ValueError):
                return GONE
            if event is None:
                return STOPPED if stop.is_set() else GONE
            on_event(event)


class _Lines:
    """JSON lines read from a socket, waking up now and then to look at ``stop``."""

    def __init__(self, conn: socket.socket) -> None:
        self.conn = conn
        self.buffer = b""

    def next(self, stop: threading.Event) -> dict[str, Any] | None:
        self.conn.settimeout(0.25)
        while b"\n" not in self.buffer:
            if stop.is_set():
                return None
            try:
                chunk = self.conn.recv(1 << 16)
            except TimeoutError:
                continue
            if not chunk:
                return None
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        value = json.loads(line)
        return value if isinstance(value, dict) else {}


def answers(path: Path) -> bool:
    """Whether a server of this user's is listening on ``path`` (a socket another user
    planted does not count: it is neither asked nor followed, and an owner replaces it)."""
    if refusal(path) is not None:
        return False
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(0.5)
        try:
            probe.connect(str(path))
        except OSError:
            return False
        return ours(probe)


#: The name the web view's first version imports.
_answers = answers
