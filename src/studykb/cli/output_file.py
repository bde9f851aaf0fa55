"""``-o FILE``: what a command writes there is put in place whole, when it has succeeded.

A command may write its output in many pieces (the sidebar of every document, a block
of documents at a time, so that it never holds the whole text): the pieces go to a
temporary file beside the target (``.NAME.studykb-PID-XXXXXXXX.tmp``), which replaces
the target in one step (``os.replace``) once the command has ended without an error.
A reader (a site generator watching its data folder) never sees half a file, and a
command that fails leaves the old file as it was. Nothing is created before the first
write, as with click's lazy files.
"""

from __future__ import annotations

import contextlib
import os
import stat
from types import TracebackType
from typing import IO, Any

import click


class OutputFile(click.File):
    """``-o FILE``: written as UTF-8, its missing folders made first (``-`` is stdout)."""

    def __init__(self) -> None:
        super().__init__("w", encoding="utf-8")

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str) or value == "-":
            return super().convert(value, param, ctx)
        folder = os.path.dirname(os.path.abspath(os.path.expanduser(value)))
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as exc:
            self.fail(f"cannot make the folder {folder}: {exc.strerror}", param, ctx)
        whole = WholeFile(os.path.expanduser(value))
        return ctx.with_resource(whole) if ctx is not None else whole


class WholeFile:
    """A text file written under a temporary name, put in place by :meth:`commit`
    (at the end of the command: the ``with`` block click's context holds it in), or
    dropped by :meth:`discard` when the command failed."""

    def __init__(self, path: str) -> None:
        self.name = path
        self._tmp: str | None = None
        self._file: IO[str] | None = None

    def write(self, text: str) -> int:
        file = self._file or self._open()
        return file.write(text)

    def flush(self) -> None:
        if self._file is not None:
            self._file.flush()

    def _open(self) -> IO[str]:
        target = os.path.realpath(self.name)  # a link: its target is written, as open() did
        folder, name = os.path.split(target)
        tmp = os.path.join(folder, f".{name}.studykb-{os.getpid()}-{os.urandom(4).hex()}.tmp")
        try:
            found = os.stat(target).st_mode
        except OSError:
            found = stat.S_IFREG | (0o666 & ~_umask())
        if not stat.S_ISREG(found):  # /dev/stdout, a pipe: written as it comes
            self._file = open(target, "w", encoding="utf-8")  # noqa: SIM115 - closed by commit/discard
            return self._file
        mode = stat.S_IMODE(found)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.fchmod(fd, mode)
        self._tmp = tmp
        self._file = open(fd, "w", encoding="utf-8")  # noqa: SIM115 - closed by commit/discard
        return self._file

    def commit(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        if self._tmp is not None:
            os.replace(self._tmp, os.path.realpath(self.name))
            self._tmp = None

    def discard(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        if self._tmp is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._tmp)
            self._tmp = None

    def __enter__(self) -> WholeFile:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None or _succeeded(exc):
            self.commit()
        else:
            self.discard()


def _succeeded(exc: BaseException | None) -> bool:
    """An exit with status 0 (``SystemExit(0)``, click's ``Exit(0)``) is a success."""
    code = getattr(exc, "code", getattr(exc, "exit_code", None))
    return isinstance(exc, (SystemExit, click.exceptions.Exit)) and code in (0, None)


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current
