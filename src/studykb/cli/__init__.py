"""The ``studykb`` command (the only package that imports click and rich).

Each command parses its flags, calls one function in :mod:`studykb.queries` (or a
sibling query module), and formats the result. Commands live in small modules by
area; this one holds the group, the shared options and error handling.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any

import click

from .. import __version__
from ..errors import StudyError


class Context:
    """Per-invocation state: the vault, opened and refreshed on first use."""

    #: A vault already open in this process (``studykb watch`` answering a command).
    warm: Any = None

    def __init__(self, vault_dir: str | None) -> None:
        self.vault_dir = vault_dir
        self._vault: Any = None

    @classmethod
    @contextlib.contextmanager
    def using(cls, vault: Any) -> Iterator[None]:
        """Commands run in this block use ``vault`` (refreshed as usual, never closed)."""
        cls.warm = vault
        try:
            yield
        finally:
            cls.warm = None

    def vault(self, refresh: bool = True) -> Any:
        if self._vault is None:
            from ..vault import Vault

            self._vault = self.warm if self.warm is not None else Vault.open(self.vault_dir)
            if refresh:
                stats = refresh_with_progress(self._vault)
                if stats.notice:
                    click.echo(f"studykb: {stats.notice}", err=True)
        return self._vault

    def close(self) -> None:
        if self._vault is not None and self._vault is not self.warm:
            self._vault.close()


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


def console(err: bool = False):  # type: ignore[no-untyped-def]
    """A rich console that honours NO_COLOR and prints plain text when piped."""
    from rich.console import Console

    return Console(stderr=err, no_color=bool(os.environ.get("NO_COLOR")), highlight=False,
                   soft_wrap=True)


def emit_json(data: Any) -> None:
    """One JSON object on standard output: indented on a terminal, compact (fast) when piped."""
    indent = 2 if sys.stdout.isatty() else None
    click.echo(json.dumps(data, ensure_ascii=False, indent=indent))


def json_option(func: Callable) -> Callable:
    return click.option("--json", "as_json", is_flag=True,
                        help="Print one JSON object on standard output.")(func)


def pass_vault(func: Callable) -> Callable:
    """Give the command a refreshed vault as its first argument."""

    @click.pass_obj
    @functools.wraps(func)
    def wrapper(obj: Context, *args: Any, **kwargs: Any) -> Any:
        return func(obj.vault(), *args, **kwargs)

    return wrapper


class Group(click.Group):
    """Turns StudyError into a message and the contract's exit code, once, at the edge."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except StudyError as exc:
            click.echo(f"studykb: {exc.message}", err=True)
            if exc.hint:
                click.echo(exc.hint, err=True)
            ctx.exit(exc.exit_code)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except KeyboardInterrupt:
            click.echo("studykb: interrupted", err=True)
            ctx.exit(130)
        except BrokenPipeError:
            sys.stderr.close()
            ctx.exit(0)
        except Exception as exc:
            if os.environ.get("STUDYKB_DEBUG") or os.environ.get("PYTEST_CURRENT_TEST"):
                raise
            click.echo(f"studykb: internal error: {type(exc).__name__}: {exc}", err=True)
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


def main() -> None:
    prepare()
    cli(prog_name="studykb")


def prepare() -> None:
    """Register every command (their modules register themselves on import)."""
    from . import core  # noqa: F401

    _register_optional()


def _register_optional() -> None:
    """Command modules of later capabilities; each registers itself on import."""
    import importlib

    for name in ("search", "plans", "related", "editor"):
        try:
            importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
