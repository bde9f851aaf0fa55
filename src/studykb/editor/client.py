"""Handing a command to a running ``studykb watch``, from the ``studykb`` entry point.

A fresh ``studykb`` process spends most of its time starting: the interpreter, click,
markdown-it, whoosh, the Chinese segmenter's dictionary, the vault refresh. While
``studykb watch`` runs, all of that is already loaded in its process, and it answers
commands on a Unix socket in the state folder (``.studykb/serve.sock``, readable by
the owner only). This module, which imports nothing heavy, sends it the command line
and prints what comes back; the answer is the one the command would have given here,
after the same refresh.

Only commands that read are sent (``search``, ``show``, ``check``, ``before`` ...),
only when standard output is not a terminal (a terminal gets colours and a width this
process knows best), and never with ``--output``, ``--write`` or ``--help``. When
there is no server, it is another studykb version, or anything goes wrong on the way,
the command runs here as usual. ``STUDYKB_LOCAL=1`` always runs it here.
"""

from __future__ import annotations

import json
import os
import sys

from studykb import __version__

#: Commands a server may answer: they read the vault and write nothing of the user's.
FORWARDED = frozenset(
    {
        "search",
        "show",
        "backlinks",
        "check",
        "build",
        "before",
        "next",
        "after",
        "status",
        "related",
        "topics",
        "topic",
        "ask",
        "graph",
        "sidebar",
    }
)
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
    vault_dir, command = split_argv(argv)
    if command not in FORWARDED or any(a.split("=", 1)[0] in LOCAL_OPTIONS for a in argv):
        return None
    if not all_text(argv):
        return None  # run here, where it is bad usage with a message (exit 2)
    try:
        import socket

        from studykb.config import STATE_DIR, find_vault

        path = find_vault(vault_dir) / STATE_DIR / SOCKET_NAME
        if not path.exists() or not hasattr(socket, "AF_UNIX"):
            return None
        request = json.dumps({"protocol": PROTOCOL, "version": __version__, "argv": argv})
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(CONNECT_TIMEOUT)
            conn.connect(str(path))
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
            sys.stdout.write(out)
            sys.stdout.flush()
    except BrokenPipeError:  # `| head`: the reader left, as a local run would find it
        closed_pipe()
        return 0
    if err:
        sys.stderr.write(err)
        sys.stderr.flush()
    return code


def closed_pipe() -> None:
    """Standard output's reader went away: send what is left nowhere (so the exit's own
    flush cannot fail) and say nothing, as ``cat`` and ``git`` do."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
