"""``studykb watch`` answering other studykb commands (serve.py), and the client that asks
(client.py): the same answers as a fresh process, edits seen at once, exit codes kept,
and a fallback to running the command locally whenever the server cannot answer."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from studykb import launch as client
from studykb.cli.served import command_server

pytestmark = pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="needs Unix sockets")

FILES = {
    "notes/kv-cache.md": "---\nid: kv-cache\ntags: [serving]\n---\n# KV cache\n\n"
    "Paged attention keeps the KV cache in blocks. 显存碎片很少。\n",
    "notes/fsdp2.md": "---\nid: fsdp2\nrequires: [kv-cache]\n---\n# FSDP2\n\n"
    "Sharded data parallel training, see [[kv-cache]].\n",
    "notes/broken.md": "# Broken\n\nLinks to [[nowhere]].\n",
}


@pytest.fixture
def served(make_vault, open_vault, monkeypatch) -> Iterator[tuple[Path, object]]:
    """A vault answered by an in-process server (what ``studykb watch`` runs)."""
    monkeypatch.delenv("STUDYKB_LOCAL", raising=False)
    root = make_vault(FILES)
    vault = open_vault(root)
    server = command_server(vault.config.state_dir, lambda: vault, threading.Lock())
    assert server.start()
    yield root, server
    server.stop()


def local(root: Path, *args: str) -> subprocess.CompletedProcess:
    """The same command in a fresh process that never asks a server."""
    env = {**os.environ, "STUDYKB_LOCAL": "1"}
    return subprocess.run(
        [sys.executable, "-m", "studykb", "--vault", str(root), *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        check=False,
    )


def forward(
    _monkeypatch: pytest.MonkeyPatch, root: Path, *args: str
) -> tuple[int | None, str, str]:
    """``client.forward`` in this process, its output captured (not a terminal)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = client.forward(["--vault", str(root), *args])
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(
    "args",
    [
        ("search", "paged attention", "--json"),
        ("search", "显存", "--json"),
        ("check", "--json"),
        ("backlinks", "kv-cache", "--json"),
        ("before", "fsdp2", "--json"),
        ("show", "fsdp2"),
    ],
)
def test_answers_are_those_of_a_fresh_process(served, monkeypatch, args) -> None:
    root, _server = served
    code, out, err = forward(monkeypatch, root, *args)
    fresh = local(root, *args)
    assert code == fresh.returncode
    assert out == fresh.stdout
    assert err == fresh.stderr


def test_an_edit_is_seen_by_the_next_command(served, monkeypatch) -> None:
    root, _server = served
    note = root / "notes" / "fsdp2.md"
    note.write_text(note.read_text(encoding="utf-8") + "\nzeppelin 斑马鱼\n", encoding="utf-8")
    code, out, _err = forward(monkeypatch, root, "search", "zeppelin", "--json")
    assert code == 0
    assert [h["path"] for h in json.loads(out)["hits"]] == ["notes/fsdp2.md"]


def test_exit_codes_and_messages_come_back(served, monkeypatch) -> None:
    root, _server = served
    code, out, err = forward(monkeypatch, root, "show", "no-such-note")
    assert code == 1 and out == "" and "no-such-note" in err
    code, _out, err = forward(monkeypatch, root, "search", "(unclosed AND", "--json")
    assert code == local(root, "search", "(unclosed AND", "--json").returncode
    code, _out, err = forward(monkeypatch, root, "search", "--limit", "0", "x")
    assert code == 2 and "limit" in err.lower()


@pytest.mark.parametrize(
    "args",
    [
        ("sidebar", "--write"),  # writes notes
        ("graph", "-o", "out.json"),  # writes a file relative to the caller's folder
        ("new", "note", "A title"),  # writes a note
        ("mark", "fsdp2", "done"),
        ("search", "--help"),
        ("--version",),
        (),
    ],
)
def test_commands_that_write_or_ask_for_help_run_here(served, monkeypatch, args) -> None:
    root, _server = served
    assert forward(monkeypatch, root, *args)[0] is None


def test_a_terminal_or_STUDYKB_LOCAL_runs_here(served, monkeypatch) -> None:
    root, _server = served
    monkeypatch.setenv("STUDYKB_LOCAL", "1")
    assert forward(monkeypatch, root, "check", "--json")[0] is None
    monkeypatch.delenv("STUDYKB_LOCAL")

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stdout", Terminal())
    assert client.forward(["--vault", str(root), "check"]) is None


def test_another_version_is_not_answered(served, monkeypatch) -> None:
    root, _server = served
    monkeypatch.setattr(client, "__version__", "0.0.0-other")
    assert forward(monkeypatch, root, "check", "--json")[0] is None


def test_stale_socket_falls_back_and_is_replaced(make_vault, open_vault, monkeypatch) -> None:
    monkeypatch.delenv("STUDYKB_LOCAL", raising=False)
    root = make_vault(FILES)
    vault = open_vault(root)
    path = vault.config.state_dir / client.SOCKET_NAME
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))
    dead.close()  # what a killed watch leaves behind
    assert path.exists()
    assert forward(monkeypatch, root, "check", "--json")[0] is None
    server = command_server(vault.config.state_dir, lambda: vault, threading.Lock())
    assert server.start()
    try:
        assert (path.stat().st_mode & 0o777) == 0o600
        second = command_server(vault.config.state_dir, lambda: vault, threading.Lock())
        assert not second.start()  # one server per vault
        assert forward(monkeypatch, root, "check", "--json")[0] == 1  # broken.md dangles
    finally:
        server.stop()
    assert not path.exists()


class _SeenLock:
    """A lock that says when someone starts waiting for it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.waiting = threading.Event()

    def __enter__(self) -> None:
        self.waiting.set()
        self.lock.acquire()

    def __exit__(self, *_exc: object) -> None:
        self.lock.release()


def test_a_busy_watch_answers_after_its_refresh(make_vault, open_vault, monkeypatch) -> None:
    """Commands wait for the lock the watch holds while it refreshes, then answer."""
    monkeypatch.delenv("STUDYKB_LOCAL", raising=False)
    root = make_vault(FILES)
    vault = open_vault(root)
    lock = _SeenLock()
    server = command_server(vault.config.state_dir, lambda: vault, lock)
    assert server.start()
    answered: list[int | None] = []
    try:
        lock.lock.acquire()  # the watch is refreshing
        asking = threading.Thread(
            target=lambda: answered.append(forward(monkeypatch, root, "check", "--json")[0])
        )
        asking.start()
        assert lock.waiting.wait(30), "the request never reached the lock"
        asking.join(0.2)
        assert asking.is_alive() and answered == []  # held back while the lock is held
        lock.lock.release()
        asking.join(30)
        assert answered == [1]  # broken.md dangles
    finally:
        if lock.lock.locked():
            lock.lock.release()
        server.stop()


@pytest.fixture
def watching(make_vault, monkeypatch) -> Iterator[Callable[[], Path]]:
    monkeypatch.delenv("STUDYKB_LOCAL", raising=False)
    procs: list[subprocess.Popen] = []

    def start() -> Path:
        root = make_vault(FILES)
        proc = subprocess.Popen(
            [sys.executable, "-m", "studykb", "--vault", str(root), "watch", "--quiet"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        procs.append(proc)
        sock = root / ".studykb" / client.SOCKET_NAME
        deadline = time.monotonic() + 30
        while not sock.exists():
            assert proc.poll() is None and time.monotonic() < deadline, "watch did not serve"
            time.sleep(0.05)
        return root

    start.procs = procs  # type: ignore[attr-defined]
    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            proc.wait(20)


def test_studykb_watch_serves_and_cleans_up(watching, monkeypatch) -> None:
    root = watching()
    code, out, _err = forward(monkeypatch, root, "search", "paged", "--json")
    assert code == 0 and json.loads(out)["hits"][0]["path"] == "notes/kv-cache.md"
    # the console entry point forwards too, and prints the same as a local run
    env = {k: v for k, v in os.environ.items() if k != "STUDYKB_LOCAL"}
    via = subprocess.run(
        [sys.executable, "-m", "studykb", "--vault", str(root), "check", "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    here = local(root, "check", "--json")
    assert (via.returncode, via.stdout) == (here.returncode, here.stdout)


def test_kill_stops_the_watch_and_removes_its_socket(watching) -> None:
    root = watching()
    sock = root / ".studykb" / client.SOCKET_NAME
    proc = watching.procs[-1]
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(20) == 0
    deadline = time.monotonic() + 20
    while sock.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not sock.exists()


def test_garbage_on_the_socket_does_not_stop_the_server(served, monkeypatch) -> None:
    root, server = served
    for junk in (b"[1, 2]\n", b"not json\n", b'{"argv": 5}\n', b""):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.connect(str(server.path))
            conn.sendall(junk)
            conn.shutdown(socket.SHUT_WR)
            conn.settimeout(5)
            with contextlib.suppress(OSError):
                conn.recv(1 << 16)
    assert forward(monkeypatch, root, "check", "--json")[0] == 1


@pytest.mark.slow
def test_a_closed_pipe_exits_the_same_with_or_without_a_watch(watching) -> None:
    """``studykb before X | head -1``: the reader leaves early; the exit code and the
    error output are the same whether a watch answers or not."""
    root = watching()
    many = {
        f"notes/s{i:03}.md": f"---\nid: s{i:03}\nrequires: [s{i - 1:03}]\n---\n# S{i}\n"
        for i in range(1, 400)
    }
    for rel, text in many.items():
        (root / rel).write_text(text, encoding="utf-8")
    (root / "notes/s000.md").write_text("# S0\n", encoding="utf-8")
    outcomes = []
    for local_run in ("", "1"):
        env = {k: v for k, v in os.environ.items() if k != "STUDYKB_LOCAL"}
        if local_run:
            env["STUDYKB_LOCAL"] = "1"
        shell = (
            f"{sys.executable} -m studykb --vault {root} before s399 --all | head -1; "
            'echo "exit=${PIPESTATUS[0]}"'
        )
        done = subprocess.run(
            ["bash", "-c", shell], capture_output=True, text=True, env=env, check=False, timeout=120
        )
        outcomes.append((done.stdout.splitlines()[-1], done.stderr))
    assert outcomes[0] == outcomes[1] == ("exit=0", "")
