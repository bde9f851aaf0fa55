"""A piped command talks only to a watch that is provably this user's (issue 30, Medium).

A socket at ``.studykb/serve.sock`` that is not a socket, belongs to another user, or can
be written by other users is never connected to: nothing of the command line is sent,
the command is answered here with a one-line notice. What a server answers is printed
as a local run prints it, control characters made visible.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from studykb import launch as client
from studykb.editor import serve

pytestmark = pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="needs Unix sockets")

FILES = {"notes/a.md": "# A\n\nSee [[b]].\n", "notes/b.md": "# B\n\nalpha\n"}
#: What a planted server answers: a title that sets the terminal's window title.
EVIL = "PLANTED \x1b]0;owned\x07 \x1b[2J done\n"


class Fake:
    """A server on the vault's socket that records every connection and what it was sent,
    and answers every request as served, with :data:`EVIL`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.accepted = 0
        self.received: list[bytes] = []
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(path))
        self.sock.listen(8)
        self.sock.settimeout(0.1)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.accepted += 1
            with conn:
                conn.settimeout(2)
                data = b""
                with contextlib.suppress(OSError):
                    while chunk := conn.recv(1 << 16):
                        data += chunk
                self.received.append(data)
                answer = {"served": True, "code": 0, "stdout": EVIL, "stderr": EVIL}
                with contextlib.suppress(OSError):
                    conn.sendall(json.dumps(answer).encode())

    def close(self) -> None:
        self.stop.set()
        self.thread.join(5)
        self.sock.close()


@pytest.fixture
def planted(
    make_vault: Callable[..., Path], run: Callable[..., object], monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Path, Fake]]:
    """A built vault whose ``.studykb/serve.sock`` is a fake server's."""
    monkeypatch.delenv("STUDYKB_LOCAL", raising=False)
    root = make_vault(FILES)
    assert run("check", vault=root).exit_code == 0
    fake = Fake(root / ".studykb" / client.SOCKET_NAME)
    yield root, fake
    fake.close()


def _forward(root: Path, *args: str) -> tuple[int | None, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = client.forward(["--vault", str(root), *args])
    return code, out.getvalue(), err.getvalue()


def _bad_mode(path: Path) -> None:
    os.chmod(path, 0o666)


def _other_user(path: Path) -> None:
    if os.getuid() != 0:
        pytest.skip("giving a file to another user needs root")
    os.chown(path, 65534, 65534)


@pytest.mark.parametrize("spoil", [_bad_mode, _other_user], ids=["mode-0666", "uid-65534"])
def test_a_planted_socket_is_never_sent_the_command(
    planted: tuple[Path, Fake], spoil: Callable[[Path], None]
) -> None:
    root, fake = planted
    spoil(fake.path)
    code, out, err = _forward(root, "search", "alpha", "--json")
    assert code is None  # answered here, by the local run
    assert (out, fake.accepted, fake.received) == ("", 0, [])
    lines = err.splitlines()
    assert len(lines) == 1 and "serve.sock" in lines[0] and "answering here" in lines[0], err


def test_a_planted_socket_in_a_real_process(planted: tuple[Path, Fake]) -> None:
    """``studykb check --json | ...`` with a planted socket: the local answer, one notice,
    and the fake server never hears of it."""
    root, fake = planted
    _bad_mode(fake.path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.pop("STUDYKB_LOCAL", None)
    cmd = [sys.executable, "-m", "studykb", "--vault", str(root), "check", "--json"]
    here = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert here.returncode == 0, here.stderr
    assert json.loads(here.stdout)["problems"] == []
    assert (fake.accepted, fake.received) == (0, [])
    notes = [line for line in here.stderr.splitlines() if line.strip()]
    assert len(notes) == 1 and "can be written by other users" in notes[0], here.stderr


def test_what_is_not_a_socket_is_not_connected_to(
    make_vault: Callable[..., Path], run: Callable[..., object], tmp_path: Path
) -> None:
    """A link at the socket's name, to a server elsewhere: not followed."""
    root = make_vault(FILES)
    assert run("check", vault=root).exit_code == 0
    elsewhere = tmp_path / "s"
    elsewhere.mkdir()
    fake = Fake(elsewhere / "real.sock")
    try:
        (root / ".studykb" / client.SOCKET_NAME).symlink_to(fake.path)
        code, out, err = _forward(root, "check", "--json")
        assert code is None and out == "" and "is not a socket" in err
        assert fake.accepted == 0
    finally:
        fake.close()


def test_a_socket_in_a_folder_others_can_write_is_not_used(planted: tuple[Path, Fake]) -> None:
    """Whoever can write in the folder could have swapped the socket: not used, and the
    local run says what is wrong with the folder (as it does without a watch)."""
    root, fake = planted
    os.chmod(root / ".studykb", 0o777)
    try:
        assert _forward(root, "check", "--json") == (None, "", "")
        assert fake.accepted == 0
    finally:
        os.chmod(root / ".studykb", 0o700)


def test_a_followers_and_an_owner_ignore_a_planted_socket(planted: tuple[Path, Fake]) -> None:
    """The watch and the language server do not follow it (nor send it a subscription),
    and one starting replaces it with its own."""
    root, fake = planted
    _bad_mode(fake.path)
    stop = threading.Event()
    ended = serve.follow(root / ".studykb", stop, lambda owner: None, lambda event: None)
    assert ended == serve.REFUSED
    assert not serve.answers(fake.path)
    assert (fake.accepted, fake.received) == (0, [])


def test_an_answer_is_printed_as_a_local_run_prints(planted: tuple[Path, Fake]) -> None:
    """Even from a server of this user's own, control characters never reach the terminal
    raw: they are shown as the local output shows them."""
    root, fake = planted
    os.chmod(fake.path, 0o600)
    code, out, err = _forward(root, "search", "alpha", "--json")
    assert code == 0 and fake.accepted == 1
    assert "\x1b" not in out and "\x07" not in out and "\x1b" not in err
    assert out == "PLANTED ␛]0;owned␇ ␛[2J done\n" == err
