"""What ``studykb watch`` runs for other ``studykb`` processes (see
:mod:`studykb.editor.serve`): which command lines it may answer, and running one with
the watch's open vault, its output captured."""

from __future__ import annotations

import contextlib
import io
from typing import Any

import click

from studykb.cli.app import cli, prepare, safe
from studykb.editor.serve import CommandServer
from studykb.launch import LOCAL_OPTIONS, READING, Launch, all_text, split_argv


def servable(argv: list[str]) -> bool:
    """Whether a server may answer ``argv`` (the client checks the same first).

    Beyond the client's quick look, the command line is parsed as the command would
    parse it: any option or argument naming a file or folder, however it is spelled
    (``-oFILE``, ``--output=FILE``), makes it run in the caller's process, where a
    relative path means what the caller meant.
    """
    _vault, command = split_argv(argv)
    if command not in READING or any(a.split("=", 1)[0] in LOCAL_OPTIONS for a in argv):
        return False
    return all_text(argv) and not _names_paths(argv)


def _names_paths(argv: list[str]) -> bool:
    """Whether ``argv`` gives a value to any parameter of type File or Path."""
    prepare()
    _vault, name = split_argv(argv)
    if name is None:
        return True
    rest = argv[argv.index(name) + 1 :]
    try:
        with click.Context(cli, info_name="studykb") as group_ctx:
            cmd = cli.get_command(group_ctx, name)
            if cmd is None:
                return True
            ctx = cmd.make_context(name, list(rest), parent=group_ctx, resilient_parsing=True)
    except (click.ClickException, click.exceptions.Exit):
        return True  # let the command itself say what is wrong, here
    for param in cmd.params:
        if (
            isinstance(param.type, (click.File, click.Path))
            and param.name
            and ctx.get_parameter_source(param.name)
            not in (click.core.ParameterSource.DEFAULT, None)
        ):
            return True
    return False


def run_command(vault: Any, argv: list[str]) -> tuple[int, str, str]:
    """Run the command line ``argv`` with ``vault``; (exit code, stdout, stderr)."""
    prepare()
    out, err = io.StringIO(), io.StringIO()
    code = 0
    launch = Launch(warm=vault)  # commands run here use the watch's session, never closed
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rv = cli.main(args=list(argv), prog_name="studykb", standalone_mode=False, obj=launch)
            code = rv if isinstance(rv, int) else 0
        except click.ClickException as exc:
            exc.show()
            code = exc.exit_code
        except click.exceptions.Abort:
            click.echo("Aborted!", err=True)
            code = 1
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except Exception as exc:  # the watch must outlive any one command
            click.echo(safe(f"studykb: internal error: {type(exc).__name__}: {exc}"), err=True)
            code = 70
    return code, out.getvalue(), err.getvalue()


def command_server(state_dir: Any, kb: Any, lock: Any) -> Any:
    """The server ``studykb watch`` runs: it answers what :func:`servable` allows with
    :func:`run_command` on the session ``kb()`` returns (the watch's, reopened as it
    goes; a vault is wrapped in a session)."""
    # deferred: the API loads frontmatter, msgpack, yaml for it
    from studykb.api import Session

    return CommandServer(
        state_dir, servable, lambda argv: run_command(Session.of(kb()), argv), lock
    )
