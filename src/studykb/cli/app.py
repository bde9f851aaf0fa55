"""The ``studykb`` command (the only package that imports click and rich).

Each command parses its flags, calls one function in :mod:`studykb.session` (or a
sibling query module), and formats the result. Commands live in small modules by
area; this one holds the group, the shared options and error handling.
"""

from __future__ import annotations

import contextlib
import difflib
import errno
import functools
import importlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from studykb import __version__
from studykb.errors import StudyError
from studykb.launch import COMMANDS, Launch, closed_pipe
from studykb.outputs.terminal import safe as safe  # every command module takes it from here

if TYPE_CHECKING:
    from studykb.api import Session
    from studykb.vault import Ahead


class Context:
    """Per-invocation state: the knowledge base, opened and refreshed on first use."""

    def __init__(self, vault_dir: str | None, launch: Launch | None = None) -> None:
        self.vault_dir = vault_dir
        self.launch = launch or Launch()
        self._kb: Session | None = None
        self._unconfigured: tuple[Path, str] | None = None
        """The "no studykb.toml here" notice, said when the command is done (see close)."""

    @property
    def warm(self) -> Session | None:
        """A knowledge base already open in this process (``studykb watch`` answering)."""
        return self.launch.warm

    def kb(
        self,
        refresh: bool = True,
        meanwhile: Callable[[Session], object] | None = None,
    ) -> Session:
        """The knowledge base, opened and (``refresh``) brought up to date on first use;
        ``meanwhile(kb)``: the command's next work (loading what it needs), done while
        the refresh runs beside it (see :meth:`Session.refresh_ahead`); when it gives an
        iterator, its steps are taken while the refresh runs, and no more once it is
        done (what a command may not need is loaded only while there is time for it)."""
        if self._kb is not None:
            return self._kb
        kb, stats = self._start(refresh, meanwhile)
        if stats is not None and stats.notice:
            click.echo(safe(f"studykb: {stats.notice}"), err=True)
        if stats is not None and stats.unconfigured:
            self._unconfigured = (kb.config.path, stats.unconfigured)
        return kb

    def refreshed(self, meanwhile: Callable[[Session], object] | None = None) -> Any:
        """Open the knowledge base and bring it up to date; what the refresh did, for a
        command that shows it (``build``). Then :meth:`kb` gives the knowledge base."""
        _kb, stats = self._start(True, meanwhile)
        return stats

    def _start(
        self, refresh: bool, meanwhile: Callable[[Session], object] | None
    ) -> tuple[Session, Any]:
        """Open (taking the refresh started before click loaded, if any) and refresh."""
        kb, ahead = self._open()
        self._kb = kb
        for line, message in kb.config.warnings:
            click.echo(safe(f"studykb: studykb.toml:{line}: {message}"), err=True)
        recovered = kb.take_recovered()  # a move a killed process left half done
        if recovered:
            click.echo(safe(f"studykb: {recovered}"), err=True)
        if not refresh:
            if ahead is not None:  # started for a command that reads the state as it is
                ahead.result()
            return kb, None
        if ahead is None and meanwhile is not None and self.warm is None:
            ahead = kb.refresh_ahead()
        if ahead is not None and meanwhile is not None:
            steps = meanwhile(kb)
            if isinstance(steps, Iterator):  # steps, each taken only while it refreshes
                for _step in steps:
                    if ahead.ready():
                        break
        return kb, refresh_with_progress(kb, ahead)

    def _open(self) -> tuple[Session, Ahead | None]:
        """The knowledge base to use, and the refresh already started for it."""
        early = self.launch.take_early()
        if early is not None and (self.warm is not None or early.vault_dir != self.vault_dir):
            early.discard()
            early = None
        if self.warm is not None:
            return self.warm, None
        if early is not None:
            return early.kb, early.ahead
        return open_kb(self.vault_dir), None

    def close(self) -> None:
        if self._kb is not None and self._kb is not self.warm:
            self._kb.close()
        if self._unconfigured is not None:  # still true once the command is done?
            config, notice = self._unconfigured
            self._unconfigured = None
            if not config.is_file():
                click.echo(safe(f"studykb: {notice}"), err=True)

    def rebuild_if_damaged(self, exc: BaseException) -> str | None:
        """When ``exc`` proves the state this command opened damaged: delete it and say
        so (the command then runs again, building it anew). Never for a watch's open
        state, which the watch looks after itself."""
        if self._kb is None or self._kb is self.warm:
            return None
        kb, self._kb = self._kb, None
        return kb.rebuild_if_damaged(exc)


def open_kb(vault_dir: str | None) -> Session:
    """The vault to use; without one here, ask on a terminal (else NoVault, exit 2)."""
    # deferred: the API loads frontmatter, msgpack, yaml for it
    from studykb.api import NoVault, Session

    try:
        return Session.open(vault_dir)
    except NoVault as exc:
        if not (sys.stdin.isatty() and sys.stderr.isatty()):
            raise
        click.echo(safe(f"studykb: no studykb.toml here or above, and {exc.why}."), err=True)
        if not click.confirm(
            safe(f"Read {exc.folder} as a vault anyway?"), default=False, err=True
        ):
            raise
        return Session.open(exc.folder)


def refresh_with_progress(kb: Session, ahead: Ahead | None = None) -> Any:
    """Refresh (or take the refresh ``ahead`` did), showing on a terminal what a long
    build is doing (see :class:`studykb.cli.phases.Phases`)."""
    from studykb.cli.phases import Phases  # a module of its own, loaded only when refreshing

    phases = Phases.on_terminal()
    if phases is None:
        return kb.refresh(ahead=ahead)
    kb.phase = phases.phase  # later long steps of this command show too
    try:
        return kb.refresh(progress=phases.tick, ahead=ahead)
    finally:
        phases.stop()


def counted(n: int, noun: str) -> str:
    """``1 error``, ``2 errors``, ``0 problems``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def tally(documents: int, problems: int, errors: int) -> str:
    """``232 documents, 1 problem (1 error)``: the summary build and watch print."""
    return (
        f"{counted(documents, 'document')}, {counted(problems, 'problem')} "
        f"({counted(errors, 'error')})"
    )


def safe_line(text: str) -> str:
    """:func:`safe`, with newlines and tabs shown too (``new␊line.md``): for what must stay
    on one line, a file name, a title, a snippet."""
    return safe(text).replace("\n", "\u240a").replace("\t", "\u2409")


class _SafeConsole:
    """A rich console whose printed strings go through :func:`safe` first."""

    def __init__(self, console: Any) -> None:
        self._console = console

    def print(self, *objects: Any, **kwargs: Any) -> None:
        self._console.print(*(safe(o) if isinstance(o, str) else o for o in objects), **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._console, name)


def console(err: bool = False):  # type: ignore[no-untyped-def]
    """A rich console that honours NO_COLOR, prints plain text when piped, and never
    prints control characters from the vault (see :func:`safe`)."""
    # deferred: rich loads in ~0.1 s; only terminal output needs it
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            # rich would exit 1; the one handler (Group.invoke) exits 0 for every command,
            # whether it printed line by line here or a watch answered it (studykb.launch)
            raise BrokenPipeError

    return _SafeConsole(
        _Console(
            stderr=err, no_color=bool(os.environ.get("NO_COLOR")), highlight=False, soft_wrap=True
        )
    )


def emit_json(data: Any) -> None:
    """One JSON object on standard output: indented on a terminal, compact (fast) when piped."""
    indent = 2 if sys.stdout.isatty() else None
    click.echo(json.dumps(data, ensure_ascii=False, indent=indent))


def json_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--json", "as_json", is_flag=True, help="Print one JSON object on standard output."
    )(func)


def pass_kb(func: Callable[..., Any]) -> Callable[..., Any]:
    """Give the command the refreshed knowledge base as its first argument."""

    @click.pass_obj
    @functools.wraps(func)
    def wrapper(obj: Context, *args: Any, **kwargs: Any) -> Any:
        return func(obj.kb(), *args, **kwargs)

    return wrapper


class Group(click.Group):
    """Turns every failure into one message in one style (``studykb: ...`` on standard
    error) and the contract's exit code, once, at the edge; with ``--json``, standard
    output also holds one JSON object ``{"error", "suggestions"}``."""

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.ClickException as exc:  # the group's own options (--vault)
            if type(exc).__name__ == "NoArgsIsHelpError":
                raise  # `studykb` alone: click prints the help
            _usage_failed(exc, None, "--json" in args)
            raise click.exceptions.Exit(exc.exit_code) from None

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(COMMANDS) | set(self.commands))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            load_commands(COMMANDS[cmd_name].module)
        return super().get_command(ctx, cmd_name)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """click's, with a "did you mean" for a mistyped command (``studykb serch``)."""
        name = args[0] if args else ""
        wrong = name and not name.startswith("-") and not ctx.resilient_parsing
        if wrong and self.get_command(ctx, name) is None:
            close = difflib.get_close_matches(name, self.list_commands(ctx), n=1)
            if close:
                exc = click.UsageError(
                    f"No such command {name!r} (did you mean {close[0]!r}?).", ctx
                )
                exc.suggestions = close  # type: ignore[attr-defined]  # for --json
                raise exc
        return super().resolve_command(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        raw = [*getattr(ctx, "_protected_args", []), *ctx.args]
        as_json = "--json" in raw[1 : raw.index("--")] if "--" in raw else "--json" in raw[1:]
        try:
            return self._invoke_rebuilding(ctx)
        except StudyError as exc:
            _fail(exc.message, exc.hint, as_json, getattr(exc, "suggestions", None))
            ctx.exit(exc.exit_code)
        except (click.exceptions.Exit, click.exceptions.Abort):
            raise
        except click.ClickException as exc:
            _usage_failed(exc, ctx, as_json)
            ctx.exit(exc.exit_code)
        except KeyboardInterrupt:
            _fail("interrupted", None, as_json)
            ctx.exit(130)
        except BrokenPipeError:
            _closed_pipe()
            ctx.exit(0)
        except OSError as exc:  # the disk, not studykb: say what failed, keep the state
            if os.environ.get("STUDYKB_DEBUG"):
                raise
            if exc.errno == errno.EPIPE:
                _closed_pipe()
                ctx.exit(0)
            if exc.errno == errno.ENOSPC:
                _fail("disk full; nothing was changed (the previous state is kept).", None, as_json)
            else:
                where = f" {exc.filename}" if exc.filename else ""
                _fail(f"cannot use{where}: {exc.strerror or exc}", None, as_json)
            ctx.exit(1)
        except Exception as exc:
            if os.environ.get("STUDYKB_DEBUG"):
                raise
            _fail(
                f"internal error: {type(exc).__name__}: {exc}",
                "Run again with STUDYKB_DEBUG=1 for the traceback, and please report it.",
                as_json,
            )
            ctx.exit(70)
        finally:
            if isinstance(ctx.obj, Context):
                ctx.obj.close()

    def _invoke_rebuilding(self, ctx: click.Context) -> Any:
        """Run the command; when it meets damage in the state (SQLite finds a damaged
        page only when it reads it), delete the state, say so once and run the command
        again on a state built anew. The state is a cache of the notes: nothing is lost
        but time, and no one has to delete ``.studykb/`` by hand."""
        again = (list(getattr(ctx, "_protected_args", [])), list(ctx.args))
        try:
            return super().invoke(ctx)
        except Exception as exc:
            notice = ctx.obj.rebuild_if_damaged(exc) if isinstance(ctx.obj, Context) else None
            if notice is None:
                raise
        click.echo(safe(f"studykb: {notice}"), err=True)
        ctx._protected_args, ctx.args = again  # noqa: SLF001 - click consumed them
        return super().invoke(ctx)


def _fail(
    message: str, hint: str | None, as_json: bool, suggestions: list[str] | None = None
) -> None:
    """Say what failed: ``studykb: message`` (and the hint) on standard error; with
    ``--json``, also one JSON object on standard output."""
    click.echo(safe(f"studykb: {message}"), err=True)
    if hint:
        click.echo(safe(hint), err=True)
    if as_json:
        data: dict[str, Any] = {"error": message, "suggestions": list(suggestions or [])}
        if hint:
            data["hint"] = hint
        with contextlib.suppress(OSError):
            emit_json(data)


def _usage_failed(exc: click.ClickException, ctx: click.Context | None, as_json: bool) -> None:
    """A click error (bad usage) in the same style as every other error."""
    hint = None
    if isinstance(exc, click.UsageError):
        where = exc.ctx or ctx
        if where is not None:
            hint = f"Try '{where.command_path} --help' for help."
    _fail(exc.format_message(), hint, as_json, getattr(exc, "suggestions", None))


def _closed_pipe() -> None:
    """The reader went away (``| head``): stop quietly, exit 0, with or without a watch."""

    closed_pipe()


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--vault",
    "vault_dir",
    type=click.Path(file_okay=False),
    help="Vault folder (default: $STUDYKB_VAULT, else the nearest folder with "
    "studykb.toml, else the current folder).",
)
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
    ctx.obj = Context(vault_dir, ctx.obj if isinstance(ctx.obj, Launch) else None)


def run(launch: Launch) -> None:
    """Parse the command line and run the command (exits), with what the start-up seams
    prepared (:mod:`studykb.launch`)."""
    check_arguments(sys.argv[1:])
    cli(prog_name="studykb", obj=launch)


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
    """Register every command (see :data:`studykb.launch.COMMANDS`)."""
    for module in sorted({command.module for command in COMMANDS.values()}):
        load_commands(module)


def load_commands(module: str) -> None:
    """Import ``studykb.cli.MODULE`` (its commands register themselves on import) and
    give every argument of theirs that names a document the shell completion of ids."""
    importlib.import_module(f"studykb.cli.{module}")
    for name, command in cli.commands.items():
        if name in ("search", "ask"):
            continue  # a search query, a question: not a document
        for param in command.params:
            if (
                isinstance(param, click.Argument)
                and param.name == "query"
                and param._custom_shell_complete is None
            ):
                # what click.Argument(shell_complete=...) sets; the commands are others'
                param._custom_shell_complete = complete_ids


def complete_ids(ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[Any]:
    """Shell completion of document ids, read from the state as it is (no refresh, and
    nothing at all before the first build)."""
    # deferred: click loads only in the command line
    from click.shell_completion import CompletionItem

    try:
        # deferred: the API loads frontmatter, msgpack, yaml for it
        from studykb.api import Session

        ids = Session.stored_ids(ctx.find_root().params.get("vault_dir"))
    except Exception:  # noqa: BLE001 - completion never prints an error into a prompt
        return []
    low = incomplete.casefold()
    return [CompletionItem(i) for i in sorted(ids) if i.startswith(low)][:500]
