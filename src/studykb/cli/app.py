"""The ``studykb`` command (the only package that imports click and rich).

Each command parses its flags, calls one function in :mod:`studykb.api` (or a
sibling query module), and formats the result. Commands live in small modules by
area; this one holds the group, the shared options and error handling.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import os
import re
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import click

from studykb import __version__
from studykb.errors import StudyError

if TYPE_CHECKING:
    from studykb.api import KnowledgeBase


class Context:
    """Per-invocation state: the knowledge base, opened and refreshed on first use."""

    #: A knowledge base already open in this process (``studykb watch`` answering).
    warm: KnowledgeBase | None = None

    def __init__(self, vault_dir: str | None) -> None:
        self.vault_dir = vault_dir
        self._kb: KnowledgeBase | None = None

    @classmethod
    @contextlib.contextmanager
    def using(cls, kb: KnowledgeBase) -> Iterator[None]:
        """Commands run in this block use ``kb`` (refreshed as usual, never closed)."""
        cls.warm = kb
        try:
            yield
        finally:
            cls.warm = None

    def kb(self, refresh: bool = True) -> KnowledgeBase:
        if self._kb is None:
            self._kb = self.warm if self.warm is not None else open_kb(self.vault_dir)
            for line, message in self._kb.config.warnings:
                click.echo(safe(f"studykb: studykb.toml:{line}: {message}"), err=True)
            if refresh:
                stats = refresh_with_progress(self._kb)
                if stats.notice:
                    click.echo(safe(f"studykb: {stats.notice}"), err=True)
        return self._kb

    def close(self) -> None:
        if self._kb is not None and self._kb is not self.warm:
            self._kb.close()


def open_kb(vault_dir: str | None) -> KnowledgeBase:
    """The vault to use; without one here, ask on a terminal (else NoVault, exit 2)."""
    from studykb.api import KnowledgeBase
    from studykb.config import NoVault

    try:
        return KnowledgeBase.open(vault_dir)
    except NoVault as exc:
        if not (sys.stdin.isatty() and sys.stderr.isatty()):
            raise
        click.echo(safe(f"studykb: no studykb.toml here or above, and {exc.why}."), err=True)
        if not click.confirm(safe(f"Read {exc.folder} as a vault anyway?"), default=False,
                             err=True):
            raise
        return KnowledgeBase.open(exc.folder)


def refresh_with_progress(vault: Any) -> Any:
    """Refresh, with a progress bar on a terminal when there is much to parse."""
    if not sys.stderr.isatty() or os.environ.get("CI"):
        return vault.refresh()
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    console = Console(stderr=True, no_color=bool(os.environ.get("NO_COLOR")))
    state: dict[str, Any] = {}

    def tick(done: int, total: int) -> None:
        if total < 200:
            return
        if "bar" not in state:
            state["bar"] = Progress(TextColumn("parsing"), BarColumn(), MofNCompleteColumn(),
                                    console=console, transient=True)
            state["bar"].start()
            state["task"] = state["bar"].add_task("parse", total=total)
        state["bar"].update(state["task"], completed=done)

    try:
        return vault.refresh(progress=tick)
    finally:
        if "bar" in state:
            state["bar"].stop()


#: What is never printed raw on a terminal: C0 and C1 control characters (escape
#: sequences, bells, carriage returns) other than tab and newline, and the bidirectional
#: overrides that reorder what a line seems to say.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f"
                     "\u202a-\u202e\u2066-\u2069]")


def _picture(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # the Unicode control pictures: ␛ for ESC
    return "\ufffd"


def safe(text: str) -> str:
    """``text`` with control characters made visible, one character for one (so offsets
    into it stay right): what every command prints from files, titles and snippets."""
    return _UNSAFE.sub(_picture, text)


class _SafeConsole:
    """A rich console whose printed strings go through :func:`safe` first."""

    def __init__(self, console: Any) -> None:
        self._console = console

    def print(self, *objects: Any, **kwargs: Any) -> None:
        self._console.print(*(safe(o) if isinstance(o, str) else o for o in objects),
                            **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._console, name)


def console(err: bool = False):  # type: ignore[no-untyped-def]
    """A rich console that honours NO_COLOR, prints plain text when piped, and never
    prints control characters from the vault (see :func:`safe`)."""
    from rich.console import Console

    return _SafeConsole(Console(stderr=err, no_color=bool(os.environ.get("NO_COLOR")),
                                highlight=False, soft_wrap=True))


def emit_json(data: Any) -> None:
    """One JSON object on standard output: indented on a terminal, compact (fast) when piped."""
    indent = 2 if sys.stdout.isatty() else None
    click.echo(json.dumps(data, ensure_ascii=False, indent=indent))


def json_option(func: Callable) -> Callable:
    return click.option("--json", "as_json", is_flag=True,
                        help="Print one JSON object on standard output.")(func)


def pass_kb(func: Callable[..., Any]) -> Callable[..., Any]:
    """Give the command the refreshed knowledge base as its first argument."""

    @click.pass_obj
    @functools.wraps(func)
    def wrapper(obj: Context, *args: Any, **kwargs: Any) -> Any:
        return func(obj.kb(), *args, **kwargs)

    return wrapper


class Group(click.Group):
    """Turns StudyError into a message and the contract's exit code, once, at the edge."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except StudyError as exc:
            click.echo(safe(f"studykb: {exc.message}"), err=True)
            if exc.hint:
                click.echo(safe(exc.hint), err=True)
            ctx.exit(exc.exit_code)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except KeyboardInterrupt:
            click.echo("studykb: interrupted", err=True)
            ctx.exit(130)
        except BrokenPipeError:
            sys.stderr.close()
            ctx.exit(0)
        except OSError as exc:  # the disk, not studykb: say what failed, keep the state
            if os.environ.get("STUDYKB_DEBUG"):
                raise
            if exc.errno == errno.ENOSPC:
                click.echo("studykb: disk full; nothing was changed (the previous state is "
                           "kept).", err=True)
            else:
                where = f" {exc.filename}" if exc.filename else ""
                click.echo(safe(f"studykb: cannot use{where}: {exc.strerror or exc}"), err=True)
            ctx.exit(1)
        except Exception as exc:
            if os.environ.get("STUDYKB_DEBUG"):
                raise
            click.echo(safe(f"studykb: internal error: {type(exc).__name__}: {exc}"), err=True)
            click.echo("Run again with STUDYKB_DEBUG=1 for the traceback, and please report it.",
                       err=True)
            ctx.exit(70)
        finally:
            if isinstance(ctx.obj, Context):
                ctx.obj.close()


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--vault", "vault_dir", type=click.Path(file_okay=False),
              help="Vault folder (default: $STUDYKB_VAULT, else the nearest folder with "
                   "studykb.toml, else the current folder).")
@click.version_option(__version__, prog_name="studykb")
@click.pass_context
def cli(ctx: click.Context, vault_dir: str | None) -> None:
    """studykb: a cross-referenced knowledge base of study notes on AI infrastructure.

    \b
    Example:
      studykb before FSDP2          what to read before FSDP2
      studykb check                 every problem in the vault
      studykb --vault ~/notes show ddp
    """
    ctx.obj = Context(vault_dir)


def run() -> None:
    """Parse the command line and run the command (exits)."""
    prepare()
    check_arguments(sys.argv[1:])
    cli(prog_name="studykb")


def check_arguments(argv: list[str]) -> None:
    """Arguments that are not valid UTF-8 (the OS hands them over as surrogate escapes)
    are bad usage: say which, exit 2."""
    for n, arg in enumerate(argv, 1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            shown = os.fsencode(arg).decode("utf-8", "backslashreplace")
            click.echo(safe(f"studykb: argument {n} ({shown}) is not valid UTF-8."), err=True)
            raise SystemExit(2) from None


def prepare() -> None:
    """Register every command (their modules register themselves on import)."""
    from studykb.cli import core, editor, plans, related, search  # noqa: F401
    from studykb.cli import web  # noqa: F401
